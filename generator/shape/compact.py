"""Lean tool definitions: keep what the model needs, drop what it does not.

Applied to every operation after parsing and before rendering (``GenerateOptions.compact``).

Schemas keep every constraint: ``type``, ``required``, ``enum``, ``const``, ``format``, bounds,
``pattern``, ``default``, nullability, ``items``, ``properties``, ``additionalProperties: false``
and ``$defs`` references. They lose what only documents: ``title`` (except on ``anyOf``/``oneOf``
branches, where it tells the branches apart), ``examples`` beyond one short one, ``readOnly``/
``writeOnly`` (already applied by the converter: the properties that do not travel in a direction
are gone), ``deprecated: false``, ``$comment``, empty ``required`` and ``additionalProperties:
true``. OpenAPI-only keywords (``xml``, ``externalDocs``, ``x-*``) never get this far; they are
dropped here too should one appear.

Descriptions (schema ones here, the tool's in :mod:`generator.shape.describe`) are cut to their first
paragraph, markdown links and a few HTML tags are reduced to their text, sentences that only
point elsewhere ("For more information, see ...") are dropped, as are sentences repeated across
the whole API often enough to be boilerplate (:attr:`CompactSettings.boilerplate_repeats`, never
the first sentence a tool's description starts with: an operation description's first sentence
only when it follows the summary), and the result is cut at a word near the configured limit.

``$defs``: a definition used once (and not from inside itself) is inlined; a sub-schema repeated
within one tool schema and big enough to pay for a reference is moved to ``$defs`` once and
referenced. Recursive schemas stay ``$defs`` references, so no cycle is ever expanded, and every
``$ref`` resolves inside the tool schema.

This module walks schemas and returns new ones (the parsed model is never changed); the text rules
are in :mod:`generator.shape.compact_text`, the ``$defs`` steps in :mod:`generator.shape.compact_defs`, and
:mod:`generator.shape.api` puts the steps together.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from generator.options import (
    DEFAULT_BOILERPLATE_REPEATS,
    DEFAULT_PROPERTY_DESCRIPTION_LIMIT,
    DEFAULT_SHARE_MIN_CHARS,
)
from generator.parse.ir import Api
from generator.parse.schemas.keywords import LIST_KEYWORDS, MAP_KEYWORDS, ONE_KEYWORDS, child_schemas
from generator.shape.compact_defs import (
    CONSTRAINT_KEYWORDS,
    DEFS,
    DEFS_PREFIX,
    Fingerprints,
    JsonSchema,
    count_constraints,
    inline_single_use,
    share_defs,
)
from generator.shape.compact_text import (
    clean_text,
    compact_text,
    cut,
    find_boilerplate,
    first_paragraph,
    is_trivial_description,
)

# The text and $defs steps live in their own modules; these names stay importable from here.
__all__ = [
    "CONSTRAINT_KEYWORDS",
    "DEFS",
    "DEFS_PREFIX",
    "CompactSettings",
    "Compacted",
    "SchemaCompactor",
    "api_boilerplate",
    "clean_text",
    "compact_api",
    "compact_text",
    "count_constraints",
    "cut",
    "find_boilerplate",
    "first_paragraph",
    "inline_single_use",
    "is_trivial_description",
    "share_defs",
]

MAX_EXAMPLE_CHARS = 60

# Subschema keywords, as the converter knows them; $defs are handled on their own here.
_MAP_KEYWORDS = MAP_KEYWORDS - {"$defs", "definitions"}
_ONE_KEYWORDS = ONE_KEYWORDS
_LIST_KEYWORDS = LIST_KEYWORDS
_DROPPED = frozenset(
    {
        "readOnly",
        "writeOnly",
        "$comment",
        "xml",
        "externalDocs",
        "example",
        "discriminator",
        "nullable",
        "$schema",
        "$id",
        "$anchor",
        "definitions",
    }
)


@dataclass(frozen=True, slots=True)
class CompactSettings:
    property_description_limit: int = DEFAULT_PROPERTY_DESCRIPTION_LIMIT
    boilerplate_repeats: int = DEFAULT_BOILERPLATE_REPEATS  # 0: never drop repeated sentences
    share_min_chars: int = DEFAULT_SHARE_MIN_CHARS  # 0: never move repeated sub-schemas to $defs
    # The API's boilerplate sentences (:func:`api_boilerplate`); None: found by :func:`compact_api`.
    boilerplate: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class Compacted:
    """One operation's schemas, compacted: ``Operation.arguments`` and ``Operation.result``."""

    arguments: JsonSchema
    result: JsonSchema | None


# ------------------------------------------------------------------------------------ schemas


class SchemaCompactor:
    """Compacts schemas of one API; results of shared input dicts are shared (memo by identity)."""

    def __init__(self, settings: CompactSettings) -> None:
        self.settings = settings
        self._boilerplate = settings.boilerplate or frozenset()
        self._memo: dict[tuple[int, bool], tuple[Any, Any]] = {}
        self.titles: dict[int, str] = {}  # id(compacted dict) -> the title it had
        self.prints = Fingerprints()  # digests of compacted sub-schemas, shared by every tool

    def schema(self, node: Any, *, branch: bool = False) -> Any:
        if not isinstance(node, dict):
            return node
        key = (id(node), branch)
        hit = self._memo.get(key)
        if hit is not None and hit[0] is node:
            return hit[1]
        out = self._compact(node, branch)
        self._memo[key] = (node, out)  # keep the input alive so its id stays unique
        return out

    def _compact(self, node: Mapping[str, Any], branch: bool) -> Any:
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROPPED or key.startswith("x-"):
                continue
            if key == "properties" and isinstance(value, dict):
                out[key] = {name: _without_trivial_description(name, self.schema(sub)) for name, sub in value.items()}
            elif key in _MAP_KEYWORDS and isinstance(value, dict):
                out[key] = {name: self.schema(sub) for name, sub in value.items()}
            elif key == DEFS and isinstance(value, dict):
                out[key] = {name: self.schema(sub) for name, sub in value.items()}
            elif key in _LIST_KEYWORDS and isinstance(value, list):
                in_branch = key in ("anyOf", "oneOf")
                out[key] = [self.schema(sub, branch=in_branch) for sub in value]
            elif key in _ONE_KEYWORDS:
                out[key] = self.schema(value)
            else:
                out[key] = value
        title = out.pop("title", None)
        description = out.get("description")
        if isinstance(description, str):
            text = compact_text(description, self.settings.property_description_limit, self._boilerplate)
            if text and text != title:
                out["description"] = text
            else:
                del out["description"]
        if branch and isinstance(title, str) and title and "description" not in out:
            out["title"] = title
        if out.get("deprecated") is False:
            del out["deprecated"]
        required = out.get("required")
        if isinstance(required, list):
            if required:
                out["required"] = list(dict.fromkeys(required))
            else:
                del out["required"]
        for key in ("additionalProperties", "unevaluatedProperties"):
            if out.get(key) is True or out.get(key) == {}:
                del out[key]
        kind = out.get("type")
        if isinstance(kind, list) and len(kind) == 1:
            out["type"] = kind[0]
        examples = out.pop("examples", None)
        if isinstance(examples, list) and examples:
            first = json.dumps(examples[0], ensure_ascii=False)
            if len(first) <= MAX_EXAMPLE_CHARS and json.dumps(out.get("default"), ensure_ascii=False) != first:
                out["examples"] = examples[:1]
        all_of = out.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and out.keys() == {"allOf"}:
            return all_of[0]
        if isinstance(title, str) and title:
            self.titles[id(out)] = title
        return out


def _without_trivial_description(name: str, schema: Any) -> Any:
    if isinstance(schema, dict):
        description = schema.get("description")
        if isinstance(description, str) and is_trivial_description(name, description):
            return {k: v for k, v in schema.items() if k != "description"}
    return schema


# --------------------------------------------------------------------------------- operations


def _schema_texts(node: Any, seen: set[int]) -> Iterator[str]:
    stack = [node]
    while stack:
        current = stack.pop()
        if not isinstance(current, dict) or id(current) in seen:
            continue
        seen.add(id(current))
        description = current.get("description")
        if isinstance(description, str):
            yield description
        stack.extend(child_schemas(current))


def _all_texts(api: Api) -> Iterator[str | tuple[str, bool]]:
    seen: set[int] = set()
    for op in api.operations:
        if op.description:
            yield op.description, bool(op.summary)
        yield from _schema_texts(op.arguments, seen)
        if op.result is not None:
            yield from _schema_texts(op.result, seen)


def api_boilerplate(api: Api, repeats: int) -> frozenset[str]:
    """Sentences repeated often enough across the API's descriptions to be boilerplate."""
    return find_boilerplate(_all_texts(api), repeats) if repeats > 0 else frozenset()


def compact_schema(schema: JsonSchema, compactor: SchemaCompactor) -> JsonSchema:
    compacted = compactor.schema(schema)
    assert isinstance(compacted, dict)
    return share_defs(
        compacted, min_chars=compactor.settings.share_min_chars, titles=compactor.titles, prints=compactor.prints
    )


def compact_api(api: Api, settings: CompactSettings) -> tuple[Compacted, ...]:
    """Every operation's schemas compacted, in operation order (one compactor: shared parts are
    compacted once and share their ``$defs`` fingerprints)."""
    if settings.boilerplate is None:
        settings = CompactSettings(
            property_description_limit=settings.property_description_limit,
            boilerplate_repeats=settings.boilerplate_repeats,
            share_min_chars=settings.share_min_chars,
            boilerplate=api_boilerplate(api, settings.boilerplate_repeats),
        )
    compactor = SchemaCompactor(settings)
    compacted = []
    for op in api.operations:
        # Result before arguments: the fingerprints are shared by every call, so order is output.
        result = compact_schema(op.result, compactor) if op.result is not None else None
        compacted.append(Compacted(arguments=compact_schema(op.arguments, compactor), result=result))
    return tuple(compacted)
