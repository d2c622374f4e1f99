"""Every surface that sends passes the one confirmation decision (bridge/calls/gate.py), in both eras.

One table: per-operation tools, discovery's ``call_operation``, code mode's ``run_query`` and
``run_code``, a workflow, and ``resources/read``, each asked about a covered call through the
official MCP client (an ``elicitation/create`` on 2025-11-25, an input round on 2026-07-28). The
fake upstream says what was sent: the covered call only after a yes, with the form showing the
filled request first. A GET the config marks destructive (``takeReport``) is covered like a DELETE.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from bridge.calls.context import CallContext
from bridge.calls.operation import OperationCall
from bridge.confirm.policy import ConfirmationUnavailable, ConfirmSettings
from bridge.serving.assemble import ServeOptions, build_runtime
from tests.bridge.confirm.harness import (
    ENV,
    SPEC,
    UPSTREAM,
    User,
    accounts_catalogue,
    accounts_client,
    accounts_upstream,
    sent,
    text,
)
from tests.bridge.fake_upstream import FakeUpstream

pytestmark = pytest.mark.anyio

Call = Callable[[Client], Awaitable[tuple[bool, str]]]


async def _tool(client: Client, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    result = await client.call_tool(name, arguments)
    return bool(result.is_error), text(result)


async def _read(client: Client, uri: str) -> tuple[bool, str]:
    try:
        result = await client.read_resource(uri)
    except MCPError as exc:
        return True, exc.error.message
    return False, str(result.contents[0])


@dataclass(frozen=True)
class Surface:
    name: str
    mode: str
    call: Call
    covered: str  # the covered request, as the upstream receives it
    also: tuple[str, ...] = ()  # uncovered requests the surface sends before it
    program: bool = False  # code mode: cannot stop for a 2026-07-28 round


SURFACES = [
    Surface("tool", "tools", lambda c: _tool(c, "cancelOrder", {"id": "o1"}), "DELETE /v2/orders/o1"),
    Surface(
        "call_operation",
        "discovery",
        lambda c: _tool(c, "call_operation", {"name": "cancelOrder", "arguments": {"id": "o1"}}),
        "DELETE /v2/orders/o1",
    ),
    Surface(
        "run_query",
        "code",
        lambda c: _tool(c, "run_query", {"code": 'await takeReport(id="r1")'}),
        "GET /v2/reports/r1",
        program=True,
    ),
    Surface(
        "run_code",
        "code",
        lambda c: _tool(c, "run_code", {"code": 'await cancelOrder(id="o1")'}),
        "DELETE /v2/orders/o1",
        program=True,
    ),
    Surface(
        "workflow",
        "tools",
        lambda c: _tool(c, "orderAndCancel", {"item": "pen"}),
        "DELETE /v2/orders/ord-9",
        also=("POST /v2/orders",),
    ),
    Surface("resource", "tools", lambda c: _read(c, "accounts:///reports/r1"), "GET /v2/reports/r1"),
]


@pytest.mark.parametrize("era", ["legacy", "auto"])
@pytest.mark.parametrize("answer", ["accept", "decline"])
@pytest.mark.parametrize("surface", SURFACES, ids=[s.name for s in SURFACES])
async def test_every_surface_asks_before_a_covered_call_and_shows_the_filled_request(
    tmp_path: Path, surface: Surface, answer: str, era: str
) -> None:
    fake, user = accounts_upstream(), User(answer)
    async with accounts_client(tmp_path, fake, mode=surface.mode, era=era, user=user) as client:
        failed, said = await surface.call(client)
    if surface.program and era == "auto":
        # Documented choice: a program cannot be re-run for a round, so its covered calls are refused.
        assert user.forms == [] and "a program cannot stop to ask" in said
        assert sent(fake) == list(surface.also)
        return
    method, path = surface.covered.split(" ")
    assert len(user.forms) == 1 and user.forms[0].startswith(f"The assistant wants to send {method} {path}\n")
    if answer == "accept":
        assert not failed, said
        assert sent(fake) == [*surface.also, surface.covered]
    else:
        assert failed and "declined" in said
        assert sent(fake) == list(surface.also)


async def test_a_surface_that_brings_no_confirmer_is_refused_a_covered_call() -> None:
    # A surface added later that forgets to ask: the core refuses, it does not send unasked.
    fake = FakeUpstream(SPEC)
    catalogue = accounts_catalogue(None)

    options = ServeOptions(confirm=ConfirmSettings(level="destructive"), base_url=UPSTREAM)
    runtime = build_runtime(catalogue, options, environ=ENV, transport=fake.transport())
    async with runtime:
        entries = {e.name: e for e in catalogue.tools}
        with pytest.raises(ConfirmationUnavailable, match=r"cannot ask the user\. Nothing was sent"):
            await OperationCall(entries["takeReport"], runtime)({"id": "r1"}, CallContext(surface="new-surface"))
        answer = await OperationCall(entries["createOrder"], runtime)({"item": "x"}, CallContext(surface="s"))
    assert answer.status == 200  # not covered by --confirm destructive: sent
    assert sent(fake) == ["POST /v2/orders"]
