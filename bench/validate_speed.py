"""Spec validation speed: ``find_problems`` with the fast steps against the library's own steps.

    .venv/bin/python -m bench.validate_speed            # prints the table, writes bench/VALIDATION_SPEED.md

``generate`` validates the spec in a background worker while it does the rest, so validation is a
floor of its wall time. For GitHub's spec and one example spec of each version, in one process:
``find_problems(document)`` (jsonschema-rs meta-schema checks, one-step path resolution) and
``find_problems(document, accelerated=False)`` (openapi-spec-validator's own steps: what ``main``
ran before), alternated, three runs each, medians. Parsing is not timed. Both must report the same
problems; the run fails if they do not.
"""

from __future__ import annotations

import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import BENCH_DIR, OAS_EXAMPLES_DIR, ensure_test_node_modules, github_spec, machine_info, md_table
from bench.common import replace_section

REPORT = BENCH_DIR / "VALIDATION_SPEED.md"
RUNS = 3
EXAMPLES = ("3.1/json/readme.json", "3.0/json/star-trek.json", "2.0/json/petstore.json")
SKELETON = "# Spec validation speed\n\nWritten by `python -m bench.validate_speed` (see its docstring).\n"


def specs() -> list[tuple[str, Path]]:
    ensure_test_node_modules()
    github = github_spec()
    return [(github.id, github.path)] + [(f"oas-examples/{rel}", OAS_EXAMPLES_DIR / rel) for rel in EXAMPLES]


def measure(document: Any) -> tuple[float, float, int]:
    """Median seconds with the fast steps and with the library's, and the number of problems."""
    from generator.load.validate import find_problems

    fast: list[float] = []
    library: list[float] = []
    for _ in range(RUNS):
        started = time.perf_counter()
        found = find_problems(document)
        fast.append(time.perf_counter() - started)
        started = time.perf_counter()
        reference = find_problems(document, accelerated=False)
        library.append(time.perf_counter() - started)
        if found != reference:
            raise SystemExit(f"the fast steps reported {found!r}, the library's {reference!r}")
    return statistics.median(fast), statistics.median(library), len(found)


def main() -> None:
    from generator.load.reading import parse_document

    rows = []
    for name, path in specs():
        document = parse_document(path.read_bytes())
        fast, library, problems = measure(document)
        size = f"{path.stat().st_size / 2**20:.1f}"
        rows.append([f"`{name}`", size, problems, f"{library:.3f}", f"{fast:.3f}", f"{library / fast:.1f}x"])
    table = md_table(["spec", "MB", "problems", "library's steps (s)", "fast steps (s)", "speed-up"], rows)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    body = f"Measured {stamp} on {machine_info()}.\n\n### `find_problems`, median of {RUNS} runs\n\n{table}\n"
    print(body)
    replace_section(REPORT, "validate-speed", body, SKELETON)


if __name__ == "__main__":
    main()
