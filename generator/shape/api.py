"""Shaping: what each tool shows the model, computed from the parsed model without changing it.

Each product has one owner here and is computed once: the description (:mod:`generator.shape.describe`),
the compacted schemas (:mod:`generator.shape.compact`, when ``options.compact``), the advertised
(trimmed) output schema with its ``fields`` argument and the paging arguments (bridge/results/trim.py is
the run-time half), the descriptions said once for the whole API (:mod:`generator.shape.shared_args`),
and last the input schema those add up to. :mod:`generator.emit.catalogue` puts them in the catalogue.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bridge.contract.catalogue import JsonSchema
from bridge.contract.result_shape import FIELDS_ARG_NAMES, FIELDS_SCHEMA, MARKER_KEY, page_args
from bridge.contract.schema_bound import bounded_schema
from bridge.contract.trim_schema import advertised_schema
from generator.options import GenerateOptions, tool_description_limit_of
from generator.parse.ir import Api, Operation
from generator.shape.compact import Compacted, CompactSettings, api_boilerplate, compact_api
from generator.shape.compact_defs import share_defs
from generator.shape.describe import DescriptionRules, tool_description
from generator.shape.shared_args import shared_arguments, without_shared

MAX_SMALL_RESULT_FIELDS = 10


@dataclass(frozen=True, slots=True)
class ToolShape:
    """What one operation's tool shows the model, and the shaping the runtime must know of."""

    description: str
    input_schema: JsonSchema
    # What tools/list shows when input_schema is over the bound (bridge/contract/schema_bound.py); None: itself.
    advertised_input_schema: JsonSchema | None
    output_schema: JsonSchema | None
    fields_arg: str | None  # the argument that selects result fields; None: the tool has none
    page_args: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Shaped:
    tools: tuple[ToolShape, ...]  # one per operation of the Api, in its order
    shared_arguments: dict[str, str]  # argument name -> the description said once for every tool


@dataclass(frozen=True, slots=True)
class _Output:
    schema: JsonSchema | None
    fields_arg: str | None


def shape_api(api: Api, options: GenerateOptions) -> Shaped:
    boilerplate = api_boilerplate(api, options.boilerplate_repeats) if options.compact else frozenset()
    rules = DescriptionRules(tool_description_limit_of(options), compact=options.compact, boilerplate=boilerplate)
    compacted = _compacted(api, options, boilerplate)
    outputs = [_output(op, schemas, options) for op, schemas in zip(api.operations, compacted, strict=True)]
    arguments = [
        _with_fields_arg(schemas.arguments, output.fields_arg)
        for schemas, output in zip(compacted, outputs, strict=True)
    ]
    glossary = shared_arguments(arguments, options.shared_argument_tools) if options.compact else {}
    inputs = [without_shared(schema, glossary) for schema in arguments]
    tools = tuple(
        ToolShape(
            description=tool_description(op, rules),
            input_schema=input_schema,
            advertised_input_schema=bounded_schema(input_schema, options.max_input_schema_bytes, _tools_mode_note),
            output_schema=output.schema,
            fields_arg=output.fields_arg,
            page_args=page_args(list(schemas.arguments.get("properties") or {})),
        )
        for op, schemas, output, input_schema in zip(api.operations, compacted, outputs, inputs, strict=True)
    )
    return Shaped(tools=tools, shared_arguments=glossary)


def _tools_mode_note(path: str) -> str:
    return (
        "fields not listed, to keep this tool's schema small; the server checks them and an error names any wrong one"
    )


def _compacted(api: Api, options: GenerateOptions, boilerplate: frozenset[str]) -> tuple[Compacted, ...]:
    if not options.compact:
        return tuple(Compacted(arguments=op.arguments, result=op.result) for op in api.operations)
    settings = CompactSettings(
        property_description_limit=options.property_description_limit,
        boilerplate_repeats=options.boilerplate_repeats,
        share_min_chars=options.share_min_chars,
        boilerplate=boilerplate,
    )
    return compact_api(api, settings)


def _output(op: Operation, schemas: Compacted, options: GenerateOptions) -> _Output:
    """The output schema as trimmed results have it, and the ``fields`` argument when it pays."""
    if schemas.result is None or not options.output_schemas:
        return _Output(schema=None, fields_arg=None)
    advertised = advertised_schema(
        schemas.result,
        depth=options.output_depth,
        descriptions=options.output_descriptions,
        wrapped=op.wrap_result,
        selected=op.output_policy.fields if op.output_policy else (),
    )
    output = share_defs(advertised, min_chars=options.share_min_chars)
    properties = schemas.arguments.get("properties")
    fields_arg = _fields_arg(properties if isinstance(properties, dict) else {}) if _worth_selecting(output) else None
    return _Output(schema=output, fields_arg=fields_arg)


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


def _with_fields_arg(arguments: JsonSchema, fields_arg: str | None) -> JsonSchema:
    if fields_arg is None:
        return arguments
    return {**arguments, "properties": {**(arguments.get("properties") or {}), fields_arg: dict(FIELDS_SCHEMA)}}
