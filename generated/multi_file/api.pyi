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

class GetOwnerInput(TypedDict, closed=True):
    ownerId: int

class GetOwnerOutput(TypedDict, total=False):
    id: int
    name: str
    pets: list[dict[str, Any]]

class ListOwnersInput(TypedDict, total=False, closed=True):
    page: int

ListOwnersOutput: TypeAlias = list[ListOwnersOutput2]

class ListOwnersOutput2(TypedDict, total=False):
    id: int
    name: str
    pets: list[dict[str, Any]]

async def getOwner(*, ownerId: int) -> GetOwnerOutput:
    """Get an owner with their pets

    GET /owners/{ownerId} (read-only)"""

async def listOwners(*, page: int = 1) -> ListOwnersOutput:
    """GET /owners

    GET /owners (read-only)

    Pages: arguments page."""
