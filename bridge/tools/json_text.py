"""JSON text as the bridge writes it (request bodies, parameters, results) and reads it (answers)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["compact_json", "parse_json"]


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
