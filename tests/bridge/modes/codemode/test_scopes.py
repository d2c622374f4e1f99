"""A program can call only what its caller may: scopes filter its stubs and its functions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from bridge.contract.catalogue import Catalogue
from bridge.contract.stubs import StubIndex
from bridge.modes.codemode import RUN_CODE, SEARCH
from tests.bridge.fake_upstream import FakeUpstream
from tests.bridge.modes.codemode.harness import code_client, text, value

pytestmark = pytest.mark.anyio

_OAUTH = {"type": "openIdConnect", "openIdConnectUrl": "https://auth.test/.well-known/openid-configuration"}
_OK = {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}
TOKEN_ENV = {"SCOPED_OAUTH_TOKEN": "operator-token"}
SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Scoped", "version": "1"},
    "servers": [{"url": "http://upstream.test"}],
    "components": {"securitySchemes": {"oauth": _OAUTH}},
    "paths": {
        "/notes": {
            "get": {"operationId": "listNotes", "security": [{"oauth": ["notes:read"]}], "responses": _OK},
            "delete": {"operationId": "deleteNotes", "security": [{"oauth": ["notes:admin"]}], "responses": _OK},
        }
    },
}


def catalogue(tmp_path: Path) -> Catalogue:
    from generator.generate import build_catalogue
    from generator.options import GenerateOptions

    path = tmp_path / "scoped.json"
    path.write_text(json.dumps(SPEC))
    built, _ = build_catalogue(str(path), GenerateOptions())
    return built


@pytest.fixture
def reader() -> Iterator[None]:
    token = AccessToken(token="t", client_id="c", scopes=["notes:read"], subject="alice")
    reset = auth_context_var.set(AuthenticatedUser(token))
    yield
    auth_context_var.reset(reset)


async def test_operations_beyond_the_callers_scopes_are_neither_stubs_nor_functions(
    tmp_path: Path, reader: None
) -> None:
    fake = FakeUpstream()
    fake.reply(json_body={"notes": ["a"]})
    served = code_client(
        None, catalogue=catalogue(tmp_path), fake=fake, base_url="http://upstream.test", environ=TOKEN_ENV
    )
    async with served as (client, _):
        found = (await client.call_tool(SEARCH, {"query": "notes"})).structured_content
        assert found is not None and [op["name"] for op in found["operations"]] == ["listNotes"]
        refused = await client.call_tool(RUN_CODE, {"code": "await deleteNotes()"})
        unknown = await client.call_tool(RUN_CODE, {"code": "await deleteNotez()"})
        described = await client.call_tool(SEARCH, {"query": "", "name": "deleteNotes"})
        # Beyond the caller's scopes is answered exactly as unknown: search's filter is not undone.
        assert refused.is_error and "notes:admin" not in text(refused)
        assert text(refused).replace("deleteNotes", "?") == text(unknown).replace("deleteNotez", "?")
        assert described.is_error and text(described).startswith('Unknown operation "deleteNotes".')
        assert "notes:admin" not in text(described) and text(described).count("deleteNotes") == 1
        allowed = await client.call_tool(RUN_CODE, {"code": "await listNotes()"})
    assert value(allowed) == {"notes": ["a"]}
    assert [r.method for r in fake.requests] == ["GET"]


class _EveryStub:
    """Stubs that (wrongly) declare every function: the run-time refusal is then what remains."""

    def __init__(self, index: StubIndex) -> None:
        self.index = index

    async def index_for(self, names: Any) -> StubIndex:
        return self

    def subset(self, names: Any) -> str:
        return self.index.subset(self.index.definitions)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.index, name)


async def test_run_query_refuses_a_write_again_at_run_time(tmp_path: Path) -> None:
    from bridge.calls.runtime import HttpRuntime
    from bridge.modes.codemode import CodeMode
    from bridge.modes.sandbox import ProgramError, Sandbox
    from bridge.serving.assemble import build_registry
    from bridge.tools.registry import ToolContext
    from generator.emit.stubs import render_stubs

    built = catalogue(tmp_path)
    fake = FakeUpstream()
    stubs = _EveryStub(StubIndex.parse(render_stubs(built.tools)))
    async with HttpRuntime.create(built, base_url="http://upstream.test", transport=fake.transport()) as runtime:
        sandbox = Sandbox()
        mode = CodeMode(built, build_registry(built, runtime, None), runtime, stubs, sandbox)  # type: ignore[arg-type]
        try:
            with pytest.raises(ProgramError) as refused:
                await mode.run("await deleteNotes()", ToolContext(tool_name="run_query"), read_only=True)
        finally:
            await sandbox.aclose()
    assert "NameError" in str(refused.value) and "deleteNotes" in str(refused.value)
    assert fake.requests == []


async def test_the_callers_identity_reaches_every_call_of_a_program(
    tmp_path: Path, reader: None, caplog: pytest.LogCaptureFixture
) -> None:
    import dataclasses
    import logging

    from bridge.calls.runtime import HttpRuntime
    from bridge.modes.codemode import CodeMode
    from bridge.modes.sandbox import Sandbox
    from bridge.modes.stubsource import stub_source
    from bridge.serving.assemble import build_registry
    from bridge.tools.registry import ToolContext

    built = catalogue(tmp_path)
    fake = FakeUpstream()
    fake.reply(json_body={"notes": ["a"]})
    plain = HttpRuntime.create(built, base_url="http://upstream.test", environ=TOKEN_ENV, transport=fake.transport())
    async with plain:
        runtime = dataclasses.replace(plain, identities=True)
        sandbox = Sandbox()
        mode = CodeMode(built, build_registry(built, runtime, None), runtime, stub_source(None, built.tools), sandbox)
        try:
            with caplog.at_level(logging.INFO, logger="bridge.audit"):
                await mode.run(
                    "await listNotes()\nawait listNotes()", ToolContext(tool_name="run_query"), read_only=True
                )
        finally:
            await sandbox.aclose()
    lines = [r.getMessage() for r in caplog.records if r.name == "bridge.audit"]
    assert len(lines) == 2 and all("subject=alice client=c tool=run_query" in line for line in lines)
