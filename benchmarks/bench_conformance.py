"""Reading long answer lines from a ``--cmd`` implementation, against ``json.loads`` of the
same text, measured in one run.

A program speaking the conformance protocol answers ``list`` with one line of 1 MB to 32 MB
(``--quick``: 1 MB to 4 MB), written in 64 KiB pieces. The time to read and decode it, per
MB, must stay flat as the line grows (reading is linear; it was quadratic, 24 s at 32 MB), and
within a small factor of ``json.loads`` alone, the reference.

Run: ``python benchmarks/bench_conformance.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from toolcalls.conformance import SubprocessImplementation

SERVER = """
import sys
size = int(sys.argv[1])
line = ('{"ok": true, "value": [{"id": "' + "x" * size + '"}]}\\n').encode()
for _ in sys.stdin:
    for start in range(0, len(line), 1 << 16):
        sys.stdout.buffer.write(line[start : start + (1 << 16)])
        sys.stdout.buffer.flush()
"""


def measure(server: Path, size: int, repeats: int) -> tuple[float, float]:
    """Median seconds to read one ``size``-byte answer, and to ``json.loads`` it alone."""
    implementation = SubprocessImplementation(f"{sys.executable} {server} {size}", timeout=300)
    try:
        implementation.list()  # the program has started (not timed)
        reads = []
        for _ in range(repeats):
            started = time.perf_counter()
            value = implementation.list()
            reads.append(time.perf_counter() - started)
        assert len(value[0]["id"]) == size
    finally:
        implementation.close()
    text = json.dumps({"ok": True, "value": value})
    loads = []
    for _ in range(repeats):
        started = time.perf_counter()
        json.loads(text)
        loads.append(time.perf_counter() - started)
    return statistics.median(reads), statistics.median(loads)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: 1 MB to 4 MB")
    args = parser.parse_args()
    sizes = [1, 4] if args.quick else [1, 4, 16, 32]
    repeats = 1 if args.quick else 3
    with tempfile.TemporaryDirectory() as folder:
        server = Path(folder) / "server.py"
        server.write_text(SERVER, encoding="utf-8")
        print("answer line    read (s)   json.loads (s)   read / loads   read per MB (ms)")
        per_mb = []
        for mb in sizes:
            read, loads = measure(server, mb << 20, repeats)
            per_mb.append(read / mb)
            print(
                f"{mb:>8} MB  {read:>10.3f}  {loads:>15.3f}  {read / loads:>13.1f}"
                f"  {1000 * read / mb:>17.1f}"
            )
    growth = per_mb[-1] / per_mb[0]
    print(
        f"read per MB at {sizes[-1]} MB / at {sizes[0]} MB: {growth:.2f} "
        "(target: at most 2, i.e. linear; quadratic reading would be about "
        f"{sizes[-1] / sizes[0]:.0f})"
    )


if __name__ == "__main__":
    main()
