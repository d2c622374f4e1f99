"""OpenAPI 3.0/3.1 document (already loaded and bundled) → ``generator.parse.ir.Api``.

One tool per operation. Problems with one operation never stop the others: the operation is
skipped and a WARNING names it and the reason (ERROR with ``options.strict``). Operations left
out on purpose (filters, ``x-mcp: {exclude: true}``) go to ``Api.excluded``.

This module finds the operations, names and filters them, and reads what the spec and the
config's overrides say about each (annotations, scopes, output policy), looking every override up
once. Parameters are :mod:`generator.parse.params`, bodies :mod:`generator.parse.bodies`, responses
:mod:`generator.parse.responses`.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from bridge.contract.catalogue import JsonSchema, OutputPolicy, ToolAnnotationsSpec
from bridge.contract.expressions import json_pointer as jsonpointer
from generator.issues import Issue, Level
from generator.options import MAX_NAME_LENGTH_LIMIT, GenerateOptions
from generator.parse import annotations as annotation_rules
from generator.parse import bindings as bind_config
from generator.parse import longrunning, naming
from generator.parse.bodies import FILE_PATTERN as FILE_PATTERN  # re-exported: tests and callers import it from here
from generator.parse.bodies import request_body as _body
from generator.parse.context import Context as _Context
from generator.parse.context import Inputs as _Inputs
from generator.parse.context import RawOperation as _RawOperation
from generator.parse.context import Skip as _Skip
from generator.parse.context import deref as _deref
from generator.parse.context import tags as _tags
from generator.parse.context import text as _text
from generator.parse.credential_notes import config_security_issues, credential_args_warning
from generator.parse.ir import Api, Operation
from generator.parse.params import is_never_an_argument as is_never_an_argument  # re-exported for callers
from generator.parse.params import params as _params
from generator.parse.responses import responses as _responses
from generator.parse.schemas.convert import REQUEST, SchemaConverter, SchemaError
from generator.parse.schemas.one_of import without_ambiguous_one_ofs
from generator.parse.security import requirements, security_schemes, servers, used_schemes
from generator.parse.server_info import server_spec

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
MIN_NAME_LENGTH = 16  # room for a readable prefix plus "_" and the 8-digit hash

_NON_ALNUM = re.compile(r"[^a-z0-9]+")


# Entry point ----------------------------------------------------------------------------------


def parse_api(document: dict[str, Any], *, options: GenerateOptions, source_name: str) -> Api:
    """Build the intermediate model of ``document``; issues are collected in ``Api.issues``."""
    info_node = document.get("info")
    info: dict[str, Any] = info_node if isinstance(info_node, dict) else {}
    name = options.name or package_name(str(info.get("title") or ""))
    env_prefix = options.env_prefix or env_prefix_for(name)
    level = Level.ERROR if options.strict else Level.WARNING
    bindings, bind_problems = bind_config.usable(options.bindings)
    options = dataclasses.replace(options, bindings=bindings)
    ctx = _Context(document, options, source_name, SchemaConverter(document), {}, level)
    for problem in bind_problems:
        ctx.warn("config: bind", problem)
    ctx.static_headers, header_problems = bind_config.static_headers(options.headers)
    ctx.issues.extend(Issue(Level.ERROR, "config: headers", problem) for problem in header_problems)
    ctx.schemes = security_schemes(ctx, env_prefix)
    if options.security is not None:
        ctx.issues.extend(config_security_issues("config: security", options.security, ctx.schemes))
    max_length = _max_name_length(ctx)

    raws = list(_iter_operations(ctx))
    decisions = {raw.label: annotation_rules.decide(ctx, raw) for raw in raws}
    annotations = {label: decision.annotations for label, decision in decisions.items()}
    excluded = [raw.label for raw in raws if _is_excluded(raw, annotations[raw.label], options)]
    excluded_set = set(excluded)
    names = _tool_names(ctx, raws, excluded_set, max_length)
    # Listed unless left out by a filter of the operator's: --read-only leaving one out is what it says.
    every = dataclasses.replace(options, read_only=False)
    listed = {raw.label: decisions[raw.label] for raw in raws if not _is_excluded(raw, annotations[raw.label], every)}
    ctx.issues.extend(annotation_rules.disagreements(listed))

    operations: list[Operation] = []
    for raw in raws:
        if raw.label in excluded_set:
            continue
        try:
            operations.append(_build_operation(ctx, raw, names[raw.label], annotations[raw.label]))
        except _Skip as skip:
            ctx.warn(raw.label, f"skipped: {skip}")
    operations = longrunning.resolve_links(ctx, operations, ctx.cancel_links)
    if ctx.credential_args:
        ctx.warn("credentials", credential_args_warning(ctx.credential_args))
    all_params = [p for op in operations for p in op.params]
    body_fields = [f.wire for op in operations if op.body is not None for f in op.body.bound_fields]
    for key in bind_config.unused(options.bindings, all_params, body_fields):
        ctx.warn("config: bind", f"{key!r} names no parameter or body property of any generated operation; ignored")
    server = server_spec(info, options.server, ctx.issues, f"{source_name}: /info")
    return Api(
        name=name,
        title=str(info.get("title") or name),
        version=str(info.get("version") or ""),
        description=_text(info.get("description")),
        env_prefix=env_prefix,
        servers=servers(ctx),
        security_schemes=used_schemes(ctx.schemes, operations),
        operations=tuple(operations),
        issues=tuple(ctx.issues),
        excluded=tuple(excluded),
        server=server,
        headers=ctx.static_headers,
    )


def package_name(title: str) -> str:
    """``Swagger Petstore`` → ``swagger_petstore``; a valid Python package name."""
    slug = _NON_ALNUM.sub("_", title.lower()).strip("_") or "api"
    return f"api_{slug}" if slug[0].isdigit() else slug


def env_prefix_for(name: str) -> str:
    return _NON_ALNUM.sub("_", name.lower()).strip("_").upper() or "API"


def _max_name_length(ctx: _Context) -> int:
    wanted = ctx.options.max_name_length
    if MIN_NAME_LENGTH <= wanted <= MAX_NAME_LENGTH_LIMIT:
        return wanted
    detail = f"max_name_length {wanted} is outside {MIN_NAME_LENGTH}-{MAX_NAME_LENGTH_LIMIT}"
    ctx.issues.append(Issue(Level.ERROR, "options", detail))
    return min(max(wanted, MIN_NAME_LENGTH), MAX_NAME_LENGTH_LIMIT)


# Operations, filters, names -------------------------------------------------------------------


def _iter_operations(ctx: _Context) -> Iterator[_RawOperation]:
    paths = ctx.document.get("paths")
    if not isinstance(paths, dict):
        return
    seen: set[str] = set()
    for path, item_node in paths.items():
        try:
            item = _deref(ctx.document, item_node, "path item")
        except _Skip as skip:
            ctx.warn(f"{ctx.source_name}: {jsonpointer.join('paths', path)}", f"skipped: {skip}")
            continue
        if not isinstance(item, dict):
            continue
        path_params = item.get("parameters")
        path_params = path_params if isinstance(path_params, list) else []
        for key, op in item.items():
            method = str(key).upper()
            if str(key).lower() not in HTTP_METHODS:
                continue
            label = f"{method} {path}"
            if not isinstance(op, dict) or label in seen:
                problem = "declared twice" if label in seen else "not an object"
                ctx.warn(label, f"skipped: the operation is {problem}")
                continue
            seen.add(label)
            yield _RawOperation(method, str(path), op, path_params, _overrides(ctx.options, op, method, str(path)))


def _overrides(options: GenerateOptions, op: Mapping[str, Any], method: str, path: str) -> Mapping[str, Any]:
    """Overrides keyed by ``METHOD /path`` (method in any case), then by operationId (wins)."""
    merged: dict[str, Any] = {}
    label = f"{method} {path}"
    for key, value in options.overrides.items():
        verb, _, rest = key.partition(" ")
        if rest and f"{verb.upper()} {rest}" == label and isinstance(value, dict):
            merged.update(value)
    operation_id = op.get("operationId")
    by_id = options.overrides.get(operation_id) if isinstance(operation_id, str) else None
    if isinstance(by_id, dict):
        merged.update(by_id)
    return merged


def _is_excluded(raw: _RawOperation, annotations: ToolAnnotationsSpec, options: GenerateOptions) -> bool:
    x_mcp = raw.op.get("x-mcp")
    if isinstance(x_mcp, dict) and x_mcp.get("exclude") is True:
        return True
    if raw.overrides.get("exclude") is True:
        return True
    tags = _tags(raw.op)
    if options.include_tags and not any(tag in options.include_tags for tag in tags):
        return True
    if any(tag in options.exclude_tags for tag in tags):
        return True
    keys = [raw.label] + ([raw.operation_id] if raw.operation_id else [])
    if options.include_operations and not _matches(keys, options.include_operations):
        return True
    if _matches(keys, options.exclude_operations):
        return True
    return options.read_only and not annotations.readOnlyHint


def _matches(keys: Sequence[str], globs: Sequence[str]) -> bool:
    # fnmatchcase: the result must not depend on the platform's case rules.
    return any(fnmatch.fnmatchcase(key, glob) for key in keys for glob in globs)


def _tool_names(ctx: _Context, raws: Sequence[_RawOperation], excluded: set[str], max_length: int) -> dict[str, str]:
    """Names for every operation, excluded ones too, so filters never rename other tools."""
    requests = []
    for raw in raws:
        explicit = raw.overrides.get("name", raw.op.get("x-mcp-name"))
        requests.append(
            naming.NameRequest(
                label=raw.label,
                method=raw.method,
                path=raw.path,
                operation_id=raw.operation_id,
                explicit=str(explicit) if explicit is not None else None,
                report=raw.label not in excluded,
            )
        )
    names, issues = naming.assign_tool_names(requests, max_length)
    ctx.issues.extend(issues)
    return names


# One operation ---------------------------------------------------------------------------------


def _build_operation(ctx: _Context, raw: _RawOperation, tool_name: str, annotations: ToolAnnotationsSpec) -> Operation:
    try:
        return _convert_operation(ctx, raw, tool_name, annotations)
    except SchemaError as exc:
        raise _Skip(str(exc)) from exc
    except RecursionError as exc:
        raise _Skip("a schema is nested too deeply to convert") from exc


def _convert_operation(
    ctx: _Context, raw: _RawOperation, tool_name: str, annotations: ToolAnnotationsSpec
) -> Operation:
    security = requirements(ctx, raw)
    inputs = _Inputs()
    params = _params(ctx, raw, inputs)
    body = _body(ctx, raw, inputs)
    arguments: JsonSchema = {
        "type": "object",
        "properties": inputs.properties,
        "required": inputs.required,
        "additionalProperties": False,
    }
    if inputs.dependent_required:
        arguments["dependentRequired"] = inputs.dependent_required
    for key in bind_config.unmatched_own(raw.overrides.get("bind"), inputs.bind_matched):
        ctx.warn(raw.label, f"bind {key!r} names no parameter or body property of this operation; ignored")
    responses, result, wrap, accept = _responses(ctx, raw)
    detected = longrunning.detect(ctx, raw)
    if detected is not None:
        # The final answer comes from the status URL, not from the responses the spec lists.
        result, wrap = None, False
        if detected[1] is not None:
            ctx.cancel_links[raw.label] = detected[1]
    summary = _text(raw.op.get("summary"))
    return Operation(
        tool_name=tool_name,
        operation_id=raw.operation_id,
        method=raw.method,
        path=raw.path,
        summary=summary,
        description=_text(raw.op.get("description")),
        tags=_tags(raw.op),
        deprecated=raw.op.get("deprecated") is True,
        params=params,
        body=body,
        responses=responses,
        arguments=without_ambiguous_one_ofs(
            ctx.converter.with_defs(arguments, inputs.needs, REQUEST),
            lambda where, detail: ctx.warn(raw.label, f"/inputSchema{where}: {detail}"),
            ctx.one_of_cache,
        ),
        result=result,
        wrap_result=wrap,
        accept=accept,
        security=security,
        annotations=annotations,
        output_policy=_output_policy(ctx, raw),
        scopes=_scope_override(ctx, raw),
        long_running=detected[0] if detected is not None else None,
        extensions={key: value for key, value in raw.op.items() if str(key).startswith("x-")},
    )


def _scope_override(ctx: _Context, raw: _RawOperation) -> tuple[tuple[str, ...], ...] | None:
    """``--config`` ``scopes:`` of one operation: a list of scopes, or a list of such alternatives."""
    value = raw.overrides.get("scopes")
    if value is None:
        return None
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        return (tuple(value),)
    if isinstance(value, list) and all(isinstance(a, list) and all(isinstance(s, str) for s in a) for a in value):
        return tuple(tuple(a) for a in value)
    ctx.warn(raw.label, "config `scopes` must be a list of scopes or a list of lists of scopes; ignored")
    return None


def _output_policy(ctx: _Context, raw: _RawOperation) -> OutputPolicy | None:
    """Result shaping from ``x-mcp-output`` (a list of fields, or a mapping with ``fields``,
    ``max_items``, ``max_string``, ``max_bytes``) and the config's ``output`` (wins)."""
    merged: dict[str, Any] = {}
    for source, value in (("x-mcp-output", raw.op.get("x-mcp-output")), ("config output", raw.overrides.get("output"))):
        if value is None:
            continue
        if isinstance(value, list):
            value = {"fields": value}
        if not isinstance(value, dict):
            problem = f"{source} must be a list of fields or a mapping; ignored"
            ctx.issues.append(Issue(Level.WARNING, raw.label, problem))
            continue
        for key, item in value.items():
            if key == "fields" and isinstance(item, list) and all(isinstance(v, str) and v for v in item):
                merged["fields"] = tuple(item)
            elif key in ("max_items", "max_string", "max_bytes") and isinstance(item, int) and item > 0:
                merged[key] = item
            else:
                ctx.issues.append(Issue(Level.WARNING, raw.label, f"{source}: {key!r} is not understood; ignored"))
    return OutputPolicy(**merged) if merged else None
