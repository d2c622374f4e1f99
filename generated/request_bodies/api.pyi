"""Typed stubs of the API for code mode (mcp-bridge serve --mode code); generated, do not edit."""

from __future__ import annotations
from typing import Any, NotRequired
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

class CreateConfigMapInput(TypedDict, closed=True):
    namespace: str
    apiVersion: NotRequired[str]
    kind: NotRequired[str]
    metadata: Metadata
    data: NotRequired[dict[str, str]]

class CreateConfigMapOutput(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: dict[str, Any]
    data: dict[str, Any]

class PatchConfigMapInput(TypedDict, closed=True):
    namespace: str
    name: str
    body: dict[str, Any]

class PatchConfigMapOutput(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: dict[str, Any]
    data: dict[str, Any]

class BodyItem(TypedDict):
    apiVersion: NotRequired[str]
    kind: NotRequired[str]
    metadata: Metadata
    data: NotRequired[dict[str, str]]

class CreateBatchInput(TypedDict, total=False, closed=True):
    body: list[BodyItem]

class PutBlobInput(TypedDict, closed=True):
    name: str
    body: str

class PutImageInput(TypedDict, closed=True):
    name: str
    body: str

class SendTextInput(TypedDict, closed=True):
    body: str

class Geo(TypedDict, total=False):
    lat: float
    lng: float

class Address(TypedDict, total=False):
    city: str
    geo: Geo

class Dimensions(TypedDict, total=False):
    width: int
    height: int

class CreateChargeInput(TypedDict, closed=True):
    amount: int
    email: NotRequired[str]
    metadata: NotRequired[dict[str, str]]
    address: NotRequired[Address]
    expand: NotRequired[list[str]]
    sizes: NotRequired[list[int]]
    dimensions: NotRequired[Dimensions]
    options: NotRequired[dict[str, Any]]

class CreateChargeOutput(TypedDict, total=False):
    id: str

class Profile(TypedDict, total=False):
    name: str

class UploadTypedInput(TypedDict, closed=True):
    file: str
    profile: NotRequired[Profile]
    report: NotRequired[str]

class Metadata(TypedDict, total=False):
    name: str
    labels: dict[str, str]

async def createConfigMap(*, namespace: str, metadata: Metadata, apiVersion: str = ..., kind: str = ..., data: dict[str, str] = ...) -> CreateConfigMapOutput:
    """Create a config map (a */* body with an object schema is JSON)

    POST /namespaces/{namespace}/configmaps (writes)"""

async def patchConfigMap(*, namespace: str, name: str, body: dict[str, Any]) -> PatchConfigMapOutput:
    """Patch a config map (merge patch chosen among the patch media types)

    PATCH /namespaces/{namespace}/configmaps/{name} (destructive)"""

async def createBatch(*, body: list[BodyItem] = ...) -> Any:
    """An array body under application/*

    POST /batches (writes)"""

async def putBlob(*, name: str, body: str) -> Any:
    """A */* body without a schema is bytes

    PUT /blobs/{name} (destructive, idempotent)"""

async def putImage(*, name: str, body: str) -> Any:
    """An image/* body is bytes whatever its schema says

    PUT /images/{name} (destructive, idempotent)"""

async def sendText(*, body: str) -> Any:
    """A */* string body is text

    POST /notes (writes)"""

async def createCharge(*, amount: int, email: str = ..., metadata: dict[str, str] = ..., address: Address = ..., expand: list[str] = ..., sizes: list[int] = ..., dimensions: Dimensions = ..., options: dict[str, Any] = ...) -> CreateChargeOutput:
    """A url-encoded form whose properties carry an encoding

    POST /charges (writes)"""

async def uploadTyped(*, file: str, profile: Profile = ..., report: str = ...) -> Any:
    """Multipart parts typed by their encoding

    POST /uploads (writes)"""
