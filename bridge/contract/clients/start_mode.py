"""Which mode a client should start a package in: its own, or discovery when its tool list is too big.

A big API served as one tool per operation costs the model its whole tool list before the first
call (GitHub: 1,223 tools, about 200k tokens). Above the budget the README's client config and
``mcp-bridge install`` add ``--mode discovery`` and say why with one count: the tools/list payload
estimated at characters / 4 (``mcp-bridge inspect`` counts it exactly).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from typing import Any

from bridge.contract.catalogue import OPERATION_META_KEY, Catalogue, ToolEntry

# Above this many model-visible tokens (name, description and schemas of every tool), clients start
# the package in discovery mode and `generate` says so.
DISCOVERY_HINT_TOKENS = 30_000
CHARS_PER_TOKEN = 4


def listed_tool(entry: ToolEntry) -> dict[str, Any]:
    """``entry`` as tools/list sends it (bridge/server/handlers.py ``wire_data`` of its HTTP tool)."""
    wire: dict[str, Any] = {"name": entry.name}
    if entry.title is not None:
        wire["title"] = entry.title
    if entry.description:
        wire["description"] = entry.description
    shown = entry.advertised_input_schema if entry.advertised_input_schema is not None else entry.input_schema
    wire["inputSchema"] = shown
    if entry.output_schema is not None:
        wire["outputSchema"] = entry.output_schema
    wire["annotations"] = asdict(entry.annotations)
    wire["_meta"] = {OPERATION_META_KEY: entry.operation}
    return wire


def estimated_tool_list_tokens(catalogue: Catalogue) -> int:
    """The tools/list payload of the catalogue's tools as compact JSON, in characters / 4."""
    return sum(
        math.ceil(len(json.dumps(listed_tool(entry), ensure_ascii=False, separators=(",", ":"))) / CHARS_PER_TOKEN)
        for entry in catalogue.tools
    )


def start_mode(catalogue: Catalogue, budget: int | None = None) -> tuple[list[str], str | None]:
    """Extra ``serve`` arguments for a client, and the one-line reason (None when none are needed)."""
    if catalogue.mode != "tools":
        return [], None
    budget = DISCOVERY_HINT_TOKENS if budget is None else budget
    tokens = estimated_tool_list_tokens(catalogue)
    if tokens <= budget:
        return [], None
    reason = (
        f"its {len(catalogue.tools):,} tools cost about {tokens:,} tokens (characters / {CHARS_PER_TOKEN}) "
        f"before the first call, over {budget:,}; discovery mode shows three (search, describe, call)"
    )
    return ["--mode", "discovery"], reason
