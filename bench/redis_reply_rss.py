"""Memory the bridge spends on a hostile Redis reply: a ``$536870912`` bulk header followed by as
many bytes as the client takes (issue 30, item 6). Prints the peak RSS growth (VmHWM) a call and
the error the call gets; run it on two checkouts for a before/after (``PYTHONPATH=<checkout>``).

    PYTHONPATH=. .venv/bin/python bench/redis_reply_rss.py [calls]
"""

from __future__ import annotations

import asyncio
import statistics
import sys

from bridge.ops.shared_limits import SharedLimits
from tests.services.fake_redis import fake_redis


def _kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(field)


async def main(calls: int) -> None:
    async with fake_redis(b"$536870912\r\n", stream=True) as redis:
        growth: list[float] = []
        errors: set[str] = set()
        for _ in range(calls):
            limits = SharedLimits(redis.url, api="bench")
            before = _kib("VmHWM")
            try:
                async with limits.hold("op", limit=1, wait=0.0, busy="busy", limited=lambda s: "limited"):
                    pass
            except Exception as exc:
                errors.add(f"{type(exc).__name__}: {str(exc)[:160]}")
            growth.append((_kib("VmHWM") - before) / 1024)
            await limits.aclose()
    print(
        f"calls {calls}; peak RSS growth a call MiB: median {statistics.median(growth):.1f}, "
        f"max {max(growth):.1f}, total {sum(growth):.1f}; final RSS {_kib('VmRSS') / 1024:.0f} MiB"
    )
    for error in sorted(errors):
        print("  answer:", error)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5))
