"""Confirmed writes (``serve --confirm``) with the official client's elicitation callback, in both eras.

``mode="legacy"`` (2025-11-25) is asked with ``elicitation/create``; the default mode (2026-07-28)
with an ``input_required`` round the client's driver answers and retries. Either way the jobs API
on loopback records what was sent: a declined, cancelled or unanswered confirmation sends nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types
import pytest

from bridge.confirm.form import MAX_MESSAGE
from bridge.confirm.policy import ConfirmLevel, ConfirmSettings
from bridge.contract.catalogue import Catalogue
from bridge.serving.assemble import ServeOptions
from tests.bridge.calls.longrunning.harness import jobs_client
from tests.bridge.calls.longrunning.jobs_upstream import API_KEY, JobStore, serve_jobs

pytestmark = pytest.mark.anyio
MODES = ["auto", "legacy"]


@pytest.fixture
async def store(anyio_backend: str) -> Any:
    async with serve_jobs() as running:
        yield running


def confirming(level: ConfirmLevel = "writes", **more: Any) -> ServeOptions:
    return ServeOptions(confirm=ConfirmSettings(level=level, **more))


class User:
    """The elicitation callback: answers as told and keeps every form it was shown."""

    def __init__(self, action: str = "accept", content: dict[str, Any] | None = None) -> None:
        self.action = action
        self.content = {"confirm": True} if content is None and action == "accept" else content
        self.forms: list[mcp_types.ElicitRequestParams] = []

    async def __call__(self, ctx: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        self.forms.append(params)
        return mcp_types.ElicitResult(action=self.action, content=self.content)  # type: ignore[arg-type]


def text(result: mcp_types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))


@pytest.mark.parametrize("mode", MODES)
async def test_an_accepted_write_is_sent_after_one_form(store: JobStore, mode: str) -> None:
    user = User("accept")
    async with jobs_client(store, mode=mode, options=confirming(), elicitation_callback=user) as client:
        result = await client.call_tool("startJob", {"kind": "inline", "steps": 1})
    assert not result.is_error, text(result)
    assert len(user.forms) == 1
    form = user.forms[0]
    assert isinstance(form, mcp_types.ElicitRequestFormParams)
    assert form.requested_schema["properties"]["confirm"]["type"] == "boolean"
    assert form.message.startswith("The assistant wants to send POST /v1/jobs\nto the Jobs API (Start a job).")
    assert '- kind: "inline"' in form.message
    assert [m for m, _, _ in store.requests][:1] == ["POST"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("action", "content", "said"),
    [
        ("decline", None, "declined"),
        ("cancel", None, "cancelled"),
        ("accept", {"confirm": False}, "did not confirm"),
        ("accept", {}, "did not confirm"),
        ("accept", {"confirm": "yes"}, "did not confirm"),  # only the boolean true is a yes
    ],
)
async def test_a_write_not_confirmed_is_a_tool_error_and_nothing_is_sent(
    store: JobStore, mode: str, action: str, content: dict[str, Any] | None, said: str
) -> None:
    user = User(action, content)
    async with jobs_client(store, mode=mode, options=confirming(), elicitation_callback=user) as client:
        result = await client.call_tool("cancelJob", {"jobId": "job-1"})
    assert result.is_error
    assert f"The user {said} DELETE /jobs/{{jobId}}; nothing was sent" in text(result)
    assert store.requests == []


@pytest.mark.parametrize("mode", MODES)
async def test_reads_are_never_asked_and_destructive_asks_only_for_destructive_calls(
    store: JobStore, mode: str
) -> None:
    user = User("decline")
    async with jobs_client(store, mode=mode, options=confirming("destructive"), elicitation_callback=user) as client:
        listed = await client.call_tool("listJobs", {})
        started = await client.call_tool("startJob", {"kind": "inline", "steps": 1})  # POST: not destructive
        cancelled = await client.call_tool("cancelJob", {"jobId": "job-1"})
    assert not listed.is_error and not started.is_error
    assert cancelled.is_error and len(user.forms) == 1
    assert "It may delete or overwrite data" in user.forms[0].message
    assert ("DELETE", "/v1/jobs/job-1") not in [(m, p) for m, p, _ in store.requests]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("fallback", "sent"), [("refuse", False), ("proceed", True)])
async def test_a_client_without_elicitation_gets_the_documented_fallback(
    store: JobStore, mode: str, fallback: str, sent: bool
) -> None:
    async with jobs_client(store, mode=mode, options=confirming(fallback=fallback)) as client:
        result = await client.call_tool("startJob", {"kind": "inline", "steps": 1})
    assert result.is_error is not sent
    if not sent:
        assert "cannot ask the user" in text(result) and "Nothing was sent" in text(result)
    assert bool(store.requests) is sent


@pytest.mark.parametrize("mode", MODES)
async def test_answers_are_never_taken_as_arguments(store: JobStore, mode: str) -> None:
    user = User("accept", {"confirm": True, "kind": "evil", "steps": 999, "jobId": "job-7"})
    async with jobs_client(store, mode=mode, options=confirming(), elicitation_callback=user) as client:
        result = await client.call_tool("startJob", {"kind": "inline", "steps": 1})
    assert not result.is_error
    assert [job.kind for job in store.jobs.values()] == ["inline"]
    assert json.loads(text(result))["kind"] == "inline"


def bound_catalogue(tmp_path: Path) -> Catalogue:
    """The jobs API with the cancel operation's path parameter bound to a secret variable."""
    from generator.generate import build_catalogue
    from generator.options import GenerateOptions
    from tests.bridge.calls.longrunning.harness import SPEC

    catalogue, _ = build_catalogue(
        str(SPEC), GenerateOptions(name="jobs", overrides={"cancelJob": {"bind": {"jobId": "env:JOBS_SECRET_JOB"}}})
    )
    return catalogue


async def test_the_form_never_shows_credentials_or_bound_values_and_is_bounded(
    store: JobStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.bridge.calls.longrunning import harness

    monkeypatch.setattr(harness, "ENV", {**harness.ENV, "JOBS_SECRET_JOB": "job-SECRET-77"})
    user = User("decline")
    catalogue = bound_catalogue(tmp_path)
    long_kind = "k" * 5000 + API_KEY  # the model puts the key (it never sees it) in a huge argument
    options = confirming()
    async with jobs_client(store, options=options, catalogue=catalogue, elicitation_callback=user) as client:
        await client.call_tool("cancelJob", {})
        await client.call_tool("startJob", {"kind": long_kind, "steps": 1})
    cancel_form, start_form = (form.message for form in user.forms)
    assert "job-SECRET-77" not in cancel_form and "send DELETE /v1/jobs/{bound}\n" in cancel_form
    assert "No arguments." in cancel_form
    assert API_KEY not in start_form and len(start_form) <= MAX_MESSAGE
    assert '- kind: "kkkk' in start_form and "..." in start_form
    assert store.requests == []


async def test_input_round_states_are_one_shot_and_bound_to_their_arguments(store: JobStore) -> None:
    async with jobs_client(store, options=confirming(), elicitation_callback=User("accept")) as client:
        session = client.session
        first = await session.call_tool("startJob", {"kind": "inline", "steps": 1}, allow_input_required=True)
        assert isinstance(first, mcp_types.InputRequiredResult) and first.request_state
        yes = {"confirm": mcp_types.ElicitResult(action="accept", content={"confirm": True})}
        other = await session.call_tool(
            "startJob", {"kind": "other", "steps": 1}, input_responses=yes, request_state=first.request_state
        )
        assert store.requests == []  # the state was for other arguments: refused, and now spent
        second = await session.call_tool("startJob", {"kind": "inline", "steps": 1}, allow_input_required=True)
        assert isinstance(second, mcp_types.InputRequiredResult)
        ok = await session.call_tool(
            "startJob", {"kind": "inline", "steps": 1}, input_responses=yes, request_state=second.request_state
        )
        replayed = await session.call_tool(
            "startJob", {"kind": "inline", "steps": 1}, input_responses=yes, request_state=second.request_state
        )
        forged = await session.call_tool(
            "startJob", {"kind": "inline", "steps": 1}, input_responses=yes, request_state="made-up"
        )
    assert other.is_error and "not valid" in text(other)
    assert not ok.is_error
    assert replayed.is_error and forged.is_error
    assert [job.kind for job in store.jobs.values()] == ["inline"]  # exactly one write went out


@pytest.mark.parametrize(("action", "sent"), [("accept", True), ("decline", False)])
async def test_each_write_in_a_program_is_confirmed_and_a_refusal_is_an_api_error(
    store: JobStore, action: str, sent: bool
) -> None:
    program = (
        "try:\n"
        '    job = await startJob(kind="inline", steps=1)\n'
        '    outcome = job["status"]\n'
        "except ApiError as error:\n"
        "    outcome = str(error)\n"
        "outcome"
    )
    user = User(action)
    options = ServeOptions(mode="code", confirm=ConfirmSettings(level="writes"))
    async with jobs_client(store, mode="legacy", options=options, elicitation_callback=user) as client:
        result = await client.call_tool("run_code", {"code": program})
    assert not result.is_error, text(result)
    outcome = json.loads(text(result))["result"]
    assert len(user.forms) == 1
    if sent:
        assert outcome == "succeeded"
    else:
        assert "declined POST /jobs; nothing was sent" in outcome
        assert store.requests == []


@pytest.mark.parametrize("fallback", ["refuse", "proceed"])
async def test_a_program_on_a_2026_connection_is_refused_its_confirmed_calls(store: JobStore, fallback: str) -> None:
    # The client can be asked, but a program cannot stop for a round: --confirm-fallback proceed does not apply.
    program = "try:\n    await cancelJob(jobId='job-1')\n    r = 'sent'\nexcept ApiError as e:\n    r = str(e)\nr"
    options = ServeOptions(mode="code", confirm=ConfirmSettings(level="writes", fallback=fallback))  # type: ignore[arg-type]
    async with jobs_client(store, options=options, elicitation_callback=User("accept")) as client:
        result = await client.call_tool("run_code", {"code": program})
    assert "a program cannot stop to ask on this connection" in json.loads(text(result))["result"]
    assert store.requests == []
