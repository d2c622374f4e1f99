"""What the bridge reads from Redis: bounded in size, checked in shape (``--limits-redis``).

Redis is outside the process: a wrong server, a proxy, or a compromised one may answer anything.
The shared limits expect tiny replies (``PONG``, integers, a pair of integers), so the reading
stops at :data:`MAX_BULK` bytes in one string and :data:`MAX_ITEMS` items in one array, before the
client buffers them (a ``$536870912`` header would otherwise make it read half a gigabyte), and
:func:`pair` checks the script's answer. Either failure is :class:`UnexpectedReply`, which the
limits answer like an unreachable Redis: fail closed, with a message that names the cause.
"""

from __future__ import annotations

from typing import Any

from redis.exceptions import InvalidResponse

from bridge.ops.redis_seams import HeaderCheckingParser

__all__ = ["MAX_BULK", "MAX_ITEMS", "BoundedParser", "UnexpectedReply", "pair"]

MAX_BULK = 4096
"""Bytes of one bulk string: far above any reply of the shared-limits scripts."""
MAX_ITEMS = 64
"""Items of one array."""


class UnexpectedReply(InvalidResponse):
    """Redis answered something that is not a reply of the shared-limits protocol."""


_STRINGS = (b"$", b"=", b"!")  # bulk string, verbatim string, bulk error: a byte count follows
_AGGREGATES = (b"*", b"~", b"%", b">", b"|")  # array, set, map, push, attribute: an item count follows


class BoundedParser(HeaderCheckingParser):
    """RESP3, refusing a string or aggregate longer than the bounds when its header line is read.

    Every header line goes through :meth:`check_header` before the parser reads what it announces:
    the one place to check a size before it is buffered (:mod:`bridge.ops.redis_seams`).
    """

    def check_header(self, line: bytes) -> None:
        kind = line[:1]
        if kind in _STRINGS or kind in _AGGREGATES:
            bound = MAX_BULK if kind in _STRINGS else MAX_ITEMS
            size = line[1:]
            # A RESP2 null ($-1, *-1) from a server that agreed to RESP3 is not a reply either.
            if not (size.isascii() and size.isdigit()) or len(size) > 12 or int(size) > bound:
                shown = size[:12].decode("latin-1")
                raise UnexpectedReply(f"a reply announcing {shown!r} bytes or items (0 to {bound} expected)")


def pair(reply: Any) -> tuple[int, int]:
    """The acquire script's answer (code -1, 0 or 1; a wait of at most a day in ms); else :class:`UnexpectedReply`."""
    if (
        isinstance(reply, list | tuple)
        and len(reply) == 2
        and all(isinstance(item, int) and not isinstance(item, bool) for item in reply)
        and reply[0] in (-1, 0, 1)
        and 0 <= reply[1] <= 86_400_000
    ):
        return int(reply[0]), int(reply[1])
    kind = type(reply).__name__ if not isinstance(reply, list | tuple) else f"{len(reply)}-item array"
    raise UnexpectedReply(f"the limits script answered a {kind}, not a code and a wait")
