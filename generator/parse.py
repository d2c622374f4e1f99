"""OpenAPI 3.0/3.1 document (already loaded and bundled) → ``generator.ir.Api``.

One tool per operation. Problems with one operation never stop the others: the operation is
skipped and a WARNING names it and the reason (ERROR with ``options.strict``). Operations left
out on purpose (filters, ``x-mcp: {exclude: true}``) go to ``Api.excluded``.

Every declared parameter becomes an argument, except the ones OpenAPI itself says to ignore
(``Accept``, ``Content-Type`` and ``Authorization`` headers), the slot of any apiKey scheme (the
runtime fills that one in from the environment; see ``generator.param_rules``), query pairs the
path template fixes, and parameters the config binds (``generator.bindings``).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bridge import json_pointer as jsonpointer
from bridge.catalogue import (
    BoundValue,
    HttpBinding,
    JsonSchema,
    ParamBinding,
    ParamLocation,
    ToolAnnotationsSpec,
)
from bridge.media_types import base_media as _base_media_type
from bridge.path_template import split_template
from bridge.wire_rules import FORBIDDEN_HEADERS
from generator import bindings as bind_config
from generator import naming, param_rules
from generator.bodies import FILE_PATTERN as FILE_PATTERN  # re-exported: tests and callers import it from here
from generator.bodies import media_kind as _media_kind
from generator.bodies import request_body as _body
from generator.ir import Api, Operation, Param, Response
from generator.issues import Issue, Level
from generator.options import MAX_NAME_LENGTH_LIMIT, GenerateOptions
from generator.parse_context import Context as _Context
from generator.parse_context import RawOperation as _RawOperation
from generator.parse_context import Skip as _Skip
from generator.parse_context import deref as _deref
from generator.parse_context import tags as _tags
from generator.parse_context import text as _text
from generator.schemas import REQUEST, RESPONSE, Schema, SchemaConverter, SchemaError
from generator.security import requirements, security_schemes, servers, used_schemes

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
PARAM_LOCATIONS: tuple[ParamLocation, ...] = ("path", "query", "header", "cookie")
# OpenAPI: header parameters with these names "SHALL be ignored" (the media type and auth
# machinery set them).
IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})
MIN_NAME_LENGTH = 16  # room for a readable prefix plus "_" and the 8-digit hash
TRUNCATION_MARKER = " … (truncated)"
DEPRECATED_PREFIX = "[Deprecated] "

# (readOnlyHint, destructiveHint, idempotentHint) per method; openWorldHint is always true.
ANNOTATIONS_BY_METHOD: dict[str, tuple[bool, bool, bool]] = {
    "GET": (True, False, True),
    "HEAD": (True, False, True),
    "OPTIONS": (True, False, True),
    "TRACE": (True, False, True),
    "POST": (False, False, False),
    "PUT": (False, True, True),
    "PATCH": (False, True, False),
    "DELETE": (False, True, True),
}
ANNOTATION_KEYS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
_PATH_VARIABLE = re.compile(r"{([^{}]+)}")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


@dataclass(slots=True)
class _Inputs:
    """The input schema under construction."""

    names: naming.ArgNames = field(default_factory=naming.ArgNames)
    properties: dict[str, Schema] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    needs: set[str] = field(default_factory=set)
    # An optional body's required properties: required as soon as any body field is given.
    dependent_required: dict[str, list[str]] = field(default_factory=dict)


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
    ctx.schemes = security_schemes(ctx, env_prefix)
    max_length = _max_name_length(ctx)

    raws = list(_iter_operations(ctx))
    annotations = {raw.label: _annotations(ctx, raw) for raw in raws}
    excluded = [raw.label for raw in raws if _is_excluded(raw, annotations[raw.label], options)]
    excluded_set = set(excluded)
    names = _tool_names(ctx, raws, excluded_set, max_length)

    operations: list[Operation] = []
    for raw in raws:
        if raw.label in excluded_set:
            continue
        try:
            operations.append(_build_operation(ctx, raw, names[raw.label], annotations[raw.label]))
        except _Skip as skip:
            ctx.warn(raw.label, f"skipped: {skip}")
    all_params = [p for op in operations for p in op.binding.params]
    for key in bind_config.unused(options.bindings, all_params):
        ctx.warn("config: bind", f"{key!r} names no parameter of any generated operation; ignored")
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


def _annotations(ctx: _Context, raw: _RawOperation) -> ToolAnnotationsSpec:
    read_only, destructive, idempotent = ANNOTATIONS_BY_METHOD.get(raw.method, (False, True, False))
    values: dict[str, bool] = {
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": True,
    }
    for source, extra in (
        ("x-mcp-annotations", raw.op.get("x-mcp-annotations")),
        ("overrides", raw.overrides.get("annotations")),
    ):
        if extra is None:
            continue
        if not isinstance(extra, dict):
            ctx.warn(raw.label, f"{source} must be a mapping; ignored")
            continue
        for key, value in extra.items():
            if key in ANNOTATION_KEYS and isinstance(value, bool):
                values[key] = value
            else:
                ctx.warn(raw.label, f"{source}: {key!r} must be one of {', '.join(ANNOTATION_KEYS)} with a boolean")
    return ToolAnnotationsSpec(**values)


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
    body, body_binding = _body(ctx, raw, inputs)
    input_schema: JsonSchema = {
        "type": "object",
        "properties": inputs.properties,
        "required": inputs.required,
        "additionalProperties": False,
    }
    if inputs.dependent_required:
        input_schema["dependentRequired"] = inputs.dependent_required
    input_schema = ctx.converter.with_defs(input_schema, inputs.needs, REQUEST)
    responses, output_schema, wrap, accept = _responses(ctx, raw)
    summary = _text(raw.op.get("summary"))
    description = _text(raw.op.get("description"))
    deprecated = raw.op.get("deprecated") is True
    binding = HttpBinding(
        method=raw.method,
        path=raw.path,
        params=tuple(_param_binding(p) for p in params),
        body=body_binding,
        security=security,
        wrap_output=wrap,
        accept=accept,
    )
    return Operation(
        tool_name=tool_name,
        operation_id=raw.operation_id,
        method=raw.method,
        path=raw.path,
        summary=summary,
        description=description,
        tags=_tags(raw.op),
        deprecated=deprecated,
        params=params,
        body=body,
        responses=responses,
        title=summary,
        tool_description=tool_description(summary, description, deprecated, ctx.options.description_limit, raw.label),
        input_schema=input_schema,
        output_schema=output_schema,
        annotations=annotations,
        binding=binding,
        extensions={key: value for key, value in raw.op.items() if str(key).startswith("x-")},
        scopes=_scope_override(ctx, raw),
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


def tool_description(summary: str | None, description: str | None, deprecated: bool, limit: int, label: str) -> str:
    """Summary, blank line, description; ``[Deprecated]`` first; cut at a word near ``limit``."""
    parts = [part for part in (summary, description) if part]
    if len(parts) == 2 and parts[0] == parts[1]:
        parts = parts[:1]
    text = "\n\n".join(parts) or label
    if deprecated:
        text = DEPRECATED_PREFIX + text
    return truncate(text, limit)


def truncate(text: str, limit: int) -> str:
    """Cut ``text`` to at most ``limit`` characters at a word boundary, ending with a marker."""
    if len(text) <= limit:
        return text
    room = max(limit - len(TRUNCATION_MARKER), 0)
    cut = text[:room]
    if room < len(text) and not text[room].isspace():
        head, space, _ = cut.rpartition(" ")
        # Keep the hard cut when the only space is far back (a long URL or code line).
        if space and len(head) >= room // 2:
            cut = head
    return cut.rstrip() + TRUNCATION_MARKER


# Parameters -------------------------------------------------------------------------------------


def _params(ctx: _Context, raw: _RawOperation, inputs: _Inputs) -> tuple[Param, ...]:
    declared = _merged_params(ctx, raw)
    credentials = param_rules.credential_slots(ctx.schemes)
    template, literal = split_template(raw.path)
    fixed = {name for name, _ in literal}
    # The operator may bind a credential slot (a scheme the operation does not list), never a
    # header no argument may set nor a pair the template fixes.
    bindable = [p for p in declared if not is_never_an_argument(p["in"], p["name"]) and not _is_fixed(p, fixed)]
    binds = bind_config.for_operation(
        ctx.options.bindings, raw.overrides.get("bind"), bindable, lambda detail: ctx.warn(raw.label, detail)
    )
    kept = [p for p in declared if (p["name"], p["in"]) in binds or not _is_implicit(p, credentials, fixed)]
    _check_path_variables(template, kept)
    # Names an object parameter's members may never take, per location.
    taken: dict[str, set[str]] = {
        location: {name for loc, name in credentials if loc == location} for location in PARAM_LOCATIONS
    }
    taken["query"] |= fixed
    for node in kept:
        taken[node["in"]].add(node["name"])
    params: list[Param] = []
    for location in PARAM_LOCATIONS:  # priority order: path keeps a contested name
        for node in kept:
            if node["in"] == location:
                reserved = taken[location] - {node["name"]}
                params.append(_param(ctx, node, inputs, reserved, binds.get((node["name"], location))))
    return tuple(params)


def _merged_params(ctx: _Context, raw: _RawOperation) -> list[dict[str, Any]]:
    """Path-level parameters, replaced or extended by operation-level ones, keyed by (name, in)."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    op_params = raw.op.get("parameters", [])
    if not isinstance(op_params, list):
        raise _Skip("parameters must be a list")
    for node in [*raw.path_params, *op_params]:
        param = _deref(ctx.document, node, "parameter")
        if not isinstance(param, dict):
            raise _Skip("a parameter is not an object")
        name, location = param.get("name"), param.get("in")
        if not isinstance(name, str) or not name:
            raise _Skip("a parameter has no name")
        if location not in PARAM_LOCATIONS:
            raise _Skip(f"parameter {name!r} has unsupported location {location!r}")
        merged[(name, location)] = param
    return list(merged.values())


def is_never_an_argument(location: str, name: str) -> bool:
    """Headers no argument may set: the ones OpenAPI says to ignore, and the ones the runtime
    never sends (framing, hop-by-hop, Host, Cookie, X-Forwarded-*): an argument that is silently
    dropped would mislead the model."""
    lowered = name.lower()
    return location == "header" and (
        lowered in IGNORED_HEADERS or lowered in FORBIDDEN_HEADERS or lowered.startswith("x-forwarded-")
    )


def _is_implicit(param: Mapping[str, Any], credentials: set[tuple[str, str]], fixed: set[str]) -> bool:
    """Parameters left out by design: headers no argument may set, apiKey slots, and query pairs
    the path template fixes (``/?Action=X``: the runtime sends those)."""
    location, name = param["in"], param["name"]
    if is_never_an_argument(location, name):
        return True
    if _is_fixed(param, fixed):
        return True
    return (location, param_rules.slot_key(location, name)) in credentials


def _is_fixed(param: Mapping[str, Any], fixed: set[str]) -> bool:
    return param["in"] == "query" and param["name"] in fixed


def _check_path_variables(path: str, params: Sequence[Mapping[str, Any]]) -> None:
    declared = {p["name"] for p in params if p["in"] == "path"}
    missing = [name for name in _PATH_VARIABLE.findall(path) if name not in declared]
    if missing:
        raise _Skip(f"path variable {{{missing[0]}}} has no path parameter")


def _param(
    ctx: _Context, node: Mapping[str, Any], inputs: _Inputs, reserved: set[str], bound: BoundValue | None
) -> Param:
    name: str = node["name"]
    location: ParamLocation = node["in"]
    raw_schema, content_type = _param_schema(node)
    converted = ctx.converter.convert(raw_schema, REQUEST)
    description = _text(node.get("description"))
    deprecated = node.get("deprecated") is True
    schema = _described(converted.schema, description)
    if deprecated and isinstance(schema, dict):
        schema = {**schema, "deprecated": True}
    required = location == "path" or node.get("required") is True
    if location == "path":
        schema = _non_empty(schema)
    elif required:
        # An empty required array or object has no serialisation: it would leave the parameter out.
        schema = _non_empty(schema, kinds=("array", "object"))
    style = node.get("style")
    style = style if isinstance(style, str) else ("form" if location in ("query", "cookie") else "simple")
    explode = node.get("explode")
    explode = explode if isinstance(explode, bool) else style == "form"
    members: tuple[str, ...] = ()
    free_members = False
    slots: tuple[str, ...] = ()
    if param_rules.members_become_names(location, style, explode, content_type):
        schema, members, free_members = param_rules.restrict_members(ctx.converter, schema, reserved)
        if free_members:
            # The runtime knows the other parameters, not the credential slots.
            slots = param_rules.slot_names(ctx.schemes, location)
    if bound is not None:
        arg = ""  # not an argument: the runtime fills it in
    else:
        inputs.needs.update(converted.needs)
        arg = inputs.names.claim(name, location)
        inputs.properties[arg] = schema
        if required:
            inputs.required.append(arg)
    return Param(
        wire_name=name,
        arg_name=arg,
        location=location,
        required=required,
        schema=schema if isinstance(schema, dict) else {},
        style=style,
        explode=explode,
        description=description,
        allow_reserved=node.get("allowReserved") is True,
        content_type=content_type,
        deprecated=deprecated,
        members=members,
        free_members=free_members,
        reserved=slots,
        bound=bound,
    )


_NON_EMPTY = {"string": ("minLength", 1), "array": ("minItems", 1), "object": ("minProperties", 1)}


def _non_empty(schema: Schema, kinds: tuple[str, ...] = ("string", "array", "object")) -> Schema:
    """A path value must fill its segment: the runtime refuses empty ones, so the schema says so too."""
    if not isinstance(schema, dict) or schema.get("type") not in kinds:
        return schema
    bound = _NON_EMPTY.get(schema["type"])
    if bound is None or schema.get(bound[0], 0) >= 1:
        return schema
    return {**schema, bound[0]: bound[1]}


def _param_schema(node: Mapping[str, Any]) -> tuple[Any, str | None]:
    """The raw schema of a parameter and, for ``content`` parameters, its media type."""
    if "schema" in node:
        return node["schema"], None
    content = node.get("content")
    if isinstance(content, dict) and content:
        media_type, media = next(iter(content.items()))
        schema = media.get("schema", {}) if isinstance(media, dict) else {}
        return schema, str(media_type)
    raise _Skip(f"parameter {node['name']!r} has neither schema nor content")


def _param_binding(param: Param) -> ParamBinding:
    return ParamBinding(
        arg=param.arg_name,
        wire=param.wire_name,
        location=param.location,
        style=param.style,
        explode=param.explode,
        required=param.required,
        allow_reserved=param.allow_reserved,
        content_type=param.content_type,
        members=param.members,
        free_members=param.free_members,
        reserved=param.reserved,
        bound=param.bound,
    )


def _described(schema: Schema, description: str | None) -> Schema:
    """A copy of ``schema`` carrying ``description`` (converted schemas are shared: never mutate)."""
    base: dict[str, Any] = schema if isinstance(schema, dict) else ({} if schema else {"not": {}})
    if description and base.get("description") != description:
        return {**base, "description": description}
    return base


# Responses ---------------------------------------------------------------------------------------


def _responses(
    ctx: _Context, raw: _RawOperation
) -> tuple[tuple[Response, ...], JsonSchema | None, bool, tuple[str, ...]]:
    """IR responses, the output schema, whether it wraps the body, and the success media types."""
    nodes = raw.op.get("responses")
    if not isinstance(nodes, dict):
        return (), None, False, ()
    success = _success_statuses([str(status) for status in nodes])
    responses: list[Response] = []
    contents: dict[str, Mapping[str, Any]] = {}
    for status, node in nodes.items():
        try:
            response = _deref(ctx.document, node, "response")
        except _Skip:
            if str(status) in success:
                raise
            continue  # a broken error response does not affect the tool
        content = response.get("content") if isinstance(response, dict) else None
        contents[str(status)] = content if isinstance(content, dict) else {}
        responses.append(_response(ctx, str(status), response, contents[str(status)], str(status) in success))
    if any(status in NO_BODY_STATUSES for status in success):
        # A 204/205 answer has no body whatever the spec declares for it, so no structured content.
        output, wrap = None, False
    else:
        output, wrap = _output_schema(ctx, [contents[s] for s in success if s in contents])
    accept = _accept(str(m) for s in success for m in contents.get(s, {}))
    return tuple(responses), output, wrap, accept


NO_BODY_STATUSES = frozenset({"204", "205"})


def _accept(media_types: Iterable[str]) -> tuple[str, ...]:
    """The success media types, JSON ones first: servers pick the first type they can produce, and
    only JSON answers give structured content."""
    unique = list(dict.fromkeys(media_types))
    return tuple(sorted(unique, key=lambda m: _media_kind(m) != "json"))


def _success_statuses(statuses: Sequence[str]) -> list[str]:
    """Explicit 2xx codes in numeric order, then 2XX; ``default`` only when there is no 2xx."""
    explicit = sorted((s for s in statuses if len(s) == 3 and s.startswith("2") and s.isdigit()), key=int)
    ranges = [s for s in statuses if s.upper() == "2XX"]
    if explicit or ranges:
        return explicit + ranges
    return [s for s in statuses if s == "default"]


def _json_media(content: Mapping[str, Any]) -> tuple[str, Any] | None:
    """The JSON media type of a response and its raw schema; ``*/*`` counts when it has a schema."""
    wildcard = None
    for media_type, media in content.items():
        schema = media.get("schema") if isinstance(media, dict) else None
        if _media_kind(str(media_type)) == "json":
            return str(media_type), schema if schema is not None else {}
        if _base_media_type(str(media_type)) == "*/*" and schema is not None and wildcard is None:
            wildcard = (str(media_type), schema)
    return wildcard


def _response(ctx: _Context, status: str, response: Any, content: Mapping[str, Any], success: bool) -> Response:
    description = _text(response.get("description")) if isinstance(response, dict) else None
    json_media = _json_media(content)
    if json_media is None:
        return Response(status, str(next(iter(content))) if content else None, None, description)
    media_type, raw_schema = json_media
    try:
        converted = ctx.converter.convert(raw_schema, RESPONSE)
    except SchemaError:
        if success:
            raise
        return Response(status, media_type, None, description)
    schema = converted.schema if isinstance(converted.schema, dict) else {}
    return Response(status, media_type, ctx.converter.with_defs(schema, converted.needs, RESPONSE), description)


def _output_schema(ctx: _Context, contents: Sequence[Mapping[str, Any]]) -> tuple[JsonSchema | None, bool]:
    """The lowest success response with a JSON body gives the output schema.

    None when another success response has no JSON body (a 204 next to a 200, say): a declared
    output schema obliges every successful call to return structured content, and MCP clients
    reject a result without it.
    """
    found = [_json_media(content) for content in contents]
    if not found or any(media is None for media in found):
        return None, False
    first = found[0]
    assert first is not None
    root = ctx.converter.convert_root(first[1], RESPONSE)
    schema = root.schema
    if ctx.converter.is_object(schema, RESPONSE):
        assert isinstance(schema, dict)
        out = schema if schema.get("type") == "object" else {**schema, "type": "object"}
        return ctx.converter.with_defs(out, root.needs, RESPONSE), False
    wrapped: JsonSchema = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
    return ctx.converter.with_defs(wrapped, root.needs, RESPONSE), True
