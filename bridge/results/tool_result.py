"""From an upstream response to what the model sees.

Success (below 400):

============================== ===========================================================
response                       tool result
============================== ===========================================================
empty body, 204, 205, 304      text ``Done: 204 No Content``
JSON (``application/json``,    text (compact JSON) + ``structuredContent``: the object, or
``*+json``, untyped JSON)      ``{"result": body}`` when ``binding.wrap_output``; a non-object
                               body without wrapping is text only
``image/*`` (not SVG)          ``ImageContent`` (base64)
``audio/*``                    ``AudioContent`` (base64)
``text/*``, XML, SVG, YAML     text (charset from Content-Type, UTF-8 by default)
anything else                  ``EmbeddedResource`` with ``BlobResourceContents``,
                               uri ``mcp-bridge://response/<tool>``
============================== ===========================================================

Every byte the model sees is redacted first: texts and JSON strings (and keys) through
``redact``; binary bodies are searched too and every secret spelling in them is overwritten with
``*`` before encoding (same length, so offsets inside the file survive; a note block says so).

A tool with an output schema always sends ``structuredContent``, which MCP clients check. An
answer that is not the documented JSON shape (text or binary, a JSON string where an object is
documented, an empty body, JSON the schema rejects) is still the API's answer: its content blocks
are returned, with a note block, and ``structuredContent`` is ``{"_truncated": [note]}``: the
one object every advertised output schema admits (nothing is required and ``_truncated`` is
declared at the root, see :mod:`bridge.results.trim`). It is not an error when the media type is one
the operation declares (``binding.accept``); an undeclared one (an HTML page from a proxy) is.

JSON results are trimmed by :mod:`bridge.results.trim` (null and empty members dropped, long strings and
arrays cut, a byte budget, the call's ``fields``), every cut listed under ``_truncated``; text
results over the byte budget are cut with a note block.

4xx/5xx raise :class:`UpstreamStatusError` (:func:`bridge.results.status_errors.status_error`).
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import mcp_types

from bridge.contract.catalogue import HttpBinding
from bridge.contract.media_types import base_media, decode_text, is_json_media, is_text_media, looks_textual
from bridge.results.status_errors import ERROR_EXCERPT_CHARS, Redactor, identity, status_error
from bridge.results.trim import MARKER_KEY, TrimSettings, trim_result
from bridge.secrets.excerpt import cut_redacted
from bridge.secrets.redact import Redactor as SecretRedactor
from bridge.secrets.redact import mask_before_decoding
from bridge.secrets.redact_json import redact_json
from bridge.tools.errors import ToolDefinitionError
from bridge.tools.json_text import parse_answer_json
from bridge.tools.validation import output_issues
from bridge.upstream.client import UpstreamResponse

__all__ = [
    "ERROR_EXCERPT_CHARS",
    "OutputCheck",
    "cap_text",
    "redact_json",
    "response_to_result",
    "status_error",
]


def _text(text: str) -> mcp_types.TextContent:
    return mcp_types.TextContent(type="text", text=text)


def _plainly_leaves_alone(redact: SecretRedactor, body: bytes) -> bool:
    # Only plain UTF-8: json.loads also reads UTF-16/32 (NUL bytes), whose text a UTF-8 view hides.
    if b"\x00" in body:
        return False
    try:
        return redact.leaves_alone(body.decode("utf-8"))
    except UnicodeDecodeError:
        return False


def _redact_bytes(data: bytes, redact: Redactor) -> tuple[bytes, int]:
    """``data`` with every secret spelling overwritten, and how many places were."""
    if isinstance(redact, SecretRedactor):
        return redact.mask_bytes(data)
    view = data.decode("latin-1")  # any other redactor: through a 1:1 view of the bytes
    masked = redact(view)
    return (data, 0) if masked == view else (masked.encode("latin-1", "replace"), 1)


class OutputCheck:
    """Checks structured content against a tool's output schema.

    The same check as hand-written tools get (:func:`bridge.tools.validation.output_issues`: linear-time
    patterns, ECMA-262 syntax, one bounded cache of compiled validators), compiled at first use so
    a thousand-tool server's start-up and memory stay with the tools it calls.
    """

    def __init__(self, schema: Mapping[str, Any], tool_name: str = "tool", *, json_data: bool = False) -> None:
        self._schema = schema
        self._tool_name = tool_name
        # The values checked are parsed upstream answers (and trimmed copies of them): only JSON types.
        self._json_data = json_data

    def problem(self, value: Any) -> str | None:
        """``path: message`` of the first few mismatches, or None when ``value`` matches.

        A schema that is itself broken is a problem too, not an exception: the model still gets
        the answer, as text, instead of "failed unexpectedly" on every call.
        """
        try:
            lines = output_issues(self._tool_name, self._schema, value, json_data=self._json_data)
        except ToolDefinitionError as exc:
            return cut_redacted(str(exc), _SHOWN_CHARS, mark="…")  # the schema's text, not the value's
        # The value checked is redacted already (and so the messages quoting it).
        return cut_redacted("; ".join(lines[:_SHOWN_PROBLEMS]), _SHOWN_CHARS, mark="…") if lines else None


_SHOWN_PROBLEMS = 5
_SHOWN_CHARS = 1000


def response_to_result(
    response: UpstreamResponse,
    *,
    binding: HttpBinding,
    tool_name: str,
    redact: Redactor = identity,
    output_check: OutputCheck | None = None,
    trim: TrimSettings | None = None,
    fields: Sequence[str] | None = None,
) -> mcp_types.CallToolResult:
    """The tool result for a response below 400 (call :func:`status_error` for 4xx/5xx).

    JSON results are trimmed (:mod:`bridge.results.trim`) with ``trim`` (None: projection only, no
    limits) and the call's ``fields``; text results are cut to ``trim.max_bytes``.
    """
    content_type = response.content_type
    media = base_media(content_type)
    body = response.content
    if not body or response.status in (204, 205, 304):
        suffix = "" if response.status in (204, 205, 304) else " (empty body)"
        done = _text(redact(f"Done: {response.status} {response.reason}{suffix}"))  # the reason is upstream text
        return _not_documented([done], "The API answered without a body", output_check=output_check)

    if is_json_media(media) or (not media and body.lstrip()[:1] in (b"{", b"[")):
        try:
            data = parse_answer_json(body)
        except ValueError:
            data = _NOT_JSON
        if data is not _NOT_JSON:
            if isinstance(redact, SecretRedactor) and _plainly_leaves_alone(redact, body):
                redact = identity  # nothing in this answer can be a secret: skip the walk over its strings
            return _json_result(
                data, binding=binding, redact=redact, output_check=output_check, trim=trim, fields=fields
            )

    declared = _declared(media, binding.accept)
    shown = redact(content_type.split(";", 1)[0].strip())  # upstream text too, and it reaches the model
    why = (
        "The API's answer is not valid JSON" if is_json_media(media) else f"The API answered {shown or 'untyped data'}"
    )
    if is_text_media(media) or is_json_media(media) or (not media and looks_textual(body)):
        text = redact(decode_text(mask_before_decoding(body, redact), content_type))
        limit = trim.normalised().max_bytes if trim is not None else None
        blocks: list[mcp_types.ContentBlock] = [_text(t) for t in cap_text(text, limit)]
        return _not_documented(blocks, why, output_check=output_check, declared=declared)
    body, masked = _redact_bytes(body, redact)
    data64 = base64.b64encode(body).decode("ascii")
    block: mcp_types.ContentBlock
    if media.startswith("image/") and media != "image/svg+xml":
        block = mcp_types.ImageContent(type="image", data=data64, mime_type=shown)
    elif media.startswith("audio/"):
        block = mcp_types.AudioContent(type="audio", data=data64, mime_type=shown)
    else:
        resource = mcp_types.BlobResourceContents(
            uri=f"mcp-bridge://response/{tool_name}", mime_type=shown or "application/octet-stream", blob=data64
        )
        block = mcp_types.EmbeddedResource(type="resource", resource=resource)
    blocks = [block]
    if masked:
        blocks.append(
            _text(f"[{MARKER_KEY}] {masked} place(s) of this binary answer held a credential and were overwritten.")
        )
    return _not_documented(blocks, why, output_check=output_check, declared=declared)


def _declared(media: str, accept: Sequence[str]) -> bool:
    """``media`` is one of the operation's success media types (none known, or none sent: yes)."""
    if not accept or not media:
        return True
    for entry in accept:
        declared = base_media(entry)
        if declared in ("*/*", media) or (declared.endswith("/*") and media.startswith(declared[:-1])):
            return True
        if is_json_media(declared) and is_json_media(media):
            return True
    return False


def _not_documented(
    blocks: list[mcp_types.ContentBlock],
    why: str,
    *,
    output_check: OutputCheck | None,
    declared: bool = True,
    shape: bool = True,
) -> mcp_types.CallToolResult:
    """The result of an answer that is not the documented JSON shape (see the module docstring)."""
    if output_check is None:
        return mcp_types.CallToolResult(content=blocks)
    if not shape:  # ``why`` already says how it differs
        note = f"{why}: the answer is in the content blocks"
    elif declared:
        note = f"{why}, not the documented JSON shape: the answer is in the content blocks"
    else:
        note = f"{why}, a media type this operation does not declare: the answer is in the content blocks"
    blocks = [*blocks, _text(f"[{MARKER_KEY}] {note}.")]
    structured = {MARKER_KEY: [note]}
    if not declared or output_check.problem(structured) is not None:  # a schema that refuses even the note
        return mcp_types.CallToolResult(content=blocks, is_error=True)
    return mcp_types.CallToolResult(content=blocks, structured_content=structured)


_NOT_JSON = object()


def cap_text(text: str, max_bytes: int | None) -> list[str]:
    """``text`` in one block, or cut to about ``max_bytes`` plus a block saying so."""
    encoded = text.encode("utf-8")
    if not max_bytes or len(encoded) <= max_bytes:
        return [text]
    head = cut_redacted(text, len(encoded[:max_bytes].decode("utf-8", errors="ignore")))  # never half a mask
    return [head + "…", f"[{MARKER_KEY}] text cut to {len(head.encode('utf-8'))} of {len(encoded)} bytes."]


_NO_LIMITS = TrimSettings(max_bytes=None, max_items=None, max_string=None, drop_empty=False)


def _json_result(
    data: Any,
    *,
    binding: HttpBinding,
    redact: Redactor,
    output_check: OutputCheck | None,
    trim: TrimSettings | None = None,
    fields: Sequence[str] | None = None,
) -> mcp_types.CallToolResult:
    if redact is not identity:  # identity: the walk would only copy the tree, which trimming copies anyway
        data = redact_json(data, redact)
    policy = binding.output
    settings = (trim or _NO_LIMITS).merged(dataclasses.asdict(policy) if policy is not None else None)
    selected = policy.fields if policy is not None else ()
    if not binding.wrap_output and not isinstance(data, dict):  # a non-object body without a wrapper
        trimmed = trim_result({"result": data}, settings, wrapped=True, paging=binding.page_args, selected=selected)
        blocks: list[mcp_types.ContentBlock] = [
            _text(_shown_text(trimmed.value, trimmed.value.get("result"), trimmed.text))
        ]
        if trimmed.notes:
            blocks.append(_text(f"[{MARKER_KEY}] " + " ".join(trimmed.notes)))
        return _not_documented(blocks, f"The API answered a JSON {_json_type(data)}", output_check=output_check)
    wrapped = binding.wrap_output
    trimmed = trim_result(
        {"result": data} if wrapped else data,
        settings,
        wrapped=wrapped,
        paging=binding.page_args,
        fields_arg=binding.fields_arg,
        selected=selected,
        fields=fields if binding.fields_arg else None,
    )
    structured = trimmed.value
    shown = structured if trimmed.cut or not wrapped else structured.get("result")
    blocks = [_text(_shown_text(structured, shown, trimmed.text))]
    problem = output_check.problem(structured) if output_check is not None else None
    if problem is not None:
        why = f"The API's answer does not match the tool's documented output schema ({problem})"
        return _not_documented(blocks, why, output_check=output_check, shape=False)
    return mcp_types.CallToolResult(content=blocks, structured_content=structured)


_WRAPPED_PREFIX = '{"result":'


def _shown_text(structured: dict[str, Any], shown: Any, text: str | None) -> str:
    """The compact JSON of ``shown``, from ``text`` (trimming's JSON of ``structured``, when it
    made one) rather than a second encoding: all of it, or a ``{"result": ...}`` wrapper's inside,
    which the encoder writes as the prefix, the value's own JSON and ``}``."""
    if text is None:
        return _dumps(shown)
    if shown is structured:
        return text
    if len(structured) == 1 and "result" in structured and text.startswith(_WRAPPED_PREFIX):
        return text[len(_WRAPPED_PREFIX) : -1]
    return _dumps(shown)


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    return "null" if value is None else "number"


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
