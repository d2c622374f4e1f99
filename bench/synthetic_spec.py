"""A synthetic OpenAPI 3.0 spec shaped like the big real ones that made generation superlinear.

``operations`` operations share a pool of ``schemas`` component schemas: every schema refers to a
few of the common schemas every API has (user, error, money: used everywhere) and maybe a nearby
one; some are parent/child pairs, cycles of three or tree nodes that refer to themselves; some
are ``allOf`` compositions, some ``oneOf`` unions with a discriminator mapping, some arrays. Each
operation reads or writes a handful of pool schemas, so one schema is used by many operations. Deterministic
for a given seed: the same arguments give the same document.
"""

from __future__ import annotations

import random
from typing import Any

COMMON = 40  # the first schemas are the widely reused ones (user, org, team...), all in one cycle
COMMON_REFS = 2  # refs from one schema to common ones
LOCAL_REF_SHARE = 0.5  # chance of one more ref to a nearby earlier schema
LOCAL_WINDOW = 20
OPERATION_SCHEMAS = 3  # pool schemas each operation uses


def _ref(index: int) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/S{index}"}


def _scalar(rng: random.Random, name: str) -> dict[str, Any]:
    kind = rng.choice(("string", "integer", "boolean", "number", "enum", "date"))
    described = {"description": f"The {name} of the record. See the documentation for details."}
    if kind == "enum":
        return {"type": "string", "enum": ["alpha", "beta", "gamma"], **described}
    if kind == "date":
        return {"type": "string", "format": "date-time", **described}
    if kind == "integer":
        return {"type": "integer", "minimum": 0, "maximum": 1000, **described}
    return {"type": kind, **described}


def _targets(rng: random.Random, index: int, total: int) -> list[int]:
    """Pool schemas that schema ``index`` refers to: common ones, a nearby one, and cycle partners."""
    if index < COMMON:
        # common schemas refer to each other in a ring (user -> org -> team -> user...): one big cycle
        return [(index + 1) % COMMON] + ([rng.randrange(COMMON)] if rng.random() < 0.3 else [])
    targets = [rng.randrange(COMMON) for _ in range(COMMON_REFS)]
    if rng.random() < LOCAL_REF_SHARE:
        targets.append(rng.randrange(max(COMMON, index - LOCAL_WINDOW), index) if index > COMMON else 0)
    kind = index % 30
    if kind in (0, 10) and index + 1 < total:
        targets.append(index + 1)  # parent <-> child pair
    elif kind in (1, 11):
        targets.append(index - 1)
    elif kind in (5, 15, 25):
        targets.append(index)  # a tree node: refers to itself
    elif kind == 20 and index + 2 < total:
        targets.append(index + 1)  # a cycle of three: 20 -> 21 -> 22 -> 20
    elif kind == 21 and index + 1 < total:
        targets.append(index + 1)
    elif kind == 22:
        targets.append(index - 2)
    return targets


def _pool_schema(rng: random.Random, index: int, total: int) -> dict[str, Any]:
    properties: dict[str, Any] = {f"field{n}": _scalar(rng, f"field{n}") for n in range(rng.randint(2, 6))}
    for number, target in enumerate(_targets(rng, index, total)):
        properties[f"link{number}"] = _ref(target) if number % 2 == 0 else {"type": "array", "items": _ref(target)}
    body: dict[str, Any] = {
        "type": "object",
        "title": f"S{index}",
        "description": f"Record kind {index}.\n\nLonger documentation that compaction drops.",
        "properties": properties,
        "required": list(properties)[:2],
    }
    shape = index % 7
    if shape == 3 and index > COMMON:
        return {"allOf": [_ref(rng.randrange(COMMON)), body]}
    if shape == 6 and index > COMMON:
        first, second = rng.randrange(COMMON, index), rng.randrange(COMMON, index)
        return {
            "oneOf": [_ref(first), _ref(second)],
            "discriminator": {
                "propertyName": "kind",
                "mapping": {"first": f"#/components/schemas/S{first}", "second": f"#/components/schemas/S{second}"},
            },
        }
    return body


def synthetic_spec(operations: int, schemas: int, *, seed: int = 7) -> dict[str, Any]:
    """An OpenAPI 3.0.3 document with ``operations`` operations over ``schemas`` shared schemas."""
    rng = random.Random(seed)
    pool = {f"S{i}": _pool_schema(rng, i, schemas) for i in range(schemas)}
    paths: dict[str, Any] = {}
    for number in range(operations):
        used = [rng.randrange(schemas) for _ in range(OPERATION_SCHEMAS)]
        path = f"/things{number // 4}/{{id}}" if number % 4 else f"/things{number // 4}"
        method = ("get", "post", "put", "delete")[number % 4]
        operation: dict[str, Any] = {
            "operationId": f"op{number}",
            "summary": f"Operation {number}",
            "description": f"Does thing {number}. For more information, see the docs.",
            "responses": {
                "200": {
                    "description": "ok",
                    "content": {"application/json": {"schema": _ref(used[0])}},
                },
                "default": {"description": "error", "content": {"application/json": {"schema": _ref(used[1])}}},
            },
        }
        if "{id}" in path:
            operation["parameters"] = [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]
        if method in ("post", "put"):
            operation["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": _ref(used[2])}},
            }
        paths.setdefault(path, {})[method] = operation
    return {
        "openapi": "3.0.3",
        "info": {"title": "Synthetic", "version": "1.0"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": paths,
        "components": {"schemas": pool},
    }


# Deeply nested request bodies, shaped like a big e-signature API (issue 18): an envelope holds
# recipients of several kinds, each holds tabs, tabs come in dozens of kinds of ~50 fields each,
# and every kind carries the same few shared shapes. Acyclic, so nothing is cut for recursion:
# the size comes from nesting and reuse alone.
NESTED_KINDS = 40  # tab kinds (the widest level)
NESTED_FIELDS = 50  # scalar fields of each tab kind


def _nested_pool(rng: random.Random) -> dict[str, Any]:
    pool: dict[str, Any] = {}
    pool["Money"] = {"type": "object", "properties": {"amount": {"type": "string"}, "currency": {"type": "string"}}}
    pool["Position"] = {
        "type": "object",
        "properties": {name: _scalar(rng, name) for name in ("x", "y", "page", "anchor", "offset", "units")},
    }
    pool["ErrorDetails"] = {"type": "object", "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}
    kinds = []
    for kind in range(NESTED_KINDS):
        name = f"Tab{kind}"
        fields = {f"f{n}": _scalar(rng, f"f{n}") for n in range(NESTED_FIELDS)}
        fields.update(
            position={"$ref": "#/components/schemas/Position"}, error={"$ref": "#/components/schemas/ErrorDetails"}
        )
        if kind % 5 == 0:
            fields["price"] = {"$ref": "#/components/schemas/Money"}
        pool[name] = {"type": "object", "description": f"A tab of kind {kind}.", "properties": fields}
        kinds.append(name)
    pool["Tabs"] = {
        "type": "object",
        "properties": {
            f"{k.lower()}s": {"type": "array", "items": {"$ref": f"#/components/schemas/{k}"}} for k in kinds
        },
    }
    recipient_fields = {f"r{n}": _scalar(rng, f"r{n}") for n in range(30)}
    recipient_fields["tabs"] = {"$ref": "#/components/schemas/Tabs"}
    for role in ("Signer", "Agent", "Editor", "Witness", "CarbonCopy"):
        pool[role] = {"type": "object", "description": f"A {role.lower()}.", "properties": dict(recipient_fields)}
    pool["Recipients"] = {
        "type": "object",
        "properties": {
            f"{role[0].lower()}{role[1:]}s": {"type": "array", "items": {"$ref": f"#/components/schemas/{role}"}}
            for role in ("Signer", "Agent", "Editor", "Witness", "CarbonCopy")
        },
    }
    pool["Document"] = {
        "type": "object",
        "properties": {
            **{f"d{n}": _scalar(rng, f"d{n}") for n in range(20)},
            "tabs": {"$ref": "#/components/schemas/Tabs"},
        },
    }
    pool["Envelope"] = {
        "type": "object",
        "description": "An envelope.",
        "properties": {
            **{f"e{n}": _scalar(rng, f"e{n}") for n in range(60)},
            "recipients": {"$ref": "#/components/schemas/Recipients"},
            "documents": {"type": "array", "items": {"$ref": "#/components/schemas/Document"}},
        },
    }
    return pool


def nested_body_spec(operations: int = 400, *, seed: int = 7) -> dict[str, Any]:
    """An OpenAPI 3.0.3 document of ``operations`` operations, most writing a deeply nested body."""
    rng = random.Random(seed)
    pool = _nested_pool(rng)
    bodies = ["Envelope", "Recipients", "Document", "Tabs", "Signer"]
    paths: dict[str, Any] = {}
    for number in range(operations):
        method = ("post", "put", "get", "delete")[number % 4]
        path = f"/accounts/{{accountId}}/things{number // 4}"
        operation: dict[str, Any] = {
            "operationId": f"op{number}",
            "summary": f"Operation {number}",
            "parameters": [{"name": "accountId", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {
                "200": {
                    "description": "ok",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorDetails"}}},
                }
            },
        }
        if method in ("post", "put"):
            body = bodies[number % len(bodies)]
            operation["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{body}"}}},
            }
        paths.setdefault(path, {})[method] = operation
    return {
        "openapi": "3.0.3",
        "info": {"title": "Nested Bodies", "version": "1.0"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": paths,
        "components": {"schemas": pool},
    }
