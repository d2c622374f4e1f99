"""bench/TASKS.md's generated section: each suite's tasks, medians, per-task tokens, round trips and
search misses, every run, a program's overhead on GitHub's stubs, and the targets met or missed."""

from __future__ import annotations

import math
from collections.abc import Sequence

from bench.common import fmt, machine_info, md_table, median
from bench.tasks import asana_tasks, github_tasks, petstore_tasks, run
from bench.tasks.run import FASTMCP, FULL_STUBS, MODES, Outcome
from bench.tasks.task import Task

OVERHEAD_TARGET_MS = 50.0
# Code mode's median tokens against the others', per suite (issue 20).
DISCOVERY_RATIO = 0.7
SUITES: dict[str, tuple[str, tuple[Task, ...]]] = {
    "project": ("the project's suite (GitHub, petstore)", (*github_tasks.TASKS, *petstore_tasks.TASKS)),
    "asana": ("the second suite (Asana, written before it ran)", asana_tasks.TASKS),
}


def _best(values: Sequence[float], *, digits: int = 0) -> list[str]:
    """Cells, the lowest in bold (every tie too)."""
    real = [v for v in values if not math.isnan(v)]
    low = min(real) if real else math.nan
    return [f"**{fmt(v, digits)}**" if v == low else fmt(v, digits) for v in values]


def _modes(outcomes: Sequence[Outcome]) -> list[str]:
    present = {o.mode for o in outcomes}
    return [m for m in (*MODES, FULL_STUBS, FASTMCP) if m in present]


def _cell(outcome: Outcome | None, what: str) -> float:
    """A task's figure in one mode; NaN when the mode did not run it or got it wrong."""
    if outcome is None or not outcome.ok:
        return math.nan
    if what == "tokens":
        return float(outcome.read + outcome.written)
    return float(outcome.round_trips if what == "round trips" else outcome.misses)


def _searched(task: Task) -> str:
    return ", ".join(f"{s.tool} ({s.query!r})" for s in task.searches)


def _suite_lines(title: str, tasks: Sequence[Task], outcomes: Sequence[Outcome]) -> list[str]:
    ids = {t.id for t in tasks}
    mine = [o for o in outcomes if o.task in ids]
    modes = _modes(mine)
    by = {(o.task, o.mode): o for o in mine}
    ran = [t for t in tasks if any((t.id, m) in by for m in modes)]
    med = {m: run.summary(mine, m) for m in modes}
    rows = []
    for label, key, digits in (
        ("tokens read (median)", "read", 0),
        ("tokens written (median)", "written", 0),
        ("tokens read + written (median)", "total", 0),
        ("round trips (median)", "round_trips", 1),
        ("round trips (most)", "max_round_trips", 0),
    ):
        rows.append([label, *_best([med[m][key] for m in modes], digits=digits)])
    common = [t.id for t in ran if all((o := by.get((t.id, m))) is not None and o.ok for m in modes)]
    both = [median([float(by[t, m].read + by[t, m].written) for t in common]) for m in modes]
    rows.append([f"tokens read + written (median of the {len(common)} tasks every mode answered)", *_best(both)])
    rows.append(["search misses (all tasks)", *[str(int(med[m]["misses"])) for m in modes]])
    rows.append(["answers correct", *[f"{int(med[m]['passed'])}/{int(med[m]['tasks'])}" for m in modes]])
    lines = [
        f"## {title[0].upper()}{title[1:]}",
        "",
        md_table(
            ["task", "prompt", "operations (search query)", "writes"],
            [[f"{t.api}: {t.id}", t.prompt, _searched(t), "yes" if t.write else ""] for t in ran],
            "llll",
        ),
        "",
        "### Medians",
        "",
        md_table(["", *modes], rows),
        "",
    ]
    for heading, what in (
        ("Tokens per task (read + written; the tool list is read once per task)", "tokens"),
        ("Round trips per task", "round trips"),
        ("Search misses per task (a miss: the answer lacked the operation; asked again at a larger limit)", "misses"),
    ):
        table = [[f"{t.api}: {t.id}", *_best([_cell(by.get((t.id, m)), what) for m in modes])] for t in ran]
        lines += [f"### {heading}", "", md_table(["task", *modes], table), ""]
    return lines


def _every_run(outcomes: Sequence[Outcome]) -> list[str]:
    rows = [
        [
            f"{o.api}: {o.task}",
            o.mode,
            "yes" if o.ok else f"**no**: {o.error[:160]}",
            f"{o.list_tokens:,}",
            f"{o.read - o.list_tokens:,}",
            f"{o.written:,}",
            o.round_trips,
            o.calls,
            o.misses,
        ]
        for o in outcomes
    ]
    headers = ["task", "mode", "correct", "tool list", "results", "written", "round trips", "calls", "misses"]
    return ["## Every run", "", md_table(headers, rows, "llllrrrrr"), ""]


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


def _verdict(ok: bool) -> str:
    return "met" if ok else "**MISSED**"


def targets(outcomes: Sequence[Outcome], overhead: dict[str, list[float]]) -> list[str]:
    out = []
    failed = [f"{o.api}: {o.task} ({o.mode})" for o in outcomes if not o.ok]
    which = f" ({', '.join(failed)})" if failed else ""
    out.append(f"every answer correct in every mode: {_verdict(not failed)}{which}")
    for title, tasks in SUITES.values():
        ids = {t.id for t in tasks}
        mine = [o for o in outcomes if o.task in ids]
        if not mine:
            continue
        med = {m: run.summary(mine, m).get("total", math.nan) for m in (*MODES, FASTMCP)}
        code, disco, fast = med["code"], med["discovery"], med[FASTMCP]
        out.append(
            f"{title}: code mode's median tokens <= {DISCOVERY_RATIO} x discovery's: {fmt(code, 0)} vs "
            f"{fmt(disco * DISCOVERY_RATIO, 0)} ({fmt(code / disco, 2)} x): {_verdict(code <= disco * DISCOVERY_RATIO)}"
        )
        out.append(
            f"{title}: code mode's median tokens <= FastMCP's code mode's: {fmt(code, 0)} vs {fmt(fast, 0)} "
            f"({fmt(code / fast, 2)} x): {_verdict(code <= fast)}"
            if not math.isnan(fast)
            else f"{title}: against FastMCP's code mode: not run"
        )
    every = [v for values in overhead.values() for v in values]
    ms = median(every)
    out.append(f"a program's own overhead on GitHub's stubs <= {OVERHEAD_TARGET_MS:.0f} ms (median): "
               f"{fmt(ms, 1)} ms: {_verdict(ms <= OVERHEAD_TARGET_MS)}")  # fmt: skip
    return out


def render(outcomes: Sequence[Outcome], overhead: dict[str, list[float]], note: str) -> tuple[str, list[str]]:
    lines = [machine_info(), "", f"FastMCP: {note}.", ""]
    for title, tasks in SUITES.values():
        if any(o.task in {t.id for t in tasks} for o in outcomes):
            lines += _suite_lines(title, tasks, outcomes)
    lines += _every_run(outcomes)
    if overhead:
        lines += _overhead_lines(outcomes, overhead)
    found = targets(outcomes, overhead)
    lines += ["## Targets", "", *[f"- {t}" for t in found]]
    return "\n".join(lines), found
