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
declared at the root, see :mod:`bridge.trim`). It is not an error when the media type is one
the operation declares (``binding.accept``); an undeclared one (an HTML page from a proxy) is.

JSON results are trimmed by :mod:`bridge.trim` (null and empty members dropped, long strings and
arrays cut, a byte budget, the call's ``fields``), every cut listed under ``_truncated``; text
results over the byte budget are cut with a note block.

4xx/5xx raise :class:`UpstreamStatusError`: ``"<METHOD> <path> failed: HTTP 404 Not Found"``,
an excerpt of the body (about 2 KB, secrets redacted) and a hint the model can act on.
Every text the model sees goes through ``redact``.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import mcp_types
from jsonschema import validators as jsonschema_validators

from bridge.binding import HttpBinding
from bridge.errors import UpstreamStatusError
from bridge.redact import Redactor as SecretRedactor
from bridge.trim import MARKER_KEY, TrimSettings, trim_result
from bridge.upstream import UpstreamResponse

__all__ = [
    "ERROR_EXCERPT_CHARS",
    "OutputCheck",
    "cap_text",
    "response_to_result",
    "status_error",
]

ERROR_EXCERPT_CHARS = 2000
"""Characters of an error body shown to the model."""

_TEXT_TYPES = ("application/xml", "application/yaml", "application/x-yaml", "application/javascript", "image/svg+xml")
_TOP_FIELD_KEYS = ("field", "param", "parameter", "property")
_FIELD_KEYS = ("field", "param", "parameter", "property", "path", "pointer", "loc", "name", "location")

Redactor = Callable[[str], str]


def _identity(text: str) -> str:
    return text


def _media(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _charset(content_type: str) -> str:
    match = re.search(r"charset=\"?([A-Za-z0-9._-]+)", content_type, re.IGNORECASE)
    return match.group(1) if match else "utf-8"


def _decode_text(content: bytes, content_type: str) -> str:
    try:
        return content.decode(_charset(content_type), errors="replace")
    except LookupError:
        return content.decode("utf-8", errors="replace")


def _is_json(media: str) -> bool:
    return media in ("application/json", "text/json") or media.endswith("+json")


def _is_text(media: str) -> bool:
    return media.startswith("text/") or media in _TEXT_TYPES or media.endswith(("+xml", "+yaml"))


def _text(text: str) -> mcp_types.TextContent:
    return mcp_types.TextContent(type="text", text=text)


def _redact_json(value: Any, redact: Redactor, member: Member | None) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        if member is not None and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], str):
            return [redact(value[0]), member(value[0], value[1])]  # a header pair: ["X-API-Key", "…"]
        return [_redact_json(v, redact, member) for v in value]
    if isinstance(value, dict):
        named = value.get("name") if member is not None else None
        out: dict[str, Any] = {}
        for k, v in value.items():
            if member is not None and isinstance(v, str):
                # {"X-API-Key": "…"}, or a HAR-style header {"name": "X-API-Key", "value": "…"}
                v = member(named, v) if k == "value" and isinstance(named, str) else member(str(k), v)
                out[redact(str(k))] = v
            else:
                out[redact(str(k))] = _redact_json(v, redact, member)
        return out
    return value


Member = Callable[[str, str], str]


def _member_of(redact: Redactor) -> Member | None:
    return redact.member if isinstance(redact, SecretRedactor) else None


def _redact_bytes(data: bytes, redact: Redactor) -> tuple[bytes, int]:
    """``data`` with every secret spelling overwritten, and how many places were."""
    if isinstance(redact, SecretRedactor):
        return redact.mask_bytes(data)
    view = data.decode("latin-1")  # any other redactor: through a 1:1 view of the bytes
    masked = redact(view)
    return (data, 0) if masked == view else (masked.encode("latin-1", "replace"), 1)


class OutputCheck:
    """Checks structured content against a tool's output schema (compiled at its first use).

    Compiling lazily keeps a thousand-tool server's start-up and memory to the tools it calls.
    """

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self._schema = schema
        self._validator: Any = None

    def problem(self, value: Any) -> str | None:
        if self._validator is None:
            cls = jsonschema_validators.validator_for(self._schema, default=jsonschema_validators.Draft202012Validator)
            self._validator = cls(self._schema)
        error = next(iter(self._validator.iter_errors(value)), None)
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return f"{where}: {error.message[:200]}"


def response_to_result(
    response: UpstreamResponse,
    *,
    binding: HttpBinding,
    tool_name: str,
    redact: Redactor = _identity,
    output_check: OutputCheck | None = None,
    trim: TrimSettings | None = None,
    fields: Sequence[str] | None = None,
) -> mcp_types.CallToolResult:
    """The tool result for a response below 400 (call :func:`status_error` for 4xx/5xx).

    JSON results are trimmed (:mod:`bridge.trim`) with ``trim`` (None: projection only, no
    limits) and the call's ``fields``; text results are cut to ``trim.max_bytes``.
    """
    content_type = response.content_type
    media = _media(content_type)
    body = response.content
    if not body or response.status in (204, 205, 304):
        suffix = "" if response.status in (204, 205, 304) else " (empty body)"
        done = _text(f"Done: {response.status} {response.reason}{suffix}")
        return _not_documented([done], "The API answered without a body", output_check=output_check)

    if _is_json(media) or (not media and body.lstrip()[:1] in (b"{", b"[")):
        try:
            data = json.loads(body)
        except ValueError:
            data = _NOT_JSON
        if data is not _NOT_JSON:
            return _json_result(
                data, binding=binding, redact=redact, output_check=output_check, trim=trim, fields=fields
            )

    declared = _declared(media, binding.accept)
    why = "The API's answer is not valid JSON" if _is_json(media) else f"The API answered {media or 'untyped data'}"
    if _is_text(media) or _is_json(media) or (not media and _looks_textual(body)):
        text = redact(_decode_text(body, content_type))
        limit = trim.normalised().max_bytes if trim is not None else None
        blocks: list[mcp_types.ContentBlock] = [_text(t) for t in cap_text(text, limit)]
        return _not_documented(blocks, why, output_check=output_check, declared=declared)
    body, masked = _redact_bytes(body, redact)
    data64 = base64.b64encode(body).decode("ascii")
    block: mcp_types.ContentBlock
    if media.startswith("image/") and media != "image/svg+xml":
        block = mcp_types.ImageContent(type="image", data=data64, mime_type=media)
    elif media.startswith("audio/"):
        block = mcp_types.AudioContent(type="audio", data=data64, mime_type=media)
    else:
        resource = mcp_types.BlobResourceContents(
            uri=f"mcp-bridge://response/{tool_name}", mime_type=media or "application/octet-stream", blob=data64
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
        declared = _media(entry)
        if declared in ("*/*", media) or (declared.endswith("/*") and media.startswith(declared[:-1])):
            return True
        if _is_json(declared) and _is_json(media):
            return True
    return False


def _not_documented(
    blocks: list[mcp_types.ContentBlock], why: str, *, output_check: OutputCheck | None, declared: bool = True
) -> mcp_types.CallToolResult:
    """The result of an answer that is not the documented JSON shape (see the module docstring)."""
    if output_check is None:
        return mcp_types.CallToolResult(content=blocks)
    if declared:
        note = f"{why}, not the documented JSON shape: the answer is in the content blocks"
    else:
        note = f"{why}, a media type this operation does not declare: the answer is in the content blocks"
    blocks = [*blocks, _text(f"[{MARKER_KEY}] {note}.")]
    structured = {MARKER_KEY: [note]}
    if not declared or output_check.problem(structured) is not None:  # a schema that refuses even the note
        return mcp_types.CallToolResult(content=blocks, is_error=True)
    return mcp_types.CallToolResult(content=blocks, structured_content=structured)


_NOT_JSON = object()


def _looks_textual(body: bytes) -> bool:
    if b"\x00" in body[:4096]:
        return False
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def cap_text(text: str, max_bytes: int | None) -> list[str]:
    """``text`` in one block, or cut to about ``max_bytes`` plus a block saying so."""
    encoded = text.encode("utf-8")
    if not max_bytes or len(encoded) <= max_bytes:
        return [text]
    head = encoded[:max_bytes].decode("utf-8", errors="ignore")
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
    data = _redact_json(data, redact, _member_of(redact))
    policy = binding.output
    settings = (trim or _NO_LIMITS).merged(dataclasses.asdict(policy) if policy is not None else None)
    selected = policy.fields if policy is not None else ()
    if not binding.wrap_output and not isinstance(data, dict):  # a non-object body without a wrapper
        trimmed = trim_result({"result": data}, settings, wrapped=True, paging=binding.page_args, selected=selected)
        blocks: list[mcp_types.ContentBlock] = [_text(_dumps(trimmed.value.get("result")))]
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
    blocks = [_text(_dumps(shown))]
    problem = output_check.problem(structured) if output_check is not None else None
    if problem is not None:
        why = f"The API's answer does not match the tool's documented output schema ({problem})"
        return _not_documented(blocks, why, output_check=output_check)
    return mcp_types.CallToolResult(content=blocks, structured_content=structured)


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


# ------------------------------------------------------------------------------------- errors


def status_error(
    response: UpstreamResponse,
    *,
    binding: HttpBinding,
    redact: Redactor = _identity,
    credential_env: Sequence[str] = (),
    operation: str | None = None,
) -> UpstreamStatusError:
    """The tool error for a 4xx/5xx response: status, a redacted body excerpt and a hint."""
    op = operation or response.operation or f"{binding.method.upper()} {binding.path}"
    status = response.status
    lines = [f"{op} failed: HTTP {status} {response.reason}".rstrip()]
    excerpt, data = _excerpt(response, redact)
    if excerpt:
        lines.append(f"The API said: {excerpt}")
    hint = _hint(status, response, binding, data, credential_env, redact)
    if hint:
        lines.append(hint)
    return UpstreamStatusError("\n".join(lines), status=status)


def _excerpt(response: UpstreamResponse, redact: Redactor) -> tuple[str, Any]:
    if not response.content:
        return "", None
    media = _media(response.content_type)
    text = _decode_text(response.content, response.content_type)
    data: Any = None
    if not response.truncated and (_is_json(media) or text.lstrip()[:1] in ("{", "[")):
        try:
            data = json.loads(text)
            text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        except ValueError:
            data = None
    elif not (_is_json(media) or _is_text(media) or _looks_textual(response.content)):
        return f"({len(response.content)} bytes of {media or 'binary data'})", None
    text = redact(" ".join(text.split()))
    if len(text) > ERROR_EXCERPT_CHARS or response.truncated:
        text = text[:ERROR_EXCERPT_CHARS].rstrip() + " … (truncated)"
    return text, data


def _hint(
    status: int,
    response: UpstreamResponse,
    binding: HttpBinding,
    data: Any,
    credential_env: Sequence[str],
    redact: Redactor,
) -> str:
    if status in (400, 422):
        fields = sorted(set(_rejected_fields(data)))[:5]
        if fields:
            named = ", ".join(f'"{redact(f)}"' for f in fields)
            return f"The API rejected the value of {named}. Fix that argument and call the tool again."
        return "The API rejected the arguments. Check them against the message above and call the tool again."
    if status in (401, 403):
        if credential_env:
            names = ", ".join(credential_env)
            return (
                f"The API did not accept the configured credentials (HTTP {status}). The user must check the "
                f"credential configured in {names} (and its permissions); retrying will not help."
            )
        return (
            f"The API refused the request without credentials (HTTP {status}). The user may need to configure "
            "one of the API's credentials; retrying will not help."
        )
    if status == 404:
        path_args = [p.arg for p in binding.params if p.location == "path"]
        if path_args:
            return "Nothing was found. Check the ids and path arguments (" + ", ".join(path_args) + ")."
        return "Nothing was found at this path. Check the arguments."
    if status == 409:
        return "The request conflicts with the resource's current state. Fetch the current state, then retry."
    if status == 413:
        return "The request is too large for the API. Send less data."
    if status == 429:
        wait = _retry_after(response.headers.get("retry-after"))
        if wait is not None:
            return f"The API is rate limiting: retry after {wait} s."
        return "The API is rate limiting: wait before retrying."
    if status >= 500:
        wait = _retry_after(response.headers.get("retry-after"))
        later = f"after {wait} s" if wait is not None else "later"
        return f"The API failed (HTTP {status}); this is not caused by the arguments. Retrying {later} may help."
    return ""


def _retry_after(value: str | None) -> int | None:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return int(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0, round((when - datetime.now(UTC)).total_seconds()))


def _rejected_fields(data: Any, depth: int = 0) -> list[str]:
    """Field names an error body points at, in the common shapes (RFC 9457, FastAPI, JSON:API…)."""
    if depth > 4 or data is None:
        return []
    found: list[str] = []
    if isinstance(data, list):
        for item in data[:20]:
            found.extend(_rejected_fields(item, depth + 1))
        return found
    if not isinstance(data, dict):
        return []
    for key in _FIELD_KEYS if depth > 0 else _TOP_FIELD_KEYS:
        value = data.get(key)
        if key == "loc" and isinstance(value, list):
            parts = [str(p) for p in value if p not in ("body", "query", "path", "header", "cookie")]
            if parts:
                found.append(".".join(parts))
        elif key in ("pointer", "path") and isinstance(value, str) and value.startswith("/"):
            found.append(value.lstrip("/").replace("/", "."))
        elif key != "name" and isinstance(value, str) and value and len(value) <= 100:
            found.append(value)
    source = data.get("source")
    if isinstance(source, dict):
        found.extend(_rejected_fields(source, depth + 1))
    for key in ("errors", "detail", "invalid_params", "invalid-params", "fields", "error", "details"):
        if key in data and isinstance(data[key], list | dict):
            found.extend(_rejected_fields(data[key], depth + 1))
    if depth > 0 and not found and isinstance(data.get("name"), str):
        found.append(data["name"])
    return found
