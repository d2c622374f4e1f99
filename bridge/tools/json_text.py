"""JSON text as the bridge writes it (request bodies, parameters, results) and reads it (answers)."""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["compact_json", "parse_answer_json", "parse_json"]


def compact_json(value: Any) -> str:
    """``value`` as compact JSON with non-ASCII characters kept.

    Compact and unescaped because the model pays for every token (a ``\\uXXXX`` escape costs
    several per character) and the upstream for every byte; NaN and Infinity are refused
    (``ValueError``) because they are not JSON.
    """
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def parse_json(data: bytes | bytearray | str, **options: Any) -> Any:
    """``json.loads``, with JSON nested deeper than the parser's recursion allows refused as
    invalid (``ValueError``) rather than raised as ``RecursionError``: an upstream answer, a
    JWKS, introspection or token endpoint, or a client's body may be hostile."""
    try:
        return json.loads(data, **options)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def _not_json(literal: str) -> Any:
    raise ValueError(f"{literal} is not JSON")


def _finite(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None


def parse_answer_json(data: bytes | bytearray | str) -> Any:
    """An upstream's JSON answer as plain JSON data, every float finite.

    ``NaN`` and ``Infinity`` are not JSON (RFC 8259), so an answer holding them is refused
    (``ValueError``) like any other invalid JSON; a number too big for a float (``1e999``) reads
    as null, which is what the SDK's JSON dump sends for it. So structured content sent without
    the SDK's re-dump (bridge/server/call_wire.py) is the same on every transport.
    """
    return parse_json(data, parse_constant=_not_json, parse_float=_finite)
