"""Output shaping of every operation: the advertised (trimmed) output schema, the ``fields`` and
paging arguments, the output policy, and argument descriptions said once for the whole API.

bridge/trim.py is the run-time half. :func:`lean_api` runs compaction first when it is on.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from bridge.catalogue import OutputPolicy
from bridge.result_shape import FIELDS_ARG_NAMES, FIELDS_SCHEMA, MARKER_KEY, page_args
from bridge.trim_schema import advertised_schema
from generator.compact import CompactSettings, compact_api
from generator.compact_defs import share_defs
from generator.ir import Api, Operation
from generator.issues import Issue, Level
from generator.options import GenerateOptions

SHARED_ARGUMENT_SHARE = 0.8


def _operation_overrides(options: GenerateOptions, op: Operation) -> Mapping[str, Any]:
    """Config overrides of one operation: ``METHOD /path`` first, then operationId (wins)."""
    merged: dict[str, Any] = {}
    for key, value in options.overrides.items():
        verb, _, rest = key.partition(" ")
        if rest and f"{verb.upper()} {rest}" == op.label and isinstance(value, dict):
            merged.update(value)
    by_id = options.overrides.get(op.operation_id) if op.operation_id else None
    if isinstance(by_id, dict):
        merged.update(by_id)
    return merged


def output_policy(op: Operation, options: GenerateOptions) -> tuple[OutputPolicy | None, list[Issue]]:
    """The operation's result shaping from ``x-mcp-output`` (a list of fields, or a mapping with
    ``fields``, ``max_items``, ``max_string``, ``max_bytes``) and the config's ``output`` (wins)."""
    issues: list[Issue] = []
    merged: dict[str, Any] = {}
    for source, raw in (
        ("x-mcp-output", op.extensions.get("x-mcp-output")),
        ("config output", _operation_overrides(options, op).get("output")),
    ):
        if raw is None:
            continue
        if isinstance(raw, list):
            raw = {"fields": raw}
        if not isinstance(raw, dict):
            issues.append(Issue(Level.WARNING, op.label, f"{source} must be a list of fields or a mapping; ignored"))
            continue
        for key, value in raw.items():
            if key == "fields" and isinstance(value, list) and all(isinstance(v, str) and v for v in value):
                merged["fields"] = tuple(value)
            elif key in ("max_items", "max_string", "max_bytes") and isinstance(value, int) and value > 0:
                merged[key] = value
            else:
                issues.append(Issue(Level.WARNING, op.label, f"{source}: {key!r} is not understood; ignored"))
    return (OutputPolicy(**merged) if merged else None), issues


MAX_SMALL_RESULT_FIELDS = 10


def _worth_selecting(advertised: Mapping[str, Any]) -> bool:
    """Whether a ``fields`` argument can make results much smaller: for lists, for objects with
    many fields and for results of unknown shape; not for a result known to be a few fields."""
    properties = {k: v for k, v in (advertised.get("properties") or {}).items() if k != MARKER_KEY}
    if not properties or len(properties) > MAX_SMALL_RESULT_FIELDS:
        return True
    if any(key in advertised for key in ("anyOf", "allOf", "additionalProperties", "patternProperties")):
        return True
    for prop in properties.values():
        if not isinstance(prop, dict):
            return True
        kind = prop.get("type")
        kinds = kind if isinstance(kind, list) else [kind]
        if "array" in kinds or kind is None:
            return True
    return False


def _fields_arg(properties: Mapping[str, Any]) -> str | None:
    return next((name for name in FIELDS_ARG_NAMES if name not in properties), None)


def shape_operation(op: Operation, options: GenerateOptions) -> tuple[Operation, list[Issue]]:
    """Output schema as trimmed results have it, the ``fields`` argument, paging arguments and the
    operation's output policy, recorded in the binding (bridge/trim.py is the other half)."""
    policy, issues = output_policy(op, options)
    properties = op.input_schema.get("properties")
    names = list(properties) if isinstance(properties, dict) else []
    binding_changes: dict[str, Any] = {"output": policy, "page_args": page_args(names)}
    input_schema = op.input_schema
    output = op.output_schema
    if output is not None and not options.output_schemas:
        output = None
    if output is not None:
        advertised = advertised_schema(
            output,
            depth=options.output_depth,
            descriptions=options.output_descriptions,
            wrapped=op.binding.wrap_output,
            selected=policy.fields if policy else (),
        )
        output = share_defs(advertised, min_chars=options.share_min_chars)
        fields_arg = (
            _fields_arg(properties if isinstance(properties, dict) else {}) if _worth_selecting(output) else None
        )
        if fields_arg is not None:
            binding_changes["fields_arg"] = fields_arg
            input_schema = {**input_schema, "properties": {**(properties or {}), fields_arg: dict(FIELDS_SCHEMA)}}
    binding = dataclasses.replace(op.binding, **binding_changes)
    return replace(op, input_schema=input_schema, output_schema=output, binding=binding), issues


def shared_arguments(api: Api, min_tools: int) -> tuple[Api, dict[str, str]]:
    """Arguments described identically in at least ``min_tools`` tools lose that description,
    which is returned (name -> description) to be said once in the server's instructions."""
    if min_tools <= 0:
        return api, {}
    counts: Counter[tuple[str, str]] = Counter()
    for op in api.operations:
        for name, prop in (op.input_schema.get("properties") or {}).items():
            if isinstance(prop, dict) and isinstance(prop.get("description"), str):
                counts[(name, prop["description"])] += 1
    uses: Counter[str] = Counter()
    for op in api.operations:
        uses.update(list(op.input_schema.get("properties") or {}))
    # Only a description that is the argument's meaning in (nearly) every tool that has it.
    shared = {
        (name, text) for (name, text), n in counts.items() if n >= min_tools and n >= SHARED_ARGUMENT_SHARE * uses[name]
    }
    if not shared:
        return api, {}
    operations = []
    for op in api.operations:
        properties = op.input_schema.get("properties") or {}
        changed = {
            name: {k: v for k, v in prop.items() if k != "description"}
            for name, prop in properties.items()
            if isinstance(prop, dict) and (name, prop.get("description")) in shared
        }
        if changed:
            op = replace(op, input_schema={**op.input_schema, "properties": {**properties, **changed}})
        operations.append(op)
    glossary = dict(sorted(shared))
    return replace(api, operations=tuple(operations)), glossary


def lean_api(api: Api, options: GenerateOptions) -> Api:
    """Compaction (when ``options.compact``) and output shaping of every operation.

    Shared argument descriptions (:func:`shared_arguments`) are a catalogue-level step on top.
    """
    if options.compact:
        settings = CompactSettings(
            description_limit=min(options.tool_description_limit, options.description_limit),
            property_description_limit=options.property_description_limit,
            boilerplate_repeats=options.boilerplate_repeats,
            share_min_chars=options.share_min_chars,
        )
        api = compact_api(api, settings)
    operations = []
    issues = list(api.issues)
    for op in api.operations:
        shaped, found = shape_operation(op, options)
        operations.append(shaped)
        issues.extend(found)
    return replace(api, operations=tuple(operations), issues=tuple(issues))
