"""tools/call answers: the SDK's per-version result check, without walking big structured content three times.

The SDK shapes a handler's ``CallToolResult`` for the wire by dumping the model, validating the
dump against the negotiated version's result model and dumping that again; the JSON-RPC writer
then serialises it once more. ``structuredContent`` is ``dict[str, Any]`` in every version's model,
so those first three passes check nothing in it: they only copy it (a 24 KB GitHub answer cost
about 0.1 ms a call in them). For a tool whose structured content is JSON data already
(``Tool.structured_is_json``: generated HTTP tools, which parsed it from the upstream's answer),
the handler hands the SDK the same result with an empty ``structuredContent`` (:func:`hold_structured`)
and :class:`CallResultWire` puts the real one back into the SDK's shaped answer, where the
version keeps the field at all (2024-11-05 has none). Everything else - content blocks, ``isError``,
``_meta``, cache hints, ``resultType``, the server stamp - is still the SDK's own work. Tests compare
the answer with the SDK's for every protocol version.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext

__all__ = ["CallResultWire", "hold_structured"]

STRUCTURED_KEY = "structuredContent"


class _Held:
    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value: dict[str, Any] | None = None


# Set by the middleware around one tools/call; the handler of that call fills it.
_HELD: ContextVar[_Held | None] = ContextVar("bridge_call_structured", default=None)


def hold_structured(result: Any) -> Any:
    """``result`` with its JSON ``structuredContent`` set aside for :class:`CallResultWire`.

    Call it only on results whose structured content is JSON data (dicts, lists, str, int, float,
    bool, None): it bypasses the SDK's JSON-mode dump, which would have converted anything else.
    Outside a tools/call the middleware wraps, ``result`` is returned as it is.
    """
    held = _HELD.get()
    if held is None or held.value is not None or not isinstance(result, types.CallToolResult):
        return result
    structured = result.structured_content
    if type(structured) is not dict or not structured:
        return result
    held.value = structured
    return result.model_copy(update={"structured_content": {}})


class CallResultWire:
    """Server middleware: puts held structured content back into the SDK's tools/call answer."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        held = _Held()
        token = _HELD.set(held)
        try:
            result = await call_next(ctx)
        finally:
            _HELD.reset(token)
        if held.value is None or not isinstance(result, dict):
            return result
        if result.get(STRUCTURED_KEY) == {}:  # the version's result model kept the (empty) field
            result = {**result, STRUCTURED_KEY: held.value}
        return result
