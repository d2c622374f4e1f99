"""Typed stubs of the API for code mode (mcp-bridge serve --mode code); generated, do not edit."""

from __future__ import annotations
from typing import Any, NotRequired, TypeAlias
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

ListOrdersInput = TypedDict('ListOrdersInput', {'status': list[str], 'ids': list[int], 'fields': list[str], 'limit': int, 'X-Trace': str}, total=False, closed=True)

ListOrdersOutput: TypeAlias = list[ListOrdersOutput2]

class PlaceOrderInput(TypedDict, closed=True):
    item: str
    quantity: NotRequired[int]
    note: NotRequired[str | None]

class PlaceOrderOutput(TypedDict, total=False):
    id: int
    item: str
    quantity: int
    note: str | None

class UploadReceiptInput(TypedDict, closed=True):
    orderId: int
    file: str
    note: NotRequired[str]

class CancelOrderInput(TypedDict, closed=True):
    orderId: int

class ListOrdersOutput2(TypedDict, total=False):
    id: int
    item: str
    quantity: int
    note: str | None

async def listOrders(*, status: list[str] = ..., ids: list[int] = ..., fields: list[str] = ..., limit: int = 10, X_Trace: str = ...) -> ListOrdersOutput:
    """List orders

    GET /orders (read-only)

    Pages: arguments limit.

    `X_Trace` is the argument `X-Trace`."""

async def placeOrder(*, item: str, quantity: int = ..., note: str | None = ...) -> PlaceOrderOutput:
    """Place an order

    POST /orders (writes)"""

async def uploadReceipt(*, orderId: int, file: str, note: str = ...) -> Any:
    """Upload a receipt

    POST /orders/{orderId}/receipt (writes)"""

async def cancelOrder(*, orderId: int) -> Any:
    """Cancel an order

    DELETE /orders/{orderId} (destructive, idempotent)"""
