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

class UpdatePetInput(TypedDict, closed=True):
    id: NotRequired[int]
    name: str
    category: NotRequired[Category]
    photoUrls: list[str]
    price: float
    tags: NotRequired[list[Category]]
    status: NotRequired[Literal['available', 'pending', 'sold']]

class UpdatePetOutput(TypedDict, total=False):
    id: int
    name: str
    category: dict[str, Any]
    photoUrls: list[str]
    price: float
    tags: list[dict[str, Any]]
    status: str

class AddPetInput(TypedDict, closed=True):
    id: NotRequired[int]
    name: str
    category: NotRequired[Category]
    photoUrls: list[str]
    price: float
    tags: NotRequired[list[Category]]
    status: NotRequired[Literal['available', 'pending', 'sold']]

class AddPetOutput(TypedDict, total=False):
    id: int
    name: str
    category: dict[str, Any]
    photoUrls: list[str]
    price: float
    tags: list[dict[str, Any]]
    status: str

class FindPetsByStatusInput(TypedDict, closed=True):
    status: NotRequired[Literal['available', 'pending', 'sold']]
    page: int
    pageSize: NotRequired[int]

FindPetsByStatusOutput: TypeAlias = list[FindPetsByStatusOutput2]

class FindPetsByTagsInput(TypedDict, total=False, closed=True):
    tags: list[str]

FindPetsByTagsOutput: TypeAlias = list[FindPetsByStatusOutput2]

class GetPetByIdInput(TypedDict, closed=True):
    petId: int

class GetPetByIdOutput(TypedDict, total=False):
    id: int
    name: str
    category: dict[str, Any]
    photoUrls: list[str]
    price: float
    tags: list[dict[str, Any]]
    status: str

class UpdatePetWithFormInput(TypedDict, closed=True):
    petId: int
    name: NotRequired[str]
    status: NotRequired[str]

class DeletePetInput(TypedDict, closed=True):
    petId: int

class GetPetCouponsInput(TypedDict, closed=True):
    petId: int

class GetPetCouponsOutput(TypedDict, total=False):
    id: int
    description: str
    couponCode: str

class PlaceOrderInput(TypedDict, total=False, closed=True):
    id: int
    petId: int
    quantity: int
    status: Literal['placed', 'approved', 'delivered']
    complete: bool
    couponCode: str

class PlaceOrderOutput(TypedDict, total=False):
    id: int
    petId: int
    quantity: int
    status: str
    complete: bool
    couponCode: str

class GetOrderByIdInput(TypedDict, closed=True):
    orderId: int

class GetOrderByIdOutput(TypedDict, total=False):
    id: int
    petId: int
    quantity: int
    status: str
    complete: bool
    couponCode: str

class DeleteOrderInput(TypedDict, closed=True):
    orderId: int

class ApplyCouponInput(TypedDict, total=False):
    my_pet_tags: list[str]
    store_id: str

class ApplyCouponOutput(TypedDict, total=False):
    apply_coupon_pet_order_id: int

class BuyAvailablePetInput(TypedDict, total=False):
    store_id: str

class BuyAvailablePetOutput(TypedDict, total=False):
    buy_pet_order_id: int

class PlaceOrder2Input(TypedDict, total=False):
    pet_id: int
    quantity: int
    coupon_code: str

class PlaceOrder2Output(TypedDict, total=False):
    workflow_order_id: int

class Category(TypedDict, total=False):
    id: int
    name: str

class FindPetsByStatusOutput2(TypedDict, total=False):
    id: int
    name: str
    category: dict[str, Any]
    photoUrls: list[str]
    price: float
    tags: list[dict[str, Any]]
    status: str

async def updatePet(*, name: str, photoUrls: list[str], price: float, id: int = ..., category: Category = ..., tags: list[Category] = ..., status: Literal['available', 'pending', 'sold'] = ...) -> UpdatePetOutput:
    """Update an existing pet by Id

    PUT /pet (destructive, idempotent)"""

async def addPet(*, name: str, photoUrls: list[str], price: float, id: int = ..., category: Category = ..., tags: list[Category] = ..., status: Literal['available', 'pending', 'sold'] = ...) -> AddPetOutput:
    """Add a new pet to the store

    POST /pet (writes)"""

async def findPetsByStatus(*, page: int, status: Literal['available', 'pending', 'sold'] = 'available', pageSize: int = 10) -> FindPetsByStatusOutput:
    """Finds Pets by status
    Multiple status values can be provided with comma separated strings

    GET /pet/findByStatus (read-only)

    Pages: arguments page, pageSize."""

async def findPetsByTags(*, tags: list[str] = ...) -> FindPetsByTagsOutput:
    """Finds Pets by tags
    Multiple tags can be provided with comma separated strings. Use tag1, tag2, tag3 for testing.

    GET /pet/findByTags (read-only)"""

async def getPetById(*, petId: int) -> GetPetByIdOutput:
    """Find pet by ID
    Returns a single pet

    GET /pet/{petId} (read-only)"""

async def updatePetWithForm(*, petId: int, name: str = ..., status: str = ...) -> Any:
    """Updates a pet in the store with form data

    POST /pet/{petId} (writes)"""

async def deletePet(*, petId: int) -> Any:
    """Deletes a pet

    delete a pet

    DELETE /pet/{petId} (destructive, idempotent)"""

async def getPetCoupons(*, petId: int) -> GetPetCouponsOutput:
    """Find a coupon available for a pet
    Returns a coupon available for the pet, if applicable

    GET /pet/{petId}/coupons (read-only)"""

async def placeOrder(*, id: int = ..., petId: int = ..., quantity: int = ..., status: Literal['placed', 'approved', 'delivered'] = ..., complete: bool = ..., couponCode: str = ...) -> PlaceOrderOutput:
    """Place an order for a pet
    Place a new order in the store

    POST /store/order (writes)"""

async def getOrderById(*, orderId: int) -> GetOrderByIdOutput:
    """Find purchase order by ID
    For valid response try integer IDs with value <= 5 or > 10. Other values will generate exceptions.

    GET /store/order/{orderId} (read-only)"""

async def deleteOrder(*, orderId: int) -> Any:
    """Delete purchase order by ID
    For valid response try integer IDs with value < 1000. Anything above 1000 or nonintegers will generate API errors

    DELETE /store/order/{orderId} (destructive, idempotent)"""

async def apply_coupon(*, my_pet_tags: list[str] = ..., store_id: str = ...) -> ApplyCouponOutput:
    """Apply a coupon to a pet order.

    Workflow: Apply a coupon to a pet order.
    This is how you can find a pet, find an applicable coupon, and apply that coupon in your order. The workflow concludes by outputting the ID of the placed order.

    WORKFLOW apply-coupon (writes)"""

async def buy_available_pet(*, store_id: str = ...) -> BuyAvailablePetOutput:
    """Buy an available pet if one is available.

    Workflow: Buy an available pet if one is available.
    This workflow demonstrates a workflow very similar to `apply-coupon`, by intention. It's meant to indicate how to reuse a step (`place-order`) as well as a parameter (`page`, `pageSize`).

    WORKFLOW buy-available-pet (writes)"""

async def place_order(*, pet_id: int = ..., quantity: int = ..., coupon_code: str = ...) -> PlaceOrder2Output:
    """Place an order for a pet.

    Workflow: Place an order for a pet.
    This workflow places an order for a pet. It may be reused by other workflows as the \"final step\" in a purchase.

    WORKFLOW place-order (writes)"""
