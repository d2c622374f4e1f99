"""JSON text as the bridge writes it, in request bodies, parameters and results alike."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["compact_json"]


def compact_json(value: Any) -> str:
    """``value`` as compact JSON with non-ASCII characters kept.

    Compact and unescaped because the model pays for every token (a ``\\uXXXX`` escape costs
    several per character) and the upstream for every byte; NaN and Infinity are refused
    (``ValueError``) because they are not JSON.
    """
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
