"""Run the suite: every task in every mode, against the loopback upstream, through the official
MCP Python client; then the code-mode programs again for their own overhead.

One upstream serves every API (GitHub at its root, the petstore under ``/v2``, Asana under ``/asana``); its worlds are
rebuilt before every transcript, so a write of one run is not seen by the next. Each (task, mode)
is a fresh conversation: the tool list is read once per task.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import re
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import OUT_DIR, median
from bench.tasks import asana_world, github_world, petstore_world, serving
from bench.tasks.session import Session
from bench.tasks.task import Task, TranscriptError, run_code, run_discovery, run_fastmcp, run_tools
from bench.tasks.upstream import Upstream
from bench.tasks.upstream import serving as serving_upstream

MODES = ("tools", "discovery", "code")
FULL_STUBS = "code, full stubs"
FASTMCP = "FastMCP code mode"
OVERHEAD_WARMUP = 1
OVERHEAD_RUNS = 5


@dataclass(frozen=True, slots=True)
class Api:
    label: str
    spec: Path
    package: Path
    prefix: str = ""  # the base path of the spec's server


@dataclass
class Outcome:
    task: str
    api: str
    mode: str
    ok: bool = False
    error: str = ""
    read: int = 0
    list_tokens: int = 0
    written: int = 0
    round_trips: int = 0
    calls: int = 0
    misses: int = 0
    program_ms: list[float] = field(default_factory=list)
    program_ms_server: list[float] = field(default_factory=list)
    seconds: float = 0.0


def frozen(make: Callable[[], Any]) -> Callable[[], Any]:
    """A factory handing out fresh deep copies of one built world (built once)."""
    base = make()
    return lambda: copy.deepcopy(base)


def fastmcp_slug(text: str) -> str:
    """FastMCP 4.2.3's tool name for an operationId (``_slugify`` of its OpenAPI provider)."""
    slug = re.sub(r"[\s\-\.]+", "_", text.split("__")[0])
    slug = re.sub(r"[^a-zA-Z0-9_]", "", slug)
    return re.sub(r"_+", "_", slug).strip("_")[:56]


def fastmcp_names(api: Api, tools: Sequence[str]) -> dict[str, str]:
    """The bridge's tool name -> FastMCP's, through the operation's operationId in the spec."""
    catalogue = json.loads((api.package / "catalogue.json").read_text(encoding="utf-8"))
    spec = github_world.load_spec(str(api.spec))
    names = {}
    for entry in catalogue["tools"]:
        if entry["name"] in tools:
            binding = entry["binding"]
            operation = spec["paths"][binding["path"]][binding["method"].lower()]
            names[entry["name"]] = fastmcp_slug(operation["operationId"])
    return names


async def _attempt(
    task: Task, mode: str, session: Session, up: Upstream, runner: Callable[[], Any], outcome: Outcome
) -> Outcome:
    up.reset()
    expected = task.expected(up)
    started = time.perf_counter()
    try:
        answer = await runner()
    except (TranscriptError, KeyError, TypeError, ValueError) as exc:
        outcome.error = f"{type(exc).__name__}: {str(exc)[:400]}"
    else:
        problems = [] if answer == expected else [f"answer {answer!r} != expected {expected!r}"]
        if task.verify is not None:
            problems += task.verify(up)
        outcome.ok = not problems
        outcome.error = "; ".join(problems)[:600]
    outcome.seconds = time.perf_counter() - started
    tally = session.tally
    outcome.read, outcome.list_tokens, outcome.written = tally.read, tally.list_tokens, tally.written
    outcome.round_trips, outcome.calls, outcome.program_ms = tally.round_trips, tally.calls, list(tally.program_ms)
    outcome.misses = tally.misses
    outcome.program_ms_server = list(tally.program_ms_server)
    return outcome


async def run_api(
    api: Api, tasks: Sequence[Task], up: Upstream, url: str, counter: Any, *, overhead_runs: int = 0
) -> tuple[list[Outcome], dict[str, list[float]]]:
    """Every task of ``api`` in the bridge's three modes; ``overhead_runs`` more runs of each program."""
    outcomes: list[Outcome] = []
    overhead: dict[str, list[float]] = {}
    runners = {"tools": run_tools, "discovery": run_discovery, "code": run_code}
    intervals: list[tuple[float, float]] = []
    for mode in MODES:
        async with serving.bridge_client(api.package, mode, url + api.prefix, intervals) as client:
            for task in tasks:
                session = Session(client, counter, up, intervals)
                outcome = Outcome(task.id, api.label, mode)
                attempt = functools.partial(runners[mode], task, session)
                outcomes.append(await _attempt(task, mode, session, up, attempt, outcome))
                if mode != "code":
                    continue
                if overhead_runs and outcome.ok:
                    overhead[task.id] = await _overhead(task, client, counter, up, intervals, overhead_runs)
                session = Session(client, counter, up, intervals)
                variant = Outcome(task.id, api.label, FULL_STUBS)
                attempt = functools.partial(run_code, task, session, detail=True)
                outcomes.append(await _attempt(task, FULL_STUBS, session, up, attempt, variant))
    return outcomes, overhead


async def _overhead(
    task: Task, client: Any, counter: Any, up: Upstream, intervals: list[tuple[float, float]], runs: int
) -> list[float]:
    tool = "run_code" if task.write else "run_query"
    times = []
    for i in range(OVERHEAD_WARMUP + runs):
        up.reset()
        session = Session(client, counter, up, intervals)
        await session.call(tool, {"code": task.program})
        if session.tally.errors:
            raise RuntimeError(f"{task.id}: {session.tally.errors[0]}")
        if i >= OVERHEAD_WARMUP:
            times += session.tally.program_ms
    return times


async def run_fastmcp_api(
    api: Api, tasks: Sequence[Task], up: Upstream, url: str, counter: Any, python: Path
) -> list[Outcome]:
    names = fastmcp_names(api, sorted({s.tool for t in tasks for s in t.searches}))
    outcomes = []
    stderr = OUT_DIR / f"tasks-fastmcp-{api.label}.stderr"
    async with serving.fastmcp_client(python, api.spec, url + api.prefix, stderr) as client:
        for task in tasks:
            session = Session(client, counter, up)
            outcome = Outcome(task.id, api.label, FASTMCP)
            attempt = functools.partial(run_fastmcp, task, session, names)
            outcomes.append(await _attempt(task, FASTMCP, session, up, attempt, outcome))
    return outcomes


@contextlib.asynccontextmanager
async def upstream(apis: Sequence[Api]) -> AsyncIterator[tuple[Upstream, str]]:
    labels = {a.label: a for a in apis}
    github = frozen(lambda: github_world.build(labels["github"].spec)) if "github" in labels else None
    petstore = frozen(lambda: petstore_world.build(labels["petstore"].spec)) if "petstore" in labels else None
    asana = frozen(asana_world.build) if "asana" in labels else None
    app = Upstream(github, petstore, asana)
    with serving_upstream(app) as url:
        yield app, url


def summary(outcomes: Sequence[Outcome], mode: str) -> dict[str, float]:
    mine = [o for o in outcomes if o.mode == mode]
    if not mine:
        return {}
    return {
        "read": median([o.read for o in mine]),
        "written": median([o.written for o in mine]),
        "total": median([o.read + o.written for o in mine]),
        "round_trips": median([o.round_trips for o in mine]),
        "max_round_trips": max((o.round_trips for o in mine), default=0),
        "passed": sum(o.ok for o in mine),
        "tasks": len(mine),
        "misses": sum(o.misses for o in mine),
    }
