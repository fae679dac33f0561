"""Example tools for ``toolcalls replay --tools examples/tools.py:TOOLS``.

Deterministic stand-ins (nothing leaves the machine): the replay runs them on the calls the
stream makes, as a session would run real ones.
"""

from __future__ import annotations

import asyncio


def get_weather(city: str, unit: str = "celsius") -> dict[str, object]:
    """A made-up forecast for ``city``."""
    return {"city": city, "sky": "sunny", "temperature": 21 if unit == "celsius" else 70}


async def get_time() -> str:
    """A fixed clock, so the example's output never changes."""
    await asyncio.sleep(0)
    return "12:00 UTC"


def web_search(query: str, limit: int = 2) -> list[str]:
    """Made-up search hits for ``query``."""
    return [f"{query} result {n}" for n in range(1, limit + 1)]


def write_file(path: str, content: str) -> str:
    """Never writes anything: the example's truncated write_file call must not run at all."""
    raise RuntimeError(f"the example never writes files (asked to write {path})")


TOOLS = {
    "get_weather": get_weather,
    "get_time": get_time,
    "web_search": web_search,
    "write_file": write_file,
}
