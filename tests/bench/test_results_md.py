"""The hand-written part of bench/RESULTS.md claims no figure: the figures live in the generated tables."""

from __future__ import annotations

import re

from bench import targets
from bench.run_all import RESULTS_MD

# Numbers the analysis may write that are not measurements: the targets' limits, versions of
# the peers and the spec, protocol revisions, and how the bench is made (runs, cores).
LIMITS = {
    targets.GENERATE_S,
    targets.GENERATE_MB,
    targets.COLD_START_OVER_FLOOR_S,
    targets.RSS_OVER_FLOOR_MB,
    targets.TOOLS_LIST_MS,
    targets.ADDED_MS,
    targets.CALLS_RATIO,
    targets.GITHUB_TOKENS,
    targets.GITHUB_LIST_BYTES,
    targets.GITHUB_TOKENS / 1000,  # "180k"
    targets.GITHUB_LIST_BYTES / 1e6,  # "1.2 MB"
    targets.GENERATE_FAST_S,
    targets.GENERATE_FAST_MB,
    targets.CPU_OVER_FLOORS_MS,
    targets.CACHED_OVER_PACKAGE_S,
}
NOT_FIGURES = {"4.2.3", "4.0.1", "23.0.2", "2024-11-05", "2025-11-25", "2026-07-28", "2020-12"}
COUNTS = {1.0, 2.0, 3.0}  # "medians of 3", "2 cores", "one run"


def analysis(text: str) -> str:
    begin, end = "<!-- analysis:begin -->", "<!-- analysis:end -->"
    assert begin in text and end in text
    return text.split(begin, 1)[1].split(end, 1)[0]


def claimed_numbers(text: str) -> list[str]:
    """Every number written in ``text``, versions and dates kept whole (``4.2.3``, ``2026-07-28``), units apart."""
    text = re.sub(r"`[^`]*`", " ", text)  # code: commands, names, options
    text = re.sub(r"\]\([^)]*\)|#\d+", " ", text)  # link targets, issue numbers
    # a number stands alone: digits inside a name (o200k_base, httpx2, TS2590) are not a claim
    number = r"(?<![\w.])(\d{4}-\d{2}-\d{2}|\d+(?:[.,]\d+)*)"
    return re.findall(number + r"(?=(?:x|k|ms|s|MB|KB|B)?(?!\w))", text)


def unmeasured(text: str) -> list[str]:
    out = []
    for number in claimed_numbers(analysis(text)):
        if number in NOT_FIGURES:
            continue
        value = float(number.replace(",", "")) if re.fullmatch(r"[\d,]+(\.\d+)?", number) else None
        if value is None or (value not in LIMITS and value not in COUNTS):
            out.append(number)
    return out


def test_the_analysis_of_results_md_claims_no_figure_the_run_did_not_produce() -> None:
    assert unmeasured(RESULTS_MD.read_text(encoding="utf-8")) == []


def test_a_figure_typed_into_the_analysis_is_caught() -> None:
    claim = "GitHub cold start 0.81 s against a 0.83 s floor, calls 1.39x FastMCP's, 3ms; limit 50 ms, 180k."
    text = f"<!-- analysis:begin -->\n{claim}\n<!-- analysis:end -->"
    assert unmeasured(text) == ["0.81", "0.83", "1.39"]
    assert unmeasured(text.replace("0.81 s against a 0.83 s floor, calls 1.39x FastMCP's", "see the table")) == []
