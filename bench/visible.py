"""What a tool list costs the model, counted one way for every server (run_all and tokens both use this).

A server's ``tools/list`` answer, as a client received it (a list of tool dicts), is counted:

- tokens: for each tool, the compact JSON of ``{"name", "description", "inputSchema"}`` (in that
  order, ``ensure_ascii=False``, no spaces) counted with o200k_base, summed over the tools. Only
  those three members reach the model's context in the common clients; annotations, output schemas
  and ``_meta`` stay with the client;
- bytes: the compact JSON of the whole result (``{"tools": [...]}``, cursor pages summed), as
  :meth:`bench.common.StdioPeer.list_tools_raw` measures each answer it receives: re-encoded by one
  encoder, so every server's list is measured alike whatever its own JSON spacing.

In-process tool lists (bench/tokens.py's before/after compaction) go through the same functions
after being dumped as the wire would carry them (:func:`wire_dicts`), so the figures compare.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bench.common import BENCH_DIR, ROOT

TOKENIZER_DIR = BENCH_DIR / "tokenizer"
VISIBLE_KEYS = ("name", "description", "inputSchema")


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def visible_json(tool: Mapping[str, Any]) -> str:
    """The part of one tool the model reads, as counted."""
    return _compact(
        {"name": tool.get("name"), "description": tool.get("description", ""), "inputSchema": tool.get("inputSchema")}
    )


def model_visible_tokens(tools: Iterable[Mapping[str, Any]], counter: Any) -> int:
    return sum(counter.count(visible_json(tool)) for tool in tools)


def list_bytes(tools: Sequence[Mapping[str, Any]]) -> int:
    """Bytes of a one-page ``tools/list`` result holding ``tools`` (compact JSON, UTF-8)."""
    return len(_compact({"tools": list(tools)}).encode())


def wire_dicts(wire_tools: Iterable[Any]) -> list[dict[str, Any]]:
    """``mcp_types.Tool`` objects as a client receives them (camelCase, no nulls)."""
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in wire_tools]


def token_counter() -> Any:
    """The o200k_base counter (exact from npm tiktoken's ranks in bench/tokenizer, else the chars/4 estimate)."""
    from bridge.cli.tokens import load_counter
    from tests.node_tools import npm_ci

    try:
        npm_ci(TOKENIZER_DIR)
    except Exception:  # no npm: load_counter falls back to tiktoken's cache or the documented estimate
        pass
    return load_counter(npm_dirs=[TOKENIZER_DIR])


def how_counted(counter: Any) -> str:
    """One sentence for the reports: what was counted, with what."""
    what = "compact JSON of `{name, description, inputSchema}` per tool, summed over the tools"
    source = str(counter.source).replace(str(ROOT) + "/", "")
    if counter.exact:
        return f"{what}; o200k_base, exact ({source})"
    return f"{what}; **ESTIMATE** ceil(chars/4), not exact ({source})"
