"""Tokens are counted one way for every server, and TOKENS.md shows only figures its run measured."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bench import run_all, tokens, visible
from bench.figures import BRIDGE_SPEC, FASTMCP, OMG


class LengthCounter:
    """A stand-in counter: one token a character (the counting rule is what is under test, not o200k)."""

    exact = False
    source = "test"

    def count(self, text: str) -> int:
        return len(text)


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
NOT_VISIBLE = ["outputSchema", "annotations", "_meta", "title"]
TOOL = st.fixed_dictionaries(
    {"name": st.text(min_size=1, max_size=10), "description": st.text(max_size=20), "inputSchema": JSONISH}
)


@settings(max_examples=100, deadline=None)
@given(tools=st.lists(TOOL, max_size=4), extra=st.dictionaries(st.sampled_from(NOT_VISIBLE), JSONISH))
def test_only_name_description_and_input_schema_are_counted(tools: list[dict[str, Any]], extra: dict[str, Any]) -> None:
    counter = LengthCounter()
    bare = visible.model_visible_tokens(tools, counter)
    assert visible.model_visible_tokens([{**t, **extra} for t in tools], counter) == bare
    assert bare == sum(
        len(json.dumps({k: t[k] for k in visible.VISIBLE_KEYS}, separators=(",", ":"), ensure_ascii=False))
        for t in tools
    )


def test_run_all_and_tokens_count_with_the_same_function() -> None:
    assert run_all.model_visible_tokens is visible.model_visible_tokens
    assert tokens.model_visible_tokens is visible.model_visible_tokens
    assert run_all.token_counter is tokens.token_counter is visible.token_counter


def _tokens_data(served: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The smallest data tokens.report renders, with the served lists given."""
    keys = ["visible_before", "visible_after", "visible_after_no_output", "bytes_before", "bytes_after"]
    keys += ["bytes_after_no_output", "description_before", "description_after", "input_before", "input_after"]
    keys += ["instructions_tokens", "shared_arguments", "output_bytes_before", "output_bytes_after"]
    keys += ["discovery_visible", "discovery_bytes", "discovery_instructions_tokens", "tools"]
    data: dict[str, Any] = dict.fromkeys(keys, 7)
    data |= {"machine": "m", "counter": "c", "exact": True, "spec": "s", "with_output_schema": 1, "with_fields": 1}
    data |= {"parse_s": 0.1, "lean_s": 0.1, "largest_after": [], "bytes_parts_after": {}}
    data["constraints"] = {w: {"before": {}, "after": {}} for w in ("input_schema", "output_schema")}
    results = ["operations", "step", "before_tokens", "after_tokens", "over_stdio_line", "largest_after_bytes"]
    data["results"] = dict.fromkeys([*results, "cut", "valid", "errors"], 1)
    data["results"] |= {"reduction": 0.5, "median_reduction": 0.5}
    data["served"] = served
    return data


@settings(max_examples=50, deadline=None)
@given(
    figures=st.lists(st.tuples(st.integers(1000, 10**6), st.integers(10**4, 10**8)), min_size=3, max_size=3),
    missing=st.sets(st.sampled_from(tokens.SERVED)),
)
def test_tokens_report_shows_the_peers_measured_figures_or_not_measured(
    figures: list[tuple[int, int]], missing: set[str]
) -> None:
    served: dict[str, dict[str, Any]] = {}
    for label, (count, size) in zip(tokens.SERVED, figures, strict=True):
        served[label] = (
            {"error": "not measured: not set up"}
            if label in missing
            else {"tools": 3, "tokens": count, "bytes": size, "error": ""}
        )
    text = tokens.report(_tokens_data(served))
    for label, (count, size) in zip(tokens.SERVED, figures, strict=True):
        row = next(line for line in text.splitlines() if line.startswith(f"| {label} |"))
        if label in missing:
            assert "not measured" in row and f"{count:,}" not in row
        else:
            assert f"{count:,}" in row and f"{size:,}" in row
    assert set(tokens.SERVED) == {BRIDGE_SPEC, FASTMCP, OMG}


def test_the_tokens_module_holds_no_figure_of_a_peer() -> None:
    """No peer count typed into the source: every 5+ character number in bench/tokens.py is a seed or a limit."""
    source = Path(tokens.__file__).read_text(encoding="utf-8")
    literals = {int(x.replace("_", "")) for x in re.findall(r"(?<![\w.])\d[\d_]{4,}(?![\w.])", source)}
    allowed = {tokens.SEED, tokens.DISCOVERY_TOKENS}
    assert literals <= allowed, literals - allowed
