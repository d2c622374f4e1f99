"""Ten thousand operations, part by part: before and after in one process, on Graph's package.

On the package bench/huge_specs.py generated for Microsoft Graph (run it first), alternating the
two ways ``--runs`` times each, in one process:

- code mode's api.pyi index: parsed whole with ``ast`` (before) against split at its statements'
  first lines (``StubIndex.parse``), then one function's stubs (``subset``);
- the search index's build (``SearchIndex``) without (before: ``split_case`` and ``stem`` as they
  were, unwrapped from their caches) and with the memoised word functions, their caches emptied first;
- the catalogue's parse: the standard library's ``json.loads`` (before) against pydantic-core's
  parser, both with the cyclic collector paused, as ``serve`` parses it (with it running, the
  collector's passes take most of the time and the two parsers are alike).

``python -m bench.huge_parts [--runs N]`` rewrites the part of bench/BIG_SPECS.md between its
``huge-parts`` markers.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import pydantic_core

from bench.common import BENCH_DIR, OUT_DIR, machine_info
from bridge.contract.stubs import StubIndex
from bridge.modes import search_words
from bridge.modes.search import SearchEntry, SearchIndex, returns_list

REPORT = BENCH_DIR / "BIG_SPECS.md"
BEGIN, END = "<!-- huge-parts -->", "<!-- /huge-parts -->"
PACKAGE = OUT_DIR / "huge" / "pkg" / "graph"


def _timed(work: Callable[[], Any]) -> float:
    began = time.perf_counter()
    work()
    return time.perf_counter() - began


def _entries(data: dict[str, Any]) -> list[SearchEntry]:
    return [
        SearchEntry(
            name=tool["name"],
            operation=f"{tool['binding']['method']} {tool['binding']['path']}",
            summary=tool.get("title") or "",
            description=tool["description"],
            tags=tuple(tool.get("tags", ())),
            deprecated=bool(tool.get("deprecated")),
            returns_list=returns_list(tool.get("output_schema")),
        )
        for tool in data["tools"]
    ]


def _unmemoised(work: Callable[[], Any]) -> Callable[[], Any]:
    def run() -> Any:
        cached = search_words.split_case, search_words.stem
        search_words.split_case, search_words.stem = cached[0].__wrapped__, cached[1].__wrapped__  # type: ignore[assignment]
        try:
            return work()
        finally:
            search_words.split_case, search_words.stem = cached

    return run


def _paused(work: Callable[[], Any]) -> Callable[[], Any]:
    """``work`` with the cyclic collector off, as ``serve`` parses the catalogue (bridge/serving/tuning.py)."""

    def run() -> Any:
        gc.disable()
        try:
            return work()
        finally:
            gc.enable()

    return run


def _cold(build: Callable[[list[SearchEntry]], Any], entries: list[SearchEntry]) -> Any:
    """``build(entries)`` with the word caches empty, as a server's first build finds them."""
    search_words.split_case.cache_clear()
    search_words.stem.cache_clear()
    return build(entries)


def measure(runs: int) -> dict[str, tuple[float, float]]:
    raw = (PACKAGE / "catalogue.json").read_bytes()
    stubs = (PACKAGE / "api.pyi").read_text(encoding="utf-8")
    function = next(line.split("(")[0][len("async def ") :] for line in stubs.splitlines() if line.startswith("async"))
    entries = _entries(pydantic_core.from_json(raw))
    pairs: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
        "catalogue.json parse (162 MB), collector paused as serving does": (
            _paused(lambda: json.loads(raw)),
            _paused(lambda: pydantic_core.from_json(raw)),
        ),
        "search index build": (_unmemoised(lambda: SearchIndex(entries)), lambda: _cold(SearchIndex, entries)),
        "api.pyi index and one function's stubs (27 MB)": (
            lambda: StubIndex._parse_whole(stubs).subset([function]),
            lambda: StubIndex.parse(stubs).subset([function]),
        ),
    }
    found = {}
    for label, (before, after) in pairs.items():
        times: tuple[list[float], list[float]] = ([], [])
        for _ in range(runs):
            times[0].append(_timed(before))
            times[1].append(_timed(after))
            print(f"  {label}: {times[0][-1]:.2f} s -> {times[1][-1]:.2f} s", file=sys.stderr)
        found[label] = (statistics.median(times[0]), statistics.median(times[1]))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    found = measure(args.runs)
    lines = [
        BEGIN,
        "### Part by part, before and after in one process (Graph)",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M')} on {machine_info()}; load average before the run {load}. "
        f"Medians of {args.runs} runs of each, alternating (`python -m bench.huge_parts`).",
        "",
        *(f"- {label}: {b:.2f} s before, {a:.2f} s after ({b / a:.1f}x)" for label, (b, a) in found.items()),
        END,
    ]
    section = "\n".join(lines)
    text = REPORT.read_text(encoding="utf-8")
    if BEGIN in text and END in text:
        text = text[: text.index(BEGIN)] + section + text[text.index(END) + len(END) :]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    REPORT.write_text(text, encoding="utf-8")
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
