"""One operation's responses → :class:`~generator.parse.ir.Response` values, the result schema and Accept."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bridge.contract.catalogue import JsonSchema
from bridge.contract.media_types import base_media as _base_media_type
from generator.parse.bodies import media_kind as _media_kind
from generator.parse.context import Context as _Context
from generator.parse.context import RawOperation as _RawOperation
from generator.parse.context import Skip as _Skip
from generator.parse.context import deref as _deref
from generator.parse.context import text as _text
from generator.parse.ir import Response
from generator.parse.schemas.convert import RESPONSE, SchemaError


def responses(
    ctx: _Context, raw: _RawOperation
) -> tuple[tuple[Response, ...], JsonSchema | None, bool, tuple[str, ...]]:
    """IR responses, the result schema, whether it wraps the body, and the success media types."""
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
        result, wrap = None, False
    else:
        result, wrap = _result_schema(ctx, [contents[s] for s in success if s in contents])
    accept = _accept(str(m) for s in success for m in contents.get(s, {}))
    return tuple(responses), result, wrap, accept


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


def _result_schema(ctx: _Context, contents: Sequence[Mapping[str, Any]]) -> tuple[JsonSchema | None, bool]:
    """The lowest success response with a JSON body gives the result schema.

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
