"""``tools/list`` in pages: at most ``PAGE_TOOLS`` tools and about ``PAGE_BYTES`` of JSON a page.

Microsoft Graph's 11,422 tools were one 26 MB answer (31 s, and a client's whole message budget).
A page ends before the tool that would take it past either bound (a page holds at least one tool),
so an API whose list is under both bounds, any API but the biggest, is one page with no
``nextCursor``, exactly as before. Page ends are found page by page, from the tools' own wire
sizes: the same list always pages the same way.

A cursor is opaque to the client (MCP pagination): the URL-safe base64 of the list's tag and the
index of the page's first tool. The tag is a digest of the listed names, so a cursor from another
list (the tools changed, or another caller's scopes) is refused like any other bad cursor: with
-32602 invalid params, never a page of some other list.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import mcp_types as types
from mcp.shared.exceptions import MCPError

__all__ = ["MAX_CURSOR_CHARS", "PAGE_BYTES", "PAGE_TOOLS", "Pages", "bad_cursor"]

PAGE_BYTES = 2 * 1024 * 1024  # GitHub's 1,223 tools (1.3 MB) stay one page; Graph's 26 MB are 13
PAGE_TOOLS = 2000
MAX_CURSOR_CHARS = 64  # ours are about 30; a longer one is refused before decoding

T = TypeVar("T")


def bad_cursor() -> MCPError:
    return MCPError(code=types.INVALID_PARAMS, message="Invalid cursor: list the tools again from the start.")


class Pages(Generic[T]):
    """The pages of one fixed list. ``size(item)`` is an item's bytes on the wire."""

    def __init__(self, items: Sequence[T], size: Callable[[T], int]) -> None:
        self.items = items
        self._size = size
        self._ends: dict[int, int] = {}
        digest = hashlib.blake2b(digest_size=6)
        for item in items:
            digest.update(str(getattr(item, "name", item)).encode("utf-8", "surrogatepass") + b"\n")
        self._tag = digest.hexdigest()

    def start(self, cursor: str | None) -> int:
        """The index of the first item of the page ``cursor`` names (0 without one); -32602 for a bad cursor."""
        if cursor is None:
            return 0
        if len(cursor) > MAX_CURSOR_CHARS:
            raise bad_cursor()
        try:
            text = base64.urlsafe_b64decode(cursor.encode("ascii") + b"=" * (-len(cursor) % 4)).decode("ascii")
        except (UnicodeError, binascii.Error, ValueError):
            raise bad_cursor() from None
        tag, _, index = text.partition(":")
        if tag != self._tag or not index.isdigit() or index != str(int(index)):
            raise bad_cursor()
        start = int(index)
        if not 0 < start < len(self.items):
            raise bad_cursor()
        return start

    def end(self, start: int) -> int:
        """The index after the last item of the page that starts at ``start``."""
        found = self._ends.get(start)
        if found is None:
            found, total = start, 0
            while found < len(self.items) and found - start < PAGE_TOOLS:
                total += self._size(self.items[found])
                if total > PAGE_BYTES and found > start:
                    break
                found += 1
            self._ends[start] = found
        return found

    def page(self, cursor: str | None) -> tuple[Sequence[T], str | None]:
        """The items of the page ``cursor`` names and the next page's cursor (None after the last)."""
        start = self.start(cursor)
        end = self.end(start)
        return self.items[start:end], self.cursor(end) if end < len(self.items) else None

    def cursor(self, start: int) -> str:
        return base64.urlsafe_b64encode(f"{self._tag}:{start}".encode("ascii")).decode("ascii").rstrip("=")
