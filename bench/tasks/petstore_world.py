"""The petstore data the task suite's upstream serves: the Swagger Petstore (OpenAPI 3.0, from npm
``@readme/oas-examples``, pinned in tests/node), with pets, their categories, tags and statuses,
and orders, each checked against the spec's ``Pet`` / ``Order`` schema.

Writes change it: ``POST /pet/{petId}`` (a form with ``name`` and ``status``) and ``PUT /pet``
update a pet, so a task such as "mark them sold" is checked on the state it leaves.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SEED = 20261201
CATEGORIES = {1: "Dogs", 2: "Cats", 3: "Birds", 4: "Fish"}
TAGS = {1: "friendly", 2: "senior", 3: "vaccinated", 4: "house-trained", 5: "needs-meds"}
NAMES = [
    "Rex", "Bella", "Milo", "Luna", "Charlie", "Lucy", "Max", "Daisy", "Oscar", "Coco",
    "Buddy", "Nala", "Rocky", "Zoe", "Toby", "Lola", "Simba", "Ruby", "Jasper", "Willow",
    "Kiwi", "Pepper", "Bubbles", "Goldie",
]  # fmt: skip
STATUSES = ("available", "pending", "sold")


def spec_path() -> Path:
    from tests.node_tools import ensure_node_modules

    return ensure_node_modules() / "@readme" / "oas-examples" / "3.0" / "json" / "petstore.json"


@dataclass
class PetstoreWorld:
    pets: dict[int, dict[str, Any]] = field(default_factory=dict)
    orders: dict[int, dict[str, Any]] = field(default_factory=dict)


def _errors(spec: dict[str, Any], name: str, value: Any) -> list[str]:
    from openapi_schema_validator import OAS30Validator

    validator = OAS30Validator({"$ref": f"#/components/schemas/{name}", "components": spec["components"]})
    return [f"{name} /{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(value)]


def build(path: Path | None = None) -> PetstoreWorld:
    spec = json.loads((path or spec_path()).read_text(encoding="utf-8"))
    rng = random.Random(SEED)
    world = PetstoreWorld()
    for i, name in enumerate(NAMES):
        pet_id = 101 + i
        category = 1 + i % len(CATEGORIES)
        tags = sorted(rng.sample(sorted(TAGS), rng.randint(0, 3)))
        world.pets[pet_id] = {
            "id": pet_id,
            "category": {"id": category, "name": CATEGORIES[category]},
            "name": name,
            "photoUrls": [f"https://images.example/pets/{pet_id}/1.jpg"],
            "tags": [{"id": t, "name": TAGS[t]} for t in tags],
            "status": rng.choice(STATUSES[:2]) if i % 5 else "sold",
        }
    sold = [p for p in world.pets.values() if p["status"] == "sold"]
    for order_id in range(1, 7):
        pet = sold[(order_id - 1) % len(sold)]
        world.orders[order_id] = {
            "id": order_id,
            "petId": pet["id"],
            "quantity": 1,
            "shipDate": f"2026-11-{order_id + 10:02d}T10:00:00.000Z",
            "status": ("placed", "approved", "delivered")[order_id % 3],
            "complete": order_id % 3 == 2,
        }
    errors = [e for p in world.pets.values() for e in _errors(spec, "Pet", p)]
    errors += [e for o in world.orders.values() for e in _errors(spec, "Order", o)]
    if errors:
        raise ValueError(f"the petstore world breaks the spec's schemas: {errors[:8]}")
    return world
