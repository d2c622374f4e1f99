"""redis-py's private RESP3 parser, as bridge.ops.redis_seams subclasses it, is still there and still reads headers.

The behaviour (a reply announcing too much fails closed) is pinned by tests/ops/test_redis_replies.py.
"""

from __future__ import annotations

import inspect

import pytest

redis = pytest.importorskip("redis")


def test_the_async_resp3_parser_and_its_header_reader_exist_as_subclassed() -> None:
    from redis._parsers import _AsyncRESP3Parser

    from bridge.ops.redis_seams import HeaderCheckingParser

    assert inspect.iscoroutinefunction(_AsyncRESP3Parser._readline)
    assert list(inspect.signature(_AsyncRESP3Parser._readline).parameters) == ["self"]
    assert HeaderCheckingParser._readline is not _AsyncRESP3Parser._readline
    source = inspect.getsource(_AsyncRESP3Parser)
    assert "await self._readline()" in source  # every reply's header line goes through it
