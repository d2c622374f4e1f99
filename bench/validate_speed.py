"""Spec validation speed: ``find_problems`` with the fast steps against the library's own steps.

    .venv/bin/python -m bench.validate_speed            # prints the table, writes bench/VALIDATION_SPEED.md

``generate`` validates the spec in a background worker while it does the rest, so validation is a
floor of its wall time. For GitHub's spec and one example spec of each version, in one process:
``find_problems(document)`` (jsonschema-rs meta-schema checks, one-step path resolution) and
``find_problems(document, accelerated=False)`` (openapi-spec-validator's own steps: what ``main``
ran before), alternated, three runs each, medians. Parsing is not timed. Both must report the same
problems; the run fails if they do not.

Then the whole job of ``generate``'s validation worker on GitHub's spec (``_validation_issues``:
read, parse, bundle refs, validate), first call in a fresh process, three processes each way; the
"library's steps" processes swap ``generator.load.spec.find_problems`` for its
``accelerated=False`` form, which is the code ``main`` ran.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import (
    BENCH_DIR,
    OAS_EXAMPLES_DIR,
    ROOT,
    child_env,
    ensure_test_node_modules,
    github_spec,
    machine_info,
    md_table,
    replace_section,
)

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


WORKER = """
import functools, json, sys, time
import generator.load.spec as spec
from generator.generate import _validation_issues
if sys.argv[2] == "library":
    spec.find_problems = functools.partial(spec.find_problems, accelerated=False)
started = time.perf_counter()
issues = _validation_issues(sys.argv[1], False, ())
print(json.dumps({"seconds": time.perf_counter() - started, "issues": len(issues)}))
"""


def worker_seconds(path: Path, steps: str) -> tuple[float, int]:
    done = subprocess.run(
        [sys.executable, "-c", WORKER, str(path), steps],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return float(result["seconds"]), int(result["issues"])


def worker_rows(path: Path) -> list[list[str]]:
    runs: dict[str, list[float]] = {"library": [], "fast": []}
    issues: dict[str, set[int]] = {"library": set(), "fast": set()}
    for _ in range(RUNS):
        for steps in runs:
            seconds, count = worker_seconds(path, steps)
            runs[steps].append(seconds)
            issues[steps].add(count)
    if issues["library"] != issues["fast"]:
        raise SystemExit(f"the worker found {issues['fast']} issues with the fast steps, {issues['library']} without")
    library, fast = statistics.median(runs["library"]), statistics.median(runs["fast"])
    return [["`_validation_issues` (fresh process)", f"{library:.3f}", f"{fast:.3f}", f"{library / fast:.1f}x"]]


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
    github = specs()[0][1]
    worker = md_table(["GitHub's spec", "library's steps (s)", "fast steps (s)", "speed-up"], worker_rows(github))
    body = (
        f"Measured {stamp} on {machine_info()}.\n\n### `find_problems`, median of {RUNS} runs\n\n{table}\n\n"
        f"### generate's validation worker, median of {RUNS} fresh processes\n\n{worker}\n"
    )
    print(body)
    replace_section(REPORT, "validate-speed", body, SKELETON)


if __name__ == "__main__":
    main()
