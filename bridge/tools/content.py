"""What a tool's ``run`` returns, turned into an MCP ``CallToolResult``; content-block helpers.

==================================  ==================================================================
``run`` returns                     the client gets
==================================  ==================================================================
``str``                             one text block
dict / list / number / bool         its JSON as text; a dict is also sent as ``structuredContent``
a content block, or a list of them  those blocks as is
``CallToolResult`` or               that result as is (full control)
``{"content": [...], ...}``
``None``                            an empty result (``content=[]``)
==================================  ==================================================================

With an output schema the value is checked at run time and sent as ``structuredContent`` with a
JSON copy in a text block for clients that ignore structured content; a mismatch is a ``ToolError``
(the client gets ``isError``, never malformed data). An answer that is not JSON (a ``str``, or a
full result without ``structuredContent``) is still an answer: it is sent with a note block and
``structuredContent`` ``{"_truncated": [note]}`` when the output schema admits that object (every
advertised schema of a generated tool does, see :mod:`bridge.results.trim`), else it is a ``ToolError``.

JSON text is compact (no spaces after separators) and keeps non-ASCII characters as they are: the
model pays for every token, and ``\\uXXXX`` escapes cost several tokens per character while adding
nothing for a reader. Key order is the producer's (usually the upstream API's).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

import mcp_types as types
from pydantic import ValidationError

from bridge.contract.result_shape import MARKER_KEY
from bridge.tools.errors import ToolError
from bridge.tools.json_text import compact_json
from bridge.tools.validation import check_output

__all__ = ["CONTENT_BLOCK_TYPES", "audio", "error_result", "image", "link", "resource", "text", "to_call_result"]

CONTENT_BLOCK_TYPES: tuple[type[Any], ...] = (
    types.TextContent,
    types.ImageContent,
    types.AudioContent,
    types.ResourceLink,
    types.EmbeddedResource,
)

_RESULT_KEYS = frozenset({"content", "structuredContent", "isError", "_meta"})
_BLOCK_TYPE_NAMES = frozenset({"text", "image", "audio", "resource_link", "resource"})


def _base64(data: bytes | str, what: str) -> str:
    if isinstance(data, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(data)).decode("ascii")
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"{what} data given as str must be base64") from exc
    return data


# ------------------------------------------------------------------------------------------------
# Helpers
# ------------------------------------------------------------------------------------------------


def text(s: str) -> types.TextContent:
    """A text block."""
    return types.TextContent(type="text", text=s)


def image(data: bytes | str, mime: str) -> types.ImageContent:
    """An image block from raw bytes or an already base64-encoded string.

    Raises:
        ValueError: ``data`` is a str that is not valid base64.
    """
    return types.ImageContent(type="image", data=_base64(data, "image"), mime_type=mime)


def audio(data: bytes | str, mime: str) -> types.AudioContent:
    """An audio block from raw bytes or an already base64-encoded string.

    Raises:
        ValueError: ``data`` is a str that is not valid base64.
    """
    return types.AudioContent(type="audio", data=_base64(data, "audio"), mime_type=mime)


def link(uri: str, name: str, mime: str | None = None, description: str | None = None) -> types.ResourceLink:
    """A link to a resource the client can fetch (``resource_link`` block)."""
    return types.ResourceLink(type="resource_link", uri=uri, name=name, mime_type=mime, description=description)


def resource(uri: str, data: bytes | str, mime: str | None = None) -> types.EmbeddedResource:
    """An embedded resource: text contents for ``str``, base64 blob contents for ``bytes``."""
    contents: types.TextResourceContents | types.BlobResourceContents
    if isinstance(data, str):
        contents = types.TextResourceContents(uri=uri, mime_type=mime, text=data)
    else:
        contents = types.BlobResourceContents(uri=uri, mime_type=mime, blob=base64.b64encode(bytes(data)).decode())
    return types.EmbeddedResource(type="resource", resource=contents)


def error_result(message: str) -> types.CallToolResult:
    """An ``isError`` result whose one text block is ``message``."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


# ------------------------------------------------------------------------------------------------
# Return-value mapping
# ------------------------------------------------------------------------------------------------


def _as_full_result(value: Mapping[str, Any]) -> types.CallToolResult | None:
    """``value`` as a CallToolResult if it is unmistakably one (wire keys, typed blocks), else None.

    A JSON body that merely has a ``content`` key (common in upstream APIs) stays data.
    """
    content = value.get("content")
    if not isinstance(content, list) or not value.keys() <= _RESULT_KEYS:
        return None
    if not all(isinstance(b, Mapping) and b.get("type") in _BLOCK_TYPE_NAMES for b in content):
        return None
    try:
        return types.CallToolResult.model_validate(value, by_name=False)
    except ValidationError:
        return None


def _structured(value: Any) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=compact_json(value))], structured_content=value
    )


_UNSTRUCTURED_NOTE = "The answer is not the documented JSON shape: it is in the content blocks"


def _unstructured(
    result: types.CallToolResult, output_schema: Mapping[str, Any], tool_name: str
) -> types.CallToolResult:
    """``result`` (content only) with the note that says so, as structured content too."""
    structured = {MARKER_KEY: [_UNSTRUCTURED_NOTE]}
    try:
        check_output(tool_name, output_schema, structured)
    except ToolError:
        raise ToolError(
            f'Tool "{tool_name}" has an output schema but its result carries no structured content.'
        ) from None
    note = types.TextContent(type="text", text=f"[{MARKER_KEY}] {_UNSTRUCTURED_NOTE}.")
    return result.model_copy(update={"content": [*result.content, note], "structured_content": structured})


def to_call_result(
    value: Any,
    *,
    output_schema: Mapping[str, Any] | None = None,
    tool_name: str = "tool",
    structured_verified: bool = False,
) -> types.CallToolResult:
    """Map a ``run`` return value to a ``CallToolResult`` (see the module docstring).

    ``structured_verified``: a full result's ``structuredContent`` was already checked against
    ``output_schema`` by the tool itself (generated HTTP tools do), so it is not checked twice.

    Raises:
        ToolError: the value does not match ``output_schema``, or a tool with an output schema
            returned content blocks instead of a value.
        TypeError: the value has a type that cannot be sent (bytes, a set, an arbitrary object).
        ValueError: the value contains NaN or Infinity, which JSON cannot carry.
    """
    full: types.CallToolResult | None = None
    if isinstance(value, types.CallToolResult):
        full = value
    elif isinstance(value, Mapping):
        full = _as_full_result(value)
    if full is not None:
        if output_schema is not None and not full.is_error:
            if full.structured_content is None:
                return _unstructured(full, output_schema, tool_name)
            if not structured_verified:
                check_output(tool_name, output_schema, full.structured_content)
        return full

    if output_schema is not None:
        if isinstance(value, CONTENT_BLOCK_TYPES) or (
            isinstance(value, list) and value and all(isinstance(b, CONTENT_BLOCK_TYPES) for b in value)
        ):
            raise ToolError(f'Tool "{tool_name}" has an output schema but returned content blocks instead of a value.')
        if isinstance(value, str):
            return _unstructured(types.CallToolResult(content=[text(value)]), output_schema, tool_name)
        if isinstance(value, Mapping) and not isinstance(value, dict):
            value = dict(value)
        check_output(tool_name, output_schema, value)
        return _structured(value)

    if value is None:
        return types.CallToolResult(content=[])
    if isinstance(value, str):
        return types.CallToolResult(content=[types.TextContent(type="text", text=value)])
    if isinstance(value, CONTENT_BLOCK_TYPES):
        return types.CallToolResult(content=[value])
    if isinstance(value, Mapping):
        return _structured(value if isinstance(value, dict) else dict(value))
    if isinstance(value, list | tuple):
        blocks = [b for b in value if isinstance(b, CONTENT_BLOCK_TYPES)]
        if blocks and len(blocks) == len(value):
            return types.CallToolResult(content=blocks)
        if blocks:
            raise TypeError("a tool returned a list mixing content blocks and plain values")
        return types.CallToolResult(content=[types.TextContent(type="text", text=compact_json(value))])
    if isinstance(value, bool | int | float):
        return types.CallToolResult(content=[types.TextContent(type="text", text=compact_json(value))])
    raise TypeError(f"a tool returned a {type(value).__name__}, which cannot be sent as a tool result")
