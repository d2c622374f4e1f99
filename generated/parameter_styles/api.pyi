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

ItemsGetInput = TypedDict('ItemsGetInput', {'id': str, 'id_query': NotRequired[str], 'filter_status': NotRequired[Literal['open', 'closed']], 'X-Request-ID': NotRequired[str], 'session': NotRequired[str]}, closed=True)

class ItemsGetOutput(TypedDict, total=False):
    id: str
    name: str
    note: str | None
    rank: int | None

class UpdateItemInput(TypedDict, closed=True):
    id: str
    name: str
    note: NotRequired[str | None]
    rank: NotRequired[int | None]

class UpdateItemOutput(TypedDict, total=False):
    id: str
    name: str
    note: str | None
    rank: int | None

class Coords(TypedDict, total=False):
    x: int
    y: int

class Plain(TypedDict, total=False):
    a: str
    b: str

class StyleMatrixInput(TypedDict, closed=True):
    coords: Coords
    label: list[str]
    plain: Plain

class Deep(TypedDict, total=False):
    min: float
    max: float

class StyleQueryInput(TypedDict, closed=True):
    form_explode: NotRequired[list[int]]
    form_flat: NotRequired[list[int]]
    space: NotRequired[list[str]]
    pipe: NotRequired[list[str]]
    deep: NotRequired[Deep]
    reserved: NotRequired[str]
    json: NotRequired[Json]
    flag: bool

StyleQueryOutput: TypeAlias = list[str]

class SubmitFormInput(TypedDict, total=False, closed=True):
    name: str
    tags: list[str]
    meta: Json

class UploadInput(TypedDict, closed=True):
    file: str
    caption: NotRequired[str]

class UploadOutput(TypedDict, total=False):
    size: int

class PutRawInput(TypedDict, closed=True):
    name: str
    body: NotRequired[str]

class AddNoteInput(TypedDict, total=False, closed=True):
    body: str

class Json(TypedDict, total=False):
    k: str

async def items_get(*, id: str, id_query: str = ..., filter_status: Literal['open', 'closed'] = ..., X_Request_ID: str = ..., session: str = ...) -> ItemsGetOutput:
    """Get an item \"\"\" with \\ quotes

    GET /items/{id} (read-only)

    `X_Request_ID` is the argument `X-Request-ID`."""

async def updateItem(*, id: str, name: str, note: str | None = ..., rank: int | None = ...) -> UpdateItemOutput:
    """Change an item

    PATCH /items/{id} (destructive)"""

async def styleMatrix(*, coords: Coords, label: list[str], plain: Plain) -> Any:
    """Path styles

    GET /matrix/{coords}/{label}/{plain} (read-only)"""

async def styleQuery(*, flag: bool, form_explode: list[int] = ..., form_flat: list[int] = ..., space: list[str] = ..., pipe: list[str] = ..., deep: Deep = ..., reserved: str = ..., json: Json = ...) -> StyleQueryOutput:
    """Query styles

    GET /query (read-only)"""

async def submitForm(*, name: str = ..., tags: list[str] = ..., meta: Json = ...) -> Any:
    """URL-encoded form

    POST /forms (writes)"""

async def upload(*, file: str, caption: str = ...) -> UploadOutput:
    """Multipart upload

    POST /uploads (writes)"""

async def putRaw(*, name: str, body: str = ...) -> Any:
    """Raw bytes

    PUT /raw/{name} (destructive, idempotent)"""

async def addNote(*, body: str = ...) -> Any:
    """Plain text body

    POST /notes (writes)"""
