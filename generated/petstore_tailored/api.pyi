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

class ListPetsInput(TypedDict, total=False, closed=True):
    status: Literal['available', 'pending', 'sold']
    tags: list[str]
    limit: int

class ListPetsOutput2(TypedDict, total=False):
    id: int

class ListPetsOutput3(TypedDict, total=False):
    name: str
    tag: str | None
    status: str

class ListPetsOutputItem(ListPetsOutput2, ListPetsOutput3):
    pass

ListPetsOutput: TypeAlias = list[ListPetsOutputItem]

class CreatePetInput(TypedDict, closed=True):
    name: str
    tag: NotRequired[str | None]
    status: NotRequired[Literal['available', 'pending', 'sold']]

class CreatePetOutput(ListPetsOutput2, ListPetsOutput3):
    pass

class GetPetInput(TypedDict, closed=True):
    petId: int

class GetPetOutput(ListPetsOutput2, ListPetsOutput3):
    pass

class WaitForAdoptionInput(TypedDict, closed=True):
    petId: int

class WaitForAdoptionOutput(ListPetsOutput2, ListPetsOutput3):
    pass

class GetInventoryInput(TypedDict, closed=True):
    pass

GetInventoryOutput: TypeAlias = dict[str, int]

async def listPets(*, status: Literal['available', 'pending', 'sold'] = ..., tags: list[str] = ..., limit: int = 20) -> ListPetsOutput:
    """List pets

    Lists pets, newest first. Use `limit` to page; the result holds at most 100 pets.

    GET /pets (read-only)

    Pages: arguments limit."""

async def createPet(*, name: str, tag: str | None = ..., status: Literal['available', 'pending', 'sold'] = 'available') -> CreatePetOutput:
    """Add a pet

    Adds a pet to the store and returns it with its new id.

    POST /pets (writes)"""

async def getPet(*, petId: int) -> GetPetOutput:
    """Get a pet
    Returns one pet by its id.

    GET /pets/{petId} (read-only)"""

async def waitForAdoption(*, petId: int) -> WaitForAdoptionOutput:
    """Wait until a pet is adopted
    Long-polls until the pet's status changes. Slow by design; the demo cancels it.

    GET /pets/{petId}/wait (read-only)"""

async def getInventory() -> GetInventoryOutput:
    """Count pets by status

    GET /store/inventory (read-only)"""
