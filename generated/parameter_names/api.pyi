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

class Filter(TypedDict, total=False, closed=True):
    color: str
    size: str

class Prefs(TypedDict, total=False, closed=True):
    theme: str

class ListItemsInput(TypedDict, total=False, closed=True):
    limit: int
    filter: Filter
    extra: dict[str, str]
    prefs: Prefs

class ListItemsOutputItem(TypedDict, total=False):
    id: str

ListItemsOutput: TypeAlias = list[ListItemsOutputItem]

class DeleteItemInput(TypedDict, closed=True):
    id: str

class GetWebLinksIdGetSharedLinkInput(TypedDict, closed=True):
    id: str

class PutWebLinksIdAddSharedLinkInput(TypedDict, closed=True):
    id: str

class PutWebLinksIdRemoveSharedLinkInput(TypedDict, closed=True):
    id: str

class DescribeThingsInput(TypedDict, total=False, closed=True):
    MaxResults: int

ChatPostMessageInput = TypedDict('ChatPostMessageInput', {'api-version': str, 'channel': str}, closed=True)

async def listItems(*, limit: int = ..., filter: Filter = ..., extra: dict[str, str] = ..., prefs: Prefs = ...) -> ListItemsOutput:
    """List items

    GET /items (read-only)

    Pages: arguments limit."""

async def deleteItem(*, id: str) -> Any:
    """Delete an item

    DELETE /items/{id} (destructive, idempotent)"""

async def get_web_links_id_get_shared_link(*, id: str) -> Any:
    """Shared link of a web link (the fragment tells it apart; it is never sent)

    GET /web_links/{id}#get_shared_link (read-only)"""

async def put_web_links_id_add_shared_link(*, id: str) -> Any:
    """Add a shared link to a web link

    PUT /web_links/{id}#add_shared_link (destructive, idempotent)"""

async def put_web_links_id_remove_shared_link(*, id: str) -> Any:
    """Remove the shared link of a web link

    PUT /web_links/{id}#remove_shared_link (destructive, idempotent)"""

async def DescribeThings(*, MaxResults: int = ...) -> Any:
    """Literal query pairs in the path template are sent as query parameters

    GET /?Action=DescribeThings&Version=2016-11-15 (read-only)

    Pages: arguments MaxResults."""

async def chat_postMessage(*, api_version: str, channel: str) -> Any:
    """A secret declared as a required parameter (bind `token` to an environment variable)

    POST /chat.postMessage (writes)

    `api_version` is the argument `api-version`."""
