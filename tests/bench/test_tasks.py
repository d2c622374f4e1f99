"""The task suite (bench/tasks) still runs: three of its tasks in every mode of the bridge, answers
and round trips checked, against the loopback upstream (not timed).

GitHub is served from a subset of its spec (the operations the tasks use) to keep this fast; the
bench itself serves all 1,223 operations.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from bench.tasks import github_tasks, github_world, petstore_tasks, petstore_world, run
from bench.tasks.serving import package
from bench.tasks.upstream import Upstream, serving, union_seconds

pytestmark = pytest.mark.node

# (tools, discovery, code) round trips of each task's ideal transcript
TRIPS = {"mark-tagged-sold": (2, 4, 2), "org-open-prs": (2, 4, 2), "recent-issues": (1, 3, 2)}


class LengthCounter:
    exact = False
    source = "test"

    def count(self, text: str) -> int:
        return len(text)


def _operation_ids() -> list[str]:
    return [tool.replace("_", "/", 1) for tool in github_tasks.OPERATIONS]


@pytest.fixture(scope="module")
def apis(tmp_path_factory: pytest.TempPathFactory) -> list[run.Api]:
    from tests.node_tools import github_spec

    root = tmp_path_factory.mktemp("tasks")
    pet = petstore_world.spec_path()
    return [
        run.Api("github", github_spec(), package(github_spec(), "github", include=_operation_ids(), root=root)),
        run.Api("petstore", pet, package(pet, "petstore", root=root), "/v2"),
    ]


def test_tasks_are_answered_correctly_in_every_mode_with_their_round_trips(apis: list[run.Api]) -> None:
    chosen = {
        "github": [t for t in github_tasks.TASKS if t.id in TRIPS],
        "petstore": [t for t in petstore_tasks.TASKS if t.id in TRIPS],
    }

    async def go() -> tuple[list[run.Outcome], dict[str, list[float]]]:
        outcomes: list[run.Outcome] = []
        overhead: dict[str, list[float]] = {}
        with anyio.fail_after(60):
            async with run.upstream(apis) as (up, url):
                for api in apis:
                    found, times = await run.run_api(api, chosen[api.label], up, url, LengthCounter(), overhead_runs=1)
                    outcomes += found
                    overhead.update(times)
        return outcomes, overhead

    outcomes, overhead = anyio.run(go)
    assert len(outcomes) == 4 * len(TRIPS)  # the three modes and code mode's full-stubs variant
    for outcome in outcomes:
        assert outcome.ok, (outcome.task, outcome.mode, outcome.error)
        mode = "code" if outcome.mode == run.FULL_STUBS else outcome.mode
        expected = TRIPS[outcome.task][run.MODES.index(mode)]
        assert outcome.round_trips == expected, (outcome.task, outcome.mode)
        assert outcome.read > outcome.list_tokens > 0 and outcome.written > 0
        if mode == "code":
            assert len(outcome.program_ms) == 1 and outcome.program_ms[0] > 0
    assert set(overhead) == set(TRIPS) and all(len(v) == 1 for v in overhead.values())


def test_a_wrong_answer_fails_the_task(apis: list[run.Api]) -> None:
    (task,) = [t for t in petstore_tasks.TASKS if t.id == "available-by-category"]
    wrong = type(task)(**{**{f: getattr(task, f) for f in task.__dataclass_fields__}, "expected": lambda up: {}})

    async def go() -> list[run.Outcome]:
        async with run.upstream(apis[1:]) as (up, url):
            outcomes, _ = await run.run_api(apis[1], [wrong], up, url, LengthCounter())
        return outcomes

    outcomes = anyio.run(go)
    assert [o.ok for o in outcomes] == [False] * 4
    assert all("!= expected {}" in o.error for o in outcomes)


def test_the_worlds_validate_against_the_specs_and_writes_change_them() -> None:
    from tests.node_tools import github_spec

    world = github_world.build(github_spec())  # raises when an object breaks its schema
    assert len(world.repos) == len(github_world.REPOS)
    app = Upstream(lambda: world, petstore_world.build)
    status, body = app.handle("POST", "/v2/pet/102", {}, b"status=sold", {})
    assert status == 200 and body["status"] == "sold" and app.petstore.pets[102]["status"] == "sold"
    status, labels = app.handle(
        "POST", "/repos/octo-org/hello-world/issues/4/labels", {}, json.dumps({"labels": ["triage"]}).encode(), {}
    )
    assert status == 200 and "triage" in [label["name"] for label in labels]
    status, issues = app.handle("GET", "/repos/octo-org/hello-world/issues", {"per_page": ["5"]}, b"", {})
    assert status == 200 and len(issues) == 5 and all(i["state"] == "open" for i in issues)


def test_the_upstream_answers_over_loopback_and_times_its_requests() -> None:
    import httpx

    app = Upstream(None, petstore_world.build)
    with serving(app) as url:
        assert url.startswith("http://127.0.0.1:")
        response = httpx.get(f"{url}/v2/pet/findByStatus", params={"status": "available"}, timeout=10)
    pets: list[dict[str, Any]] = response.json()
    assert response.status_code == 200 and pets and all(p["status"] == "available" for p in pets)
    ((start, end),) = app.intervals
    assert union_seconds(app.intervals, start - 1, end + 1) == pytest.approx(end - start)
    assert union_seconds([(0, 2), (1, 3), (5, 6)], 0, 10) == 4


def test_fastmcp_names_follow_its_slug_rule() -> None:
    assert run.fastmcp_slug("issues/list-for-repo") == "issueslist_for_repo"
    assert run.fastmcp_slug("findPetsByTags") == "findPetsByTags"
    assert Path(run.__file__).name == "run.py"


def test_the_asana_world_pages_selects_fields_and_refuses_a_large_unpaged_listing() -> None:
    from bench.tasks import asana_world

    app = Upstream(None, None, asana_world.build)
    backlog = app.asana.project("Backlog")["gid"]
    status, body = app.handle("GET", f"/asana/projects/{backlog}/tasks", {}, b"", {})
    assert status == 400 and "too large" in body["errors"][0]["message"]
    query = {"limit": ["100"], "opt_fields": ["assignee.name,completed"]}
    status, first = app.handle("GET", f"/asana/projects/{backlog}/tasks", query, b"", {})
    assert status == 200 and len(first["data"]) == 100 and first["next_page"]["offset"] == "o100"
    assert set(first["data"][0]) >= {"gid", "name", "completed", "assignee"}
    query["offset"] = ["o200"]
    status, last = app.handle("GET", f"/asana/projects/{backlog}/tasks", query, b"", {})
    assert status == 200 and len(last["data"]) == 30 and last["next_page"] is None
    task = first["data"][0]["gid"]
    status, done = app.handle("PUT", f"/asana/tasks/{task}", {}, json.dumps({"data": {"completed": True}}).encode(), {})
    assert status == 200 and done["data"]["completed"] is True and app.asana.tasks[task]["completed"] is True


def test_asana_tasks_that_page_and_write_are_answered_in_every_mode(tmp_path_factory: pytest.TempPathFactory) -> None:
    from bench.tasks import asana_tasks, asana_world

    spec = asana_world.spec_path()
    used = sorted({s.tool for t in asana_tasks.TASKS for s in t.searches})
    api = run.Api("asana", spec, package(spec, "asana", include=used, root=tmp_path_factory.mktemp("asana")), "/asana")
    chosen = [t for t in asana_tasks.TASKS if t.id in ("backlog-open", "complete-overdue")]

    async def go() -> list[run.Outcome]:
        with anyio.fail_after(120):
            async with run.upstream([api]) as (up, url):
                outcomes, _ = await run.run_api(api, chosen, up, url, LengthCounter())
        return outcomes

    outcomes = anyio.run(go)
    assert len(outcomes) == 4 * len(chosen)
    for outcome in outcomes:
        assert outcome.ok, (outcome.task, outcome.mode, outcome.error)
        if outcome.mode == "tools":
            assert outcome.round_trips == 4  # workspace, project, then two pages or the tasks and the writes
        if outcome.mode in ("code", run.FULL_STUBS):
            assert outcome.round_trips == 2 + (outcome.misses > 0)
