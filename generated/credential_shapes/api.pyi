"""Typed stubs of the API for code mode (mcp-bridge serve --mode code); generated, do not edit."""

from __future__ import annotations
from typing import Any, TypeAlias
from typing_extensions import TypedDict

ApiError = OSError
"""Raised by an API function: the call failed (an HTTP error status, bad arguments, a timeout)."""

def api_status(error: BaseException) -> int | None:
    """The HTTP status of an ApiError (None when the call failed without an HTTP answer)."""

from typing import Callable as _Callable, Iterable as _Iterable

def map(function: _Callable[..., Any], iterable: _Iterable[Any], /, *iterables: _Iterable[Any]) -> list[Any]:
    """Python's map, as a list."""

def filter(function: _Callable[[Any], object] | None, iterable: _Iterable[Any], /) -> list[Any]:
    """Python's filter, as a list."""

class GetBoardInput(TypedDict, closed=True):
    id: str

class GetBoardOutput(TypedDict, total=False):
    id: str
    name: str

class ListContactsInput(TypedDict, total=False, closed=True):
    limit: int

class ListContactsOutputItem(TypedDict, total=False):
    id: str

ListContactsOutput: TypeAlias = list[ListContactsOutputItem]

class HealthInput(TypedDict, closed=True):
    pass

async def getBoard(*, id: str) -> GetBoardOutput:
    """Get a board

    GET /boards/{id} (read-only)"""

async def listContacts(*, limit: int = ...) -> ListContactsOutput:
    """List contacts

    GET /contacts (read-only)

    Pages: arguments limit."""

async def health() -> Any:
    """Health of the internal service

    GET /health (read-only)"""
