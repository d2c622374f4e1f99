"""The one reader of a list request's pagination cursor (``resources/list``, ``tasks/list``...)."""

from __future__ import annotations

import mcp_types
from mcp.shared.exceptions import MCPError

__all__ = ["MAX_CURSOR", "page_start"]

MAX_CURSOR = 12
"""Characters: the bridge's own cursors are offsets into a list of at most a few thousand items."""


def page_start(cursor: str | None, total: int) -> int:
    """The offset a client's ``cursor`` names in a list of ``total`` items (0 without one).

    The cursor is client text: anything but an offset the bridge could have given (ASCII digits,
    at most ``total``) is invalid params (-32602), never an exception from ``int()`` (``"²"`` is a
    digit to :meth:`str.isdigit`, and 5,000 digits exceed Python's conversion limit).
    """
    if cursor is None:
        return 0
    if not (0 < len(cursor) <= MAX_CURSOR and cursor.isascii() and cursor.isdigit()) or int(cursor) > total:
        raise MCPError(
            code=mcp_types.INVALID_PARAMS,
            message="Invalid cursor: pass back the nextCursor of the previous page, or none for the first page.",
        )
    return int(cursor)
