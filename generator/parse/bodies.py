"""An operation's request body → its tool arguments and its :class:`~generator.parse.ir.Body` (the wire facts
:mod:`generator.emit.catalogue` turns into a :class:`~bridge.contract.catalogue.BodyBinding`).

The body keeps its schema whatever its media type is called: what matters is whether the media
type admits JSON and what the schema describes.

================================== ===================================== ==========================
media type                         schema                                argument, wire
================================== ===================================== ==========================
``application/json``, ``…+json``   any (none: any value)                 the schema; JSON
``*/*``, ``application/*``,        structured (object, array, number,    the schema; JSON, with a
``application/*+json``, ``text/*`` boolean, composite, ``{}``)           concrete JSON Content-Type
same                               string                                text
same                               ``format: binary``, ``contentEncoding``  base64; decoded bytes
                                   ``contentMediaType``, or no schema
``text/*``, XML, YAML              string (else a raw string)            text
``application/x-www-form-urlencoded``, ``multipart/*``  object           fields (:mod:`bridge.request.forms`)
anything else (octet-stream, image/*, pdf)  any                          base64; decoded bytes
================================== ===================================== ==========================

When an operation offers several media types one is chosen deterministically: ``application/json``,
``application/merge-patch+json`` (an object that says what to change: what a model means), other
JSON types, ``json-patch+json`` (it needs a list of operations), JSON-admitting
wildcards with a structured schema, url-encoded forms, multipart, ``text/plain``,
``application/octet-stream``, then the rest; the declared order breaks ties.

Form properties honour the spec's ``encoding`` (style/explode for url-encoded forms, where an
explicit style wins over ``contentType`` as OpenAPI says; ``contentType`` for multipart parts).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, get_args

from bridge.contract.catalogue import BodyField, BodyKind, BoundValue, FormStyle, PartEncoding
from bridge.contract.media_types import (
    FORM,
    OCTET_STREAM,
    admits_json,
    base_media,
    infer_kind,
    is_json_media,
    is_text_media,
)
from bridge.contract.wire_rules import credential_name, may_hold_text
from generator.parse import naming
from generator.parse.bindings import body_bindings
from generator.parse.context import Context, Inputs, RawOperation, Skip, deref, described, text
from generator.parse.ir import Body
from generator.parse.schemas.convert import REQUEST, Converted, SchemaError
from generator.parse.schemas.keywords import Schema, is_file_schema

__all__ = ["FILE_DESCRIPTION", "FILE_PATTERN", "body_kind", "choose_media_type", "media_kind", "request_body"]

FILE_DESCRIPTION = "File content: base64 or data: URI."
# base64 (standard or URL-safe alphabet, optional padding) or a base64 data: URI; what the runtime decodes.
FILE_PATTERN = (
    r"^(data:([A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*)?(;[^,;]*)*;base64,)?"
    r"([A-Za-z0-9+/_-]{4})*([A-Za-z0-9+/_-]{2}(==)?|[A-Za-z0-9+/_-]{3}=?)?$"
)
# After "data:<major>/": the subtype, parameters and base64 data (what FILE_PATTERN allows).
DATA_URI_TAIL = (
    r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(;[^,;]*)*;base64,"
    r"([A-Za-z0-9+/_-]{4})*([A-Za-z0-9+/_-]{2}(==)?|[A-Za-z0-9+/_-]{3}=?)?$"
)
FORM_STYLES: tuple[str, ...] = get_args(FormStyle)
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
_MIME = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*")
_RANK = {"json": 4, "form": 5, "multipart": 6}


def media_kind(media_type: str) -> str:
    """json, form, multipart, text or binary, from the media type alone (responses use it too)."""
    kind = infer_kind(media_type)
    return "binary" if kind is None else kind


def request_body(ctx: Context, raw: RawOperation, inputs: Inputs) -> Body | None:
    node = raw.op.get("requestBody")
    if node is None:
        return None
    request = deref(ctx.document, node, "request body")
    content = request.get("content") if isinstance(request, dict) else None
    if not isinstance(content, dict) or not content:
        return None
    assert isinstance(request, dict)
    media_type = choose_media_type(ctx, content)
    media = content[media_type] if isinstance(content[media_type], dict) else {}
    required = request.get("required") is True
    description = text(request.get("description"))
    kind, converted = _kind_and_schema(ctx, media_type, media.get("schema"))
    inputs.needs.update(converted.needs)
    schema = converted.schema
    file_fields: tuple[str, ...] = ()
    json_fields: tuple[str, ...] = ()
    encoding: tuple[PartEncoding, ...] = ()
    if kind == "multipart" and is_file_schema(schema):
        schema = _one_file_part(schema, media.get("encoding"))
    if kind in ("form", "multipart") and isinstance(schema, dict):
        if kind == "multipart":
            schema, file_fields = _with_file_fields(schema)
        json_fields, encoding = _encodings(ctx, kind, schema, media.get("encoding"))
    bound: dict[str, BoundValue] = {}
    if (
        kind in ("json", "form", "multipart")
        and isinstance(schema, dict)
        and isinstance(schema.get("properties"), dict)
    ):
        bound = body_bindings(inputs.bind, schema["properties"], lambda d: ctx.warn(raw.label, d), inputs.bind_matched)
    bound_fields = _bound_fields(schema, bound)
    if bound:
        schema = _without(schema, bound)
    if kind in ("json", "form", "multipart"):
        schema = _without_credentials(ctx, raw, schema)
    fields = (
        _flatten(schema, required, inputs, allow_empty=bool(bound)) if kind in ("json", "form", "multipart") else None
    )
    arg = None
    if fields is None:
        arg = inputs.names.claim_first(["body", "request_body"])
        inputs.properties[arg] = described(schema, description)
        if required:
            inputs.required.append(arg)
    return Body(
        media_type=str(media_type),
        required=required,
        schema=schema if isinstance(schema, dict) else {},
        kind=kind,
        arg=arg,
        fields=fields or (),
        file_fields=file_fields,
        json_fields=json_fields,
        encoding=encoding,
        description=description,
        other_media_types=tuple(str(m) for m in content if m != media_type),
        bound_fields=bound_fields,
    )


def _without_credentials(ctx: Context, raw: RawOperation, schema: Schema) -> Schema:
    """``schema`` without the top-level properties that carry a credential (P11; the bound ones
    are gone already): counted for the one generate-time warning."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return schema
    dropped = {
        name: None
        for name, prop in properties.items()
        if credential_name("body", str(name)) is not None and may_hold_text(_resolved(ctx, prop))
    }
    for name in dropped:
        ctx.credential_args.setdefault(f"{name} (body)", set()).add(raw.label)
    return _without(schema, dropped) if dropped else schema


def _resolved(ctx: Context, node: Any) -> Any:
    try:
        return deref(ctx.document, node, "schema")
    except Skip:
        return {}


def _bound_fields(schema: Schema, bound: Mapping[str, BoundValue]) -> tuple[BodyField, ...]:
    required = set(schema.get("required", [])) if isinstance(schema, dict) else set()
    return tuple(BodyField(arg="", wire=name, bound=value, required=name in required) for name, value in bound.items())


def _without(schema: Schema, names: Mapping[str, Any]) -> Schema:
    """``schema`` without the bound top-level properties (the model never gives them)."""
    assert isinstance(schema, dict)
    out = {**schema, "properties": {k: v for k, v in schema["properties"].items() if k not in names}}
    if isinstance(schema.get("required"), list):
        out["required"] = [name for name in schema["required"] if name not in names]
    return out


# Media type and kind ----------------------------------------------------------------------------


def choose_media_type(ctx: Context, content: Mapping[str, Any]) -> str:
    """The media type a tool sends, deterministically (order in the module docstring)."""
    media_types = [str(m) for m in content]

    def rank(media_type: str) -> int:
        base = base_media(media_type)
        if base == "application/json":
            return 0
        if is_json_media(base):
            return {MERGE_PATCH: 1, JSON_PATCH: 3}.get(base, 2)
        media = content[media_type]
        try:
            kind = _kind_and_schema(ctx, media_type, media.get("schema") if isinstance(media, dict) else None)[0]
        except (SchemaError, RecursionError):
            kind = "binary"  # an alternative that cannot be converted is never preferred
        if kind in _RANK:
            return _RANK[kind]
        return {"text/plain": 7, OCTET_STREAM: 8}.get(base, 9)

    return min(media_types, key=lambda m: (rank(m), media_types.index(m)))


def body_kind(media_type: str, schema: Schema | None) -> BodyKind:
    """How a body of ``media_type`` with the converted ``schema`` (None: no schema) is sent."""
    base = base_media(media_type)
    if is_json_media(base):
        return "json"
    if base == FORM:
        return "form"
    if base.startswith("multipart/"):
        return "multipart"
    if schema is None or _is_binary(schema):
        return "text" if schema is None and is_text_media(base) else "binary"
    if admits_json(base) and not _is_string(schema):
        return "json"
    if is_text_media(base) or admits_json(base):
        return "text"
    return "binary"


def _kind_and_schema(ctx: Context, media_type: str, raw_schema: Any) -> tuple[BodyKind, Converted]:
    # Bytes whatever the schema says (octet-stream, image/png): its schema is not even converted.
    decisive = infer_kind(media_type) == "binary"
    converted = ctx.converter.convert_root(raw_schema, REQUEST) if raw_schema is not None and not decisive else None
    kind = body_kind(media_type, converted.schema if converted else None)
    if kind in ("json", "form", "multipart"):
        return kind, converted or Converted({})
    if kind == "text":
        if converted and _is_string(converted.schema):
            return kind, converted
        return kind, Converted({"type": "string", "description": f"Raw {media_type} body."})
    return kind, Converted(_binary_arg(media_type))


def _binary_arg(media_type: str) -> dict[str, Any]:
    """Base64 bytes; a data: URI naming the concrete type when the declared one is a wildcard such
    as ``image/*`` (the runtime refuses to guess one)."""
    base = base_media(media_type)
    major = re.fullmatch(r"([a-z0-9][a-z0-9!#$&^_.+-]*)/\*", base)
    if major is None or major.group(1) == "application":
        return {
            "type": "string",
            "contentEncoding": "base64",
            "description": f"Binary {media_type} body, base64-encoded.",
        }
    return {
        "type": "string",
        "contentEncoding": "base64",
        "pattern": f"^data:{re.escape(major.group(1))}/" + DATA_URI_TAIL,
        "description": f"Binary {media_type} body: a data: URI naming its type (data:{major.group(1)}/…;base64,…).",
    }


def _types(schema: Schema) -> set[str]:
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, str):
        return {kind}
    return {str(t) for t in kind} if isinstance(kind, list) else set()


def _is_string(schema: Schema) -> bool:
    return bool(_types(schema)) and _types(schema) <= {"string", "null"}


def _is_binary(schema: Schema) -> bool:
    """Raw bytes: a string with ``format: binary`` or a ``contentEncoding``/``contentMediaType``."""
    if not isinstance(schema, dict) or not (_is_string(schema) or not _types(schema)):
        return False
    return schema.get("format") == "binary" or "contentEncoding" in schema or "contentMediaType" in schema


# Forms ----------------------------------------------------------------------------------------

FILE_PART = "file"


def _one_file_part(schema: Schema, encoding: Any) -> dict[str, Any]:
    """A multipart body declared as one binary string (Jira's addAttachment): a form of one file part.

    Its name is the one the ``encoding`` names when it names exactly one part, else ``file``
    (what such APIs read); the part's ``contentType``, if any, applies as for any part.
    """
    names = [str(name) for name in encoding] if isinstance(encoding, dict) else []
    name = names[0] if len(names) == 1 and names[0] else FILE_PART
    return {"type": "object", "properties": {name: schema}, "required": [name], "additionalProperties": False}


def _with_file_fields(schema: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Multipart file properties become strings taking base64 or a data: URI."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return schema, ()
    changed: dict[str, Any] = {}
    for name, prop in properties.items():
        if is_file_schema(prop):
            changed[name] = _file_arg(prop)
        elif isinstance(prop, dict) and prop.get("type") == "array" and is_file_schema(prop.get("items", {})):
            changed[name] = {**prop, "items": _file_arg(prop["items"])}
    if not changed:
        return schema, ()
    return {**schema, "properties": {**properties, **changed}}, tuple(changed)


def _file_arg(schema: Mapping[str, Any]) -> dict[str, Any]:
    description = text(schema.get("description"))
    note = f"{description} {FILE_DESCRIPTION}" if description else FILE_DESCRIPTION
    # No base64 `pattern`: the runtime checks contentEncoding with a decoder in bounded memory, where
    # a regex over a 50 MB value took gigabytes (bridge/contract/formats.py); the description says data: URIs work.
    return {"type": "string", "contentEncoding": "base64", "description": note}


def _encodings(
    ctx: Context, kind: str, schema: Mapping[str, Any], encoding: Any
) -> tuple[tuple[str, ...], tuple[PartEncoding, ...]]:
    """The properties sent as JSON text, and the properties whose encoding is not the default.

    Multipart: objects (and arrays of objects) are JSON parts unless told otherwise, and
    ``contentType`` types a part. Url-encoded: an explicit ``style``/``explode`` wins over
    ``contentType`` (OpenAPI: "the value of contentType (implicit or explicit) SHALL be ignored"),
    and objects default to deepObject at run time (:mod:`bridge.request.forms` says why).
    """
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return (), ()
    declared = encoding if isinstance(encoding, dict) else {}
    json_fields: list[str] = []
    parts: list[PartEncoding] = []
    for name, prop in properties.items():
        entry = declared.get(name)
        entry = entry if isinstance(entry, dict) else {}
        content_types = [t.strip() for t in str(entry.get("contentType") or "").split(",") if t.strip()]
        styled = kind == "form" and ("style" in entry or "explode" in entry)
        if styled:
            style = entry.get("style", "form")
            explode = entry.get("explode", style == "form")
            if style in FORM_STYLES and isinstance(explode, bool):
                parts.append(PartEncoding(name=name, style=style, explode=explode))
                continue
        if any(is_json_media(t) for t in content_types):
            json_fields.append(name)
        elif kind == "multipart" and _object_like(ctx, prop) and not content_types:
            json_fields.append(name)
        if kind == "multipart":
            # The part's Content-Type: the first concrete type listed (a file's data: URI may say better).
            concrete = next((base_media(t) for t in content_types if _MIME.fullmatch(base_media(t))), None)
            if concrete is not None and concrete != "application/json":
                parts.append(PartEncoding(name=name, content_type=concrete))
    return tuple(json_fields), tuple(parts)


def _object_like(ctx: Context, prop: Any) -> bool:
    items = prop.get("items") if isinstance(prop, dict) and prop.get("type") == "array" else None
    return ctx.converter.is_object(prop, REQUEST) or (items is not None and ctx.converter.is_object(items, REQUEST))


# Arguments ------------------------------------------------------------------------------------


def _flatten(
    schema: Schema, required: bool, inputs: Inputs, *, allow_empty: bool = False
) -> tuple[BodyField, ...] | None:
    """Spread a plain object body into the arguments, or return None to keep it as one argument.

    Only when no property's argument name is already taken by a parameter: renaming body fields
    next to same-named parameters would be confusing, a ``body`` argument is not. ``allow_empty``:
    every property was bound, so the body needs no argument at all.
    """
    if not _is_flat_object(schema, allow_empty=allow_empty):
        return None
    assert isinstance(schema, dict)
    properties: dict[str, Any] = schema["properties"]
    if any(naming.arg_name(name) in inputs.names for name in properties):
        return None
    if not set(schema.get("required", [])) <= set(properties):
        return None  # a required member with no declared property: only a whole `body` can carry it
    body_required = set(schema.get("required", []))
    fields = []
    for name, prop in properties.items():
        arg = inputs.names.claim(name, "body")
        inputs.properties[arg] = prop
        if required and name in body_required:
            inputs.required.append(arg)
        fields.append(BodyField(arg=arg, wire=name))
    if not required and body_required:
        needed = [f.arg for f in fields if f.wire in body_required]
        for f in fields:
            if others := [arg for arg in needed if arg != f.arg]:
                inputs.dependent_required[f.arg] = others
    return tuple(fields)


def _is_flat_object(schema: Schema, *, allow_empty: bool = False) -> bool:
    """An object with named properties and nothing that flattening would lose."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return False
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not (properties or allow_empty):
        return False
    if any(key in schema for key in ("allOf", "anyOf", "oneOf", "not", "if", "patternProperties", "$ref")):
        return False
    return schema.get("additionalProperties", False) is False and schema.get("unevaluatedProperties", False) is False
