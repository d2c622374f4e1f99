"""4xx/5xx answers as tool errors the model can act on.

``"<METHOD> <path> failed: HTTP 404 Not Found"``, an excerpt of the body (about 2 KB, secrets
redacted before the cut) and a hint: which field the API rejected, which credential to check,
when to retry.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from bridge.contract.catalogue import HttpBinding
from bridge.contract.media_types import base_media, decode_text, is_json_media, is_text_media, looks_textual
from bridge.secrets.excerpt import excerpt
from bridge.secrets.redact import mask_before_decoding
from bridge.tools.errors import UpstreamStatusError
from bridge.tools.json_text import parse_json
from bridge.upstream.client import UpstreamResponse
from bridge.upstream.retry import parse_retry_after

__all__ = ["ERROR_EXCERPT_CHARS", "Redactor", "identity", "status_error"]

ERROR_EXCERPT_CHARS = 2000
"""Characters of an error body shown to the model."""

_TOP_FIELD_KEYS = ("field", "param", "parameter", "property")
_FIELD_KEYS = ("field", "param", "parameter", "property", "path", "pointer", "loc", "name", "location")

Redactor = Callable[[str], str]


def identity(text: str) -> str:
    return text


def status_error(
    response: UpstreamResponse,
    *,
    binding: HttpBinding,
    redact: Redactor = identity,
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
    media = base_media(response.content_type)
    text = decode_text(mask_before_decoding(response.content, redact), response.content_type)
    data: Any = None
    if not response.truncated and (is_json_media(media) or text.lstrip()[:1] in ("{", "[")):
        try:
            data = parse_json(text)
            text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        except ValueError:
            data = None
    elif not (is_json_media(media) or is_text_media(media) or looks_textual(response.content)):
        return f"({len(response.content)} bytes of {media or 'binary data'})", None
    return excerpt(
        " ".join(text.split()), redact, ERROR_EXCERPT_CHARS, mark=" … (truncated)", truncated=response.truncated
    ), data


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
        path_args = [p.arg for p in binding.params if p.location == "path" and p.bound is None]
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
    """Whole seconds to wait, as the retry policy reads ``Retry-After`` (one parser for both)."""
    wait = parse_retry_after(value)
    return None if wait is None else round(wait)


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
