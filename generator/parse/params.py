"""One operation's parameters → :class:`~generator.parse.ir.Param` values and their tool arguments.

Every declared parameter becomes an argument, except the ones OpenAPI itself says to ignore
(``Accept``, ``Content-Type`` and ``Authorization`` headers), the slot of any apiKey scheme (the
runtime fills that one in from the scheme's credential; see ``generator.parse.param_rules``), query
pairs the path template fixes, parameters the config binds (``generator.parse.bindings``), and
unbound ones that carry a credential (``bridge.contract.wire_rules``; one warning for the API).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from bridge.contract.catalogue import BoundValue, ParamLocation
from bridge.contract.path_template import split_template
from bridge.contract.wire_rules import FORBIDDEN_HEADERS, credential_name, describes_credential, may_hold_text
from generator.issues import Issue, Level
from generator.parse import bindings as bind_config
from generator.parse import param_rules
from generator.parse.constants import spec_constant
from generator.parse.context import Context as _Context
from generator.parse.context import Inputs as _Inputs
from generator.parse.context import RawOperation as _RawOperation
from generator.parse.context import Skip as _Skip
from generator.parse.context import deref as _deref
from generator.parse.context import described as _described
from generator.parse.context import text as _text
from generator.parse.ir import Param
from generator.parse.schemas.bad_defaults import without_bad_examples
from generator.parse.schemas.convert import REQUEST
from generator.parse.schemas.keywords import Schema

PARAM_LOCATIONS: tuple[ParamLocation, ...] = ("path", "query", "header", "cookie")
# OpenAPI: header parameters with these names "SHALL be ignored" (the media type and auth
# machinery set them).
IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})
_PATH_VARIABLE = re.compile(r"{([^{}]+)}")


def params(ctx: _Context, raw: _RawOperation, inputs: _Inputs) -> tuple[Param, ...]:
    declared = _merged_params(ctx, raw)
    credentials = param_rules.credential_slots(ctx.schemes)
    template, literal = split_template(raw.path)
    fixed = {name for name, _ in literal}
    # The operator may bind a credential slot (a scheme the operation does not list), never a
    # header no argument may set nor a pair the template fixes.
    bindable = [p for p in declared if not is_never_an_argument(p["in"], p["name"]) and not _is_fixed(p, fixed)]
    inputs.bind = bind_config.merged(ctx.options.bindings, raw.overrides.get("bind"))
    binds = bind_config.for_operation(
        inputs.bind, bindable, lambda detail: ctx.warn(raw.label, detail), inputs.bind_matched
    )
    static = {header.name.lower(): header.value for header in ctx.static_headers}
    for node in bindable:  # the operator's static header replaces a declared one
        if node["in"] == "header" and node["name"].lower() in static:
            binds[(node["name"], "header")] = static[node["name"].lower()]
    # A parameter in a credential slot is filled from its scheme's credential on every call.
    for node in bindable:
        key = (node["name"], node["in"])
        if key not in binds and (slot := param_rules.slot_binding(ctx.schemes, node["in"], node["name"])) is not None:
            binds[key] = slot
    # A required parameter with one possible value is sent as that constant (generator/parse/constants.py).
    for node in bindable:
        key = (node["name"], node["in"])
        if key not in binds and (constant := spec_constant(node, _info_version(ctx))) is not None:
            binds[key] = constant[0]
            _note_constant(ctx, node, constant[0].value or "", constant[1])
    kept = [p for p in declared if (p["name"], p["in"]) in binds or not _is_implicit(p, credentials, fixed)]
    kept = _without_credentials(ctx, raw, kept, binds)
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


def _without_credentials(
    ctx: _Context, raw: _RawOperation, nodes: list[dict[str, Any]], binds: Mapping[tuple[str, str], Any]
) -> list[dict[str, Any]]:
    """``nodes`` without the unbound parameters that carry a credential (P11): the model never
    supplies one. Each is counted for the one generate-time warning; a path parameter cannot be
    left out, so its operation is skipped unless the operator binds it."""
    out = []
    for node in nodes:
        name, location = node["name"], node["in"]
        reason = None if (name, location) in binds else credential_param(ctx, node)
        if reason is None:
            out.append(node)
            continue
        if location == "path":
            raise _Skip(f"path parameter {name!r} carries a credential ({reason}); bind it with `bind:` in --config")
        ctx.credential_args.setdefault(f"{name} ({location})", set()).add(raw.label)
    return out


def credential_param(ctx: _Context, node: Mapping[str, Any]) -> str | None:
    """Why a declared parameter carries a credential (its name, or a query, header or cookie
    parameter's description), or None; a numeric or boolean one never does."""
    name, location = node["name"], node["in"]
    description = _text(node.get("description"))
    reason = credential_name(location, name, description) or describes_credential(location, name, description)
    if reason is None:
        return None
    try:
        schema = _deref(ctx.document, node.get("schema", {}), "schema")
    except _Skip:
        schema = {}  # the conversion reports it; until then, it may hold text
    return reason if may_hold_text(schema) else None


def _info_version(ctx: _Context) -> str:
    info = ctx.document.get("info")
    version = info.get("version") if isinstance(info, Mapping) else None
    return str(version) if isinstance(version, str | int | float) else ""


def _note_constant(ctx: _Context, node: Mapping[str, Any], value: str, why: str) -> None:
    """One NOTE per parameter and value: the model is not asked for it, the bridge sends it."""
    key = (str(node["in"]), str(node["name"]), value)
    if key in ctx.constant_notes:
        return
    ctx.constant_notes.add(key)
    detail = (
        f"required {node['in']} parameter {node['name']!r} is sent as {value!r} ({why}), not asked of the model; "
        f"bind it in --config (bind: {{{node['name']}: ...}}) to send another value"
    )
    ctx.issues.append(Issue(Level.NOTE, f"{ctx.source_name}: parameters", detail))


def _merged_params(ctx: _Context, raw: _RawOperation) -> list[dict[str, Any]]:
    """Path-level parameters, replaced or extended by operation-level ones, keyed by (name, in).

    A parameter with no name is left out with a warning (the operation keeps the others); a path
    variable no parameter declares is taken as a required string, with a warning.
    """
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    op_params = raw.op.get("parameters", [])
    if not isinstance(op_params, list):
        raise _Skip("parameters must be a list")
    sources = [("the path item's parameters", raw.path_params), ("parameters", op_params)]
    for where, nodes in sources:
        for index, node in enumerate(nodes):
            param = _deref(ctx.document, node, "parameter")
            if not isinstance(param, dict):
                raise _Skip("a parameter is not an object")
            name, location = param.get("name"), param.get("in")
            if not isinstance(name, str) or not name:
                ctx.warn(raw.label, f"{where} [{index}] (in: {location}) has no name; that parameter is left out")
                continue
            if location not in PARAM_LOCATIONS:
                raise _Skip(f"parameter {name!r} has unsupported location {location!r}")
            merged[(name, location)] = param
    template, _ = split_template(raw.path)
    for variable in dict.fromkeys(_PATH_VARIABLE.findall(template)):
        if (variable, "path") not in merged:
            ctx.warn(raw.label, f"path variable {{{variable}}} has no path parameter; taken as a required string")
            merged[(variable, "path")] = {
                "name": variable,
                "in": "path",
                "required": True,
                "schema": {"type": "string"},
            }
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
    schema = _with_examples(_described(converted.schema, description), node)
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
        schema, members, free_members = param_rules.restrict_members(ctx.converter, schema, reserved, location)
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


_MAX_PARAM_EXAMPLES = 3


def _with_examples(schema: Schema, node: Mapping[str, Any]) -> Schema:
    """The parameter's own ``example``/``examples`` carried into its argument's schema (a copy).

    A required string with no enum (``api-version``, a region) often states its format only there;
    the schema's own examples win, and examples that break the schema are left out.
    """
    if not isinstance(schema, dict) or "examples" in schema:
        return schema
    found: list[Any] = [node["example"]] if "example" in node else []
    declared = node.get("examples")
    if isinstance(declared, Mapping):
        found += [entry["value"] for entry in declared.values() if isinstance(entry, Mapping) and "value" in entry]
    unique = list({json.dumps(value, sort_keys=True): value for value in found}.values())[:_MAX_PARAM_EXAMPLES]
    if not unique:
        return schema
    out = {**schema, "examples": unique}
    without_bad_examples(out)
    return out if out.get("examples") else schema


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
