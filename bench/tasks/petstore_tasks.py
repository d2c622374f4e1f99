"""The petstore tasks (the Swagger Petstore, OpenAPI 3.0, 20 operations)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from bench.tasks.task import Caller, Search, Task
from bench.tasks.upstream import Upstream

TAG = "senior"
ORDERS = (1, 2, 3, 4, 5)

BY_TAGS = Search("pets by tags", "findPetsByTags", 1, "find pets by tags", 1)
BY_STATUS = Search("find pets by status", "findPetsByStatus", 1, "pets status", 1)
UPDATE_FORM = Search("update a pet with form data", "updatePetWithForm")
ORDER = Search("find purchase order by id", "getOrderById", 1, None, 11)
PET = Search("find pet by id", "getPetById")


def _tagged(up: Upstream) -> list[dict[str, Any]]:
    return [p for p in up.petstore.pets.values() if TAG in {t["name"] for t in p["tags"]}]


# ---------------------------------------------------------------------------------- mark sold


def sold_expected(up: Upstream) -> Any:
    return sorted(p["id"] for p in _tagged(up))


def sold_verify(up: Upstream) -> list[str]:
    return [f"pet {p['id']} is {p['status']}" for p in _tagged(up) if p["status"] != "sold"]


async def sold_plan(call: Caller) -> Any:
    pets = await call.call("findPetsByTags", {"tags": [TAG]})
    unsold = [p["id"] for p in pets if p.get("status") != "sold"]
    await call.turn(*(("updatePetWithForm", {"petId": pid, "status": "sold"}) for pid in unsold))
    return sorted(p["id"] for p in pets)


SOLD = Task(
    "mark-tagged-sold",
    "petstore",
    f"Find the pets tagged '{TAG}' and mark them sold; which pets were they (ids)?",
    sold_expected,
    sold_plan,
    (BY_TAGS, UPDATE_FORM),
    f"""import asyncio
pets = await findPetsByTags(tags=['{TAG}'])
await asyncio.gather(*[updatePetWithForm(petId=p['id'], status='sold') for p in pets
                       if 'id' in p and p.get('status') != 'sold'])
sorted(p['id'] for p in pets if 'id' in p)
""",
    f"""import asyncio
pets = (await call_tool('{{findPetsByTags}}', {{'tags': ['{TAG}']}}))['result']
await asyncio.gather(*[call_tool('{{updatePetWithForm}}', {{'petId': p['id'], 'status': 'sold'}}) for p in pets
                       if p['status'] != 'sold'])
return sorted(p['id'] for p in pets)
""",
    write=True,
    verify=sold_verify,
)

# ---------------------------------------------------------------------------------- by category


def category_expected(up: Upstream) -> Any:
    pets = [p for p in up.petstore.pets.values() if p["status"] == "available"]
    return dict(sorted(Counter(p["category"]["name"] for p in pets).items()))


async def category_plan(call: Caller) -> Any:
    pets = await call.call("findPetsByStatus", {"status": ["available"]})
    return dict(sorted(Counter(p["category"]["name"] for p in pets).items()))


CATEGORY = Task(
    "available-by-category",
    "petstore",
    "How many available pets are there in each category?",
    category_expected,
    category_plan,
    (BY_STATUS,),
    """pets = await findPetsByStatus(status=['available'])
counts = {}
for p in pets:
    name = p.get('category', {}).get('name', '')
    counts[name] = counts.get(name, 0) + 1
dict(sorted(counts.items()))
""",
    """pets = (await call_tool('{findPetsByStatus}', {'status': ['available']}))['result']
counts = {}
for p in pets:
    counts[p['category']['name']] = counts.get(p['category']['name'], 0) + 1
return dict(sorted(counts.items()))
""",
)

# ---------------------------------------------------------------------------------- ordered pets


def orders_expected(up: Upstream) -> Any:
    world = up.petstore
    return {str(o): world.pets[world.orders[o]["petId"]]["name"] for o in ORDERS}


async def orders_plan(call: Caller) -> Any:
    orders = await call.turn(*(("getOrderById", {"orderId": o}) for o in ORDERS))
    pet_ids = list(dict.fromkeys(o["petId"] for o in orders))
    pets = await call.turn(*(("getPetById", {"petId": pid}) for pid in pet_ids))
    name = {p["id"]: p["name"] for p in pets}
    return {str(o["id"]): name[o["petId"]] for o in orders}


ORDERED = Task(
    "ordered-pets",
    "petstore",
    f"The names of the pets in orders {ORDERS[0]} to {ORDERS[-1]}.",
    orders_expected,
    orders_plan,
    (ORDER, PET),
    f"""import asyncio
orders = await asyncio.gather(*[getOrderById(orderId=o) for o in {list(ORDERS)}])
pets = await asyncio.gather(*[getPetById(petId=o.get('petId', 0)) for o in orders])
{{str(o.get('id')): p.get('name') for o, p in zip(orders, pets)}}
""",
    f"""import asyncio
orders = await asyncio.gather(*[call_tool('{{getOrderById}}', {{'orderId': o}}) for o in {list(ORDERS)}])
pets = await asyncio.gather(*[call_tool('{{getPetById}}', {{'petId': o['petId']}}) for o in orders])
return {{str(o['id']): p['name'] for o, p in zip(orders, pets)}}
""",
)

TASKS = (SOLD, CATEGORY, ORDERED)
