"""The task suite's report: ``python -m bench.tasks [--no-fastmcp] [--overhead-runs N]`` -> bench/TASKS.md.

GitHub's spec (``@octokit/openapi``, pinned in tests/node) and the Swagger petstore
(``@readme/oas-examples``) are generated without models into bench/out/tasks/; every task of
:mod:`bench.tasks.github_tasks` and :mod:`bench.tasks.petstore_tasks` then runs in the bridge's
three modes (and FastMCP 4.2.3's code mode, when its virtualenv can be set up) against the
loopback upstream; see :mod:`bench.tasks.task` for the transcripts and
:mod:`bench.tasks.session` for what is counted.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from typing import Any

import anyio

from bench.common import BENCH_DIR, fmt, machine_info, md_table, median, replace_section
from bench.tasks import github_tasks, petstore_tasks, petstore_world, run
from bench.tasks.run import FASTMCP, MODES, SIGNATURES, Api, Outcome
from bench.tasks.serving import package
from bench.visible import how_counted, token_counter

REPORT = BENCH_DIR / "TASKS.md"
SKELETON = "# Task suite\n\nWritten by `python -m bench.tasks` (see bench/tasks/__init__.py).\n"
OVERHEAD_TARGET_MS = 50.0


def apis() -> list[Api]:
    from tests.node_tools import github_spec

    pet_spec = petstore_world.spec_path()
    return [
        Api("github", github_spec(), package(github_spec(), "github")),
        Api("petstore", pet_spec, package(pet_spec, "petstore"), "/v2"),
    ]


async def collect(
    chosen: Sequence[Api], *, fastmcp: bool, overhead_runs: int
) -> tuple[list[Outcome], dict[str, list[float]], str]:
    counter = token_counter()
    tasks = {"github": github_tasks.TASKS, "petstore": petstore_tasks.TASKS}
    outcomes: list[Outcome] = []
    overhead: dict[str, list[float]] = {}
    fastmcp_note = "not run (--no-fastmcp)"
    async with run.upstream(chosen) as (up, url):
        for api in chosen:
            found, times = await run.run_api(api, tasks[api.label], up, url, counter, overhead_runs=overhead_runs)
            outcomes += found
            if api.label == "github":
                overhead.update(times)
        if fastmcp:
            from bench.peers import fastmcp_versions
            from bench.tasks.serving import fastmcp_code_python

            try:
                python = fastmcp_code_python()
            except Exception as exc:  # no network for pip: say so rather than fail the suite
                python, fastmcp_note = None, f"not run: its virtualenv could not be set up ({exc})"
            if python is not None:
                fastmcp_note = fastmcp_versions(python) + ", pydantic-monty (the `code-mode` extra)"
                for api in chosen:
                    outcomes += await run.run_fastmcp_api(api, tasks[api.label], up, url, counter, python)
    return outcomes, overhead, fastmcp_note + "; " + how_counted(counter)


def _best(values: Sequence[float], *, digits: int = 0) -> list[str]:
    """Cells, the lowest in bold (every tie too)."""
    real = [v for v in values if not math.isnan(v)]
    low = min(real) if real else math.nan
    return [f"**{fmt(v, digits)}**" if v == low else fmt(v, digits) for v in values]


def _modes(outcomes: Sequence[Outcome]) -> list[str]:
    present = {o.mode for o in outcomes}
    return [m for m in (*MODES, SIGNATURES, FASTMCP) if m in present]


def _cell(outcome: Outcome | None, what: str) -> float:
    """A task's figure in one mode; NaN when the mode did not run it or got it wrong."""
    if outcome is None or not outcome.ok:
        return math.nan
    return float(outcome.read + outcome.written if what == "tokens" else outcome.round_trips)


def render(outcomes: Sequence[Outcome], overhead: dict[str, list[float]], note: str) -> tuple[str, list[str]]:
    modes = _modes(outcomes)
    by = {(o.task, o.mode): o for o in outcomes}
    tasks = [*github_tasks.TASKS, *petstore_tasks.TASKS]
    tasks = [t for t in tasks if any((t.id, m) in by for m in modes)]
    med: dict[str, dict[str, float]] = {m: run.summary(outcomes, m) for m in modes}
    rows = []
    for label, key, digits in (
        ("tokens read (median)", "read", 0),
        ("tokens written (median)", "written", 0),
        ("tokens read + written (median)", "total", 0),
        ("round trips (median)", "round_trips", 1),
        ("round trips (most)", "max_round_trips", 0),
    ):
        rows.append([label, *_best([med[m][key] for m in modes], digits=digits)])
    rows.append(["answers correct", *[f"{int(med[m]['passed'])}/{int(med[m]['tasks'])}" for m in modes]])
    for api in ("github", "petstore"):
        mine = [o for o in outcomes if o.api == api]
        values = [median([o.read + o.written for o in mine if o.mode == m]) for m in modes]
        rows.append([f"{api}: tokens read + written (median)", *_best(values)])
    lines = [
        machine_info(),
        "",
        f"FastMCP: {note}.",
        "",
        "## Tasks",
        "",
        md_table(
            ["task", "prompt", "operations", "writes"],
            [
                [f"{t.api}: {t.id}", t.prompt, ", ".join(s.tool for s in t.searches), "yes" if t.write else ""]
                for t in tasks
            ],
            "llll",
        ),
        "",
        "## Medians over the suite",
        "",
        md_table(["", *modes], rows),
        "",
        "## Tokens per task (read + written; the tool list is read once per task)",
        "",
    ]
    per_task = []
    for task in tasks:
        cells = [_cell(by.get((task.id, m)), "tokens") for m in modes]
        per_task.append([f"{task.api}: {task.id}", *_best(cells)])
    lines += [md_table(["task", *modes], per_task), "", "## Round trips per task", ""]
    trips = [[f"{t.api}: {t.id}", *_best([_cell(by.get((t.id, m)), "round trips") for m in modes])] for t in tasks]
    lines += [md_table(["task", *modes], trips), "", "## Every run", ""]
    detail = [
        [
            f"{o.api}: {o.task}",
            o.mode,
            "yes" if o.ok else f"**no**: {o.error[:160]}",
            f"{o.list_tokens:,}",
            f"{o.read - o.list_tokens:,}",
            f"{o.written:,}",
            o.round_trips,
            o.calls,
        ]
        for t in tasks
        for m in modes
        if (o := by.get((t.id, m))) is not None
    ]
    headers = ["task", "mode", "correct", "tool list", "results", "written", "round trips", "calls"]
    lines += [md_table(headers, detail, "llllrrrr"), ""]
    lines += _overhead_lines(outcomes, overhead)
    targets = _targets(outcomes, overhead, med)
    lines += ["## Targets", "", *[f"- {t}" for t in targets]]
    return "\n".join(lines), targets


def _overhead_lines(outcomes: Sequence[Outcome], overhead: dict[str, list[float]]) -> list[str]:
    fast = {o.task: o.program_ms_server for o in outcomes if o.mode == FASTMCP and o.api == "github" and o.ok}
    code = {o.task: o.program_ms_server for o in outcomes if o.mode == "code" and o.api == "github" and o.ok}
    rows = []
    for task in github_tasks.TASKS:
        if task.id not in overhead:
            continue
        rows.append(
            [
                task.id,
                fmt(median(overhead[task.id]), 1),
                fmt(median(code.get(task.id, [])), 1),
                fmt(median(fast.get(task.id, [])), 1) if fast else "n/a",
            ]
        )
    every = [v for values in overhead.values() for v in values]
    rows.append(["**all programs**", fmt(median(every), 1), fmt(median([median(v) for v in code.values()]), 1), ""])
    if fast:
        rows[-1][-1] = fmt(median([median(v) for v in fast.values()]), 1)
    headers = [
        "GitHub task",
        f"bridge, {len(next(iter(overhead.values()), []))} warm runs (ms)",
        "bridge, the suite's run (ms)",
        "FastMCP code mode, the suite's run (ms)",
    ]
    return [
        "## A program's own overhead on GitHub's stubs (upstream time excluded)",
        "",
        "From the client sending `run_query`/`run_code` (FastMCP: `execute`) to its answer, through the "
        "in-memory MCP session, minus the time the upstream was busy. First column: the program rerun "
        "on a fresh world after one warm-up, upstream time as the bridge's HTTP client sees it (request "
        "sent to body read); the others: the suite's single run, upstream time as the upstream app sees "
        "it (the only view of FastMCP's calls, so the loopback HTTP hop counts as overhead there).",
        "",
        md_table(headers, rows),
        "",
    ]


def _targets(
    outcomes: Sequence[Outcome],
    overhead: dict[str, list[float]],
    med: dict[str, dict[str, float]],
) -> list[str]:
    def verdict(ok: bool) -> str:
        return "met" if ok else "**MISSED**"

    out = []
    failed = [f"{o.api}: {o.task} ({o.mode})" for o in outcomes if not o.ok]
    out.append(
        f"every answer correct in every mode: {verdict(not failed)}" + (f" ({', '.join(failed)})" if failed else "")
    )
    tools, disco, code = (med.get(m, {}).get("total", math.nan) for m in MODES)
    out.append(f"code mode's median tokens <= 1/5 of tools mode's: {fmt(code, 0)} vs {fmt(tools, 0)} / 5 = "
               f"{fmt(tools / 5, 0)}: {verdict(code <= tools / 5)}")  # fmt: skip
    out.append(f"code mode's median tokens <= 1/2 of discovery mode's: {fmt(code, 0)} vs {fmt(disco, 0)} / 2 = "
               f"{fmt(disco / 2, 0)}: {verdict(code <= disco / 2)}")  # fmt: skip
    sig = med.get(SIGNATURES, {}).get("total", math.nan)
    out.append(f"(the signatures-only variant: {fmt(sig, 0)} vs {fmt(disco / 2, 0)}: {verdict(sig <= disco / 2)})")
    most = max((o.round_trips for o in outcomes if o.mode == "code"), default=0)
    out.append(f"code mode <= 2 round trips per task: at most {most}: {verdict(0 < most <= 2)}")
    every = [v for values in overhead.values() for v in values]
    ms = median(every)
    out.append(f"a program's own overhead on GitHub's stubs <= {OVERHEAD_TARGET_MS:.0f} ms (median): "
               f"{fmt(ms, 1)} ms: {verdict(ms <= OVERHEAD_TARGET_MS)}")  # fmt: skip
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--no-fastmcp", action="store_true", help="skip FastMCP's code mode")
    parser.add_argument("--overhead-runs", type=int, default=run.OVERHEAD_RUNS)
    args = parser.parse_args(argv)
    outcomes, overhead, note = anyio.run(_collect, args)
    body = render(outcomes, overhead, note)[0]
    replace_section(REPORT, "tasks", body, SKELETON)
    print(body)
    return 0 if all(o.ok for o in outcomes) else 1


async def _collect(args: Any) -> tuple[list[Outcome], dict[str, list[float]], str]:
    return await collect(apis(), fastmcp=not args.no_fastmcp, overhead_runs=args.overhead_runs)


if __name__ == "__main__":
    raise SystemExit(main())
