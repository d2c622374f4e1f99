"""``make test-loaded``: a command run beside CPU hogs, the way a busy CI machine runs the suite.

Two processes spin on the CPU (one per core of the supported 2-core machine) for as long as the
command runs, and stop with it however it ends. Their count and the command come from the
command line: ``python -m tests.services.hogs [--hogs N] -- make test``. The exit status is the
command's, so the target fails exactly when the suite fails.
"""

from __future__ import annotations

import argparse
import multiprocessing
import subprocess
import sys
import time


def _spin() -> None:
    """Burn CPU until killed: a loop that allocates nothing and never sleeps."""
    n = 0
    while True:
        n = (n * 1103515245 + 12345) & 0x7FFFFFFF


def run_beside_hogs(command: list[str], hogs: int) -> int:
    spinners = [multiprocessing.Process(target=_spin, daemon=True, name=f"hog-{i}") for i in range(hogs)]
    for spinner in spinners:
        spinner.start()
    started = time.monotonic()
    try:
        return subprocess.call(command)
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.join(5)
        minutes = (time.monotonic() - started) / 60
        print(f"test-loaded: {' '.join(command)} beside {hogs} CPU hogs took {minutes:.1f} min", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hogs", type=int, default=2, help="spinning processes beside the command [2]")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command after --, e.g. -- make test")
    sys.exit(run_beside_hogs(command, max(0, args.hogs)))


if __name__ == "__main__":
    main()
