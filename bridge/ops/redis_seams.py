"""Every use of redis-py's private names: the RESP3 parser whose header lines the bridge checks.

Checked on redis-py 8.1.0 (pinned by the ``redis`` extra). ``tests/ops/test_redis_seams.py`` fails
loudly when a release moves them: the parser class exists where imported, it is still the default
parser of an asyncio connection, and ``_readline`` is still the coroutine every RESP header line
goes through.

**The parser's header line** (``redis._parsers._AsyncRESP3Parser`` and its ``_readline``): a
connection takes a ``parser_class`` (public), but the only parser to subclass is private, and
the only place a size announced by Redis can be checked before it is buffered is the private
``_readline``. :class:`HeaderCheckingParser` gives the rest of the bridge a public method,
:meth:`HeaderCheckingParser.check_header`, so :mod:`bridge.ops.redis_reply` names nothing private.
No upstream issue found; draft for redis/redis-py: *"A public, size-bounded reply option (or a
documented parser hook called with each header line) so a client can refuse a reply announcing
more bytes or items than it expects, before buffering it."*
"""

from __future__ import annotations

from redis._parsers import _AsyncRESP3Parser

__all__ = ["HeaderCheckingParser", "RESP3Parser"]

RESP3Parser = _AsyncRESP3Parser
"""redis-py's asyncio RESP3 parser (its default for ``protocol=3``)."""


class HeaderCheckingParser(_AsyncRESP3Parser):
    """RESP3, with :meth:`check_header` called on every line before what it announces is read."""

    async def _readline(self) -> bytes:
        line = await super()._readline()
        self.check_header(line)
        return line

    def check_header(self, line: bytes) -> None:
        """Raise to refuse the reply whose header ``line`` this is (nothing refused here)."""
