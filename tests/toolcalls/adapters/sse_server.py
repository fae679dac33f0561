"""A local provider for the end-to-end tests: an HTTP server on 127.0.0.1 that streams SSE.

Each test gives the server a script: for each request (in order) a check of the request body
and the frames to stream back. A failed check answers 400 with the problem and is recorded, so
the test can assert that every request carried what it should. Nothing leaves the machine.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Check = Callable[[str, dict[str, Any]], None]  # (path, body) -> None, raises AssertionError


@dataclass
class Turn:
    """One request the server expects: how to check it, and the SSE frames to answer with.

    A frame is ``(event name or None, JSON payload or raw text)``."""

    check: Check
    frames: list[tuple[str | None, Any]]


@dataclass
class Script:
    turns: list[Turn]
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def next(self, path: str, body: dict[str, Any]) -> Turn | str:
        number = len(self.requests)
        self.requests.append((path, body))
        if number >= len(self.turns):
            return f"unexpected request #{number + 1} to {path}"
        turn = self.turns[number]
        try:
            turn.check(path, body)
        except AssertionError as problem:
            return f"request #{number + 1} to {path}: {problem}"
        return turn


def _handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            turn = script.next(self.path, body)
            if isinstance(turn, str):
                script.failures.append(turn)
                payload = json.dumps({"error": {"type": "invalid_request_error", "message": turn}})
                data = payload.encode()
                self.send_response(400)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            for event, payload in turn.frames:
                text = payload if isinstance(payload, str) else json.dumps(payload)
                frame = ((f"event: {event}\n" if event else "") + f"data: {text}\n\n").encode()
                # Two writes, cut mid-frame (inside a multi-byte character when there is one),
                # as a network may deliver it.
                cut = next((i for i, byte in enumerate(frame) if byte >= 0xC0), len(frame) // 2)
                for piece in (frame[: cut + 1], frame[cut + 1 :]):
                    self.wfile.write(piece)
                    self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep the test output clean

    return Handler


@contextmanager
def serve(script: Script) -> Iterator[str]:
    """Serve ``script`` on 127.0.0.1 (a free port); yield the base URL; stop on exit."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(script))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
