"""The trimmed-result shape both halves share: the marker, the ``fields`` argument, paging, limits.

Part of the contract between the generator and the runtime (no httpx, no generator): the generator
advertises output schemas and the ``fields`` argument by these rules, and the runtime's trimming
(``bridge.results.trim``) produces results that match them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

MARKER_KEY = "_truncated"
"""The result member that lists what trimming cut (notes written for the model)."""
DEFAULT_MAX_BYTES = 24 * 1024
DEFAULT_MAX_ITEMS = 100
DEFAULT_MAX_STRING = 4000
MAX_RESULT_DEPTH = 64
"""Containers nested deeper than this in a result are emptied (with a note): the official Python
client's JSON parser stops at about 200 levels of the whole message, serde_json (Rust) at 128."""
DEFAULT_OUTPUT_DEPTH = 1
"""How many levels of an output schema list their fields (deeper levels keep types only)."""

# Explained once, in the server's instructions (bridge.results.trim.INSTRUCTIONS), not in every tool.
FIELDS_SCHEMA: dict[str, Any] = {"type": "string"}  # comma-separated dotted paths
FIELDS_ARG_NAMES = ("fields", "_fields", "result_fields", "fields_")

# Argument names that page through a list, lower-cased with "-" and "_" removed.
PAGE_ARG_NAMES = frozenset(
    {
        "page",
        "perpage",
        "pagesize",
        "pagenumber",
        "pagetoken",
        "pagecursor",
        "nextpagetoken",
        "nexttoken",
        "limit",
        "offset",
        "cursor",
        "after",
        "before",
        "startingafter",
        "endingbefore",
        "maxresults",
        "skip",
        "take",
        "top",
        "since",
        "marker",
        "continuationtoken",
        "startindex",
        "count",
        "size",
    }
)


def page_args(arg_names: Sequence[str]) -> tuple[str, ...]:
    """The arguments among ``arg_names`` that page through results (``per_page``, ``cursor``...)."""
    return tuple(name for name in arg_names if re.sub(r"[-_$]", "", name.lower()) in PAGE_ARG_NAMES)
