"""Typed stubs of the API for code mode (mcp-bridge serve --mode code); generated, do not edit."""

from __future__ import annotations
from typing import Any, Literal, NotRequired, TypeAlias
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

class GetTreeInput(TypedDict, closed=True):
    treeId: str

class GetTreeOutput(TypedDict, total=False, extra_items=Any):
    label: str
    children: list[dict[str, Any]]
    parent: dict[str, Any] | None

class ReplaceTreeInputNode(TypedDict):
    label: str
    children: NotRequired[list[ReplaceTreeInputNode]]
    parent: NotRequired[ReplaceTreeInputNode | None]

class ReplaceTreeInput(TypedDict, closed=True):
    treeId: str
    label: str
    children: NotRequired[list[ReplaceTreeInputNode]]
    parent: NotRequired[ReplaceTreeInputNode | None]

class ReplaceTreeOutput(TypedDict, total=False, extra_items=Any):
    label: str
    children: list[dict[str, Any]]
    parent: dict[str, Any] | None

class Filter(TypedDict, total=False):
    tag: str

class SearchInput(TypedDict, closed=True):
    query: str
    anything: NotRequired[Any]
    nothing: NotRequired[Any]
    mode: NotRequired[Literal['fast']]
    size: NotRequired[int | None]
    filter: NotRequired[Filter]

class SearchOutput(TypedDict, total=False, extra_items=Any):
    hits: list[Any]
    total: int

class LegacyThingInput(TypedDict, closed=True):
    pass

LegacyThingOutput: TypeAlias = int

async def getTree(*, treeId: str) -> GetTreeOutput:
    """Get a tree

    GET /trees/{treeId} (read-only)"""

async def replaceTree(*, treeId: str, label: str, children: list[ReplaceTreeInputNode] = ..., parent: ReplaceTreeInputNode | None = ...) -> ReplaceTreeOutput:
    """Replace a tree

    PUT /trees/{treeId} (destructive, idempotent)"""

async def search(*, query: str, anything: Any = ..., nothing: Any = ..., mode: Literal['fast'] = ..., size: int | None = ..., filter: Filter = ...) -> SearchOutput:
    """Search with a strict filter
    The filter admits no unknown keys (`unevaluatedProperties: false`).

    POST /search (writes)

    Pages: arguments size."""

async def legacyThing() -> LegacyThingOutput:
    """An old operation

    [Deprecated] An old operation

    GET /legacy (read-only)"""
