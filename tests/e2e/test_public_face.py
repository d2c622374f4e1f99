"""A package generated before the layout moved (issue 21) serves unchanged, with a user's hooks.py.

The package is the golden record's petstore: its ``server.py`` (``bridge.cli.serve_package_main``)
as generated, and a ``hooks.py`` written the way a user writes one, against the paths generated
hooks import (``bridge.http_tools``, ``bridge.tools``) and the documented content helpers
(``bridge.content``). It runs as users run it, ``python server.py`` over stdio, driven by the
official client.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from bridge.cli.demo_upstream import DEMO_API_KEY
from tests.e2e.conftest import PACKAGE, Upstream, text_log

pytestmark = pytest.mark.anyio

CALL_TIMEOUT = 30.0

# Written against the layout before issue 21: only public paths, which must keep working.
USER_HOOKS = '''"""My changes to this server."""

from __future__ import annotations

from bridge.content import text
from bridge.http_tools import HttpRuntime
from bridge.tools import Tool, ToolRegistry


def register(registry: ToolRegistry, runtime: HttpRuntime) -> None:
    @registry.tool("whereTo", description="Where this server sends its calls.")
    async def where_to(args, ctx):
        return text(f"calls go to {runtime.base_url.host}")

    async def shout(args, ctx):
        return {"said": args["word"].upper()}

    registry.add(
        Tool(
            name="shout",
            run=shout,
            description="Say a word loudly.",
            input_schema={"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]},
            output_schema={"type": "object", "properties": {"said": {"type": "string"}}, "required": ["said"]},
        )
    )
'''


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def test_a_package_generated_before_the_layout_moved_serves_with_its_users_hooks(
    upstream: Upstream, tmp_path: Path
) -> None:
    package = tmp_path / "petstore"
    shutil.copytree(PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    assert (package / "server.py").read_bytes() == (PACKAGE / "server.py").read_bytes()
    assert "from bridge.http_tools import HttpRuntime" in (package / "hooks.py").read_text(encoding="utf-8")
    (package / "hooks.py").write_text(USER_HOOKS, encoding="utf-8")
    params = StdioServerParameters(
        command=sys.executable, args=[str(package / "server.py")], env=upstream.bridge_env(), cwd=str(tmp_path)
    )
    with text_log(tmp_path / "server.stderr") as errlog:
        with anyio.fail_after(CALL_TIMEOUT):
            async with Client(stdio_client(params, errlog=errlog)) as client:
                listed = {tool.name for tool in (await client.list_tools()).tools}
                where = await client.call_tool("whereTo", {})
                shout = await client.call_tool("shout", {"word": "hello"})
                pets = await client.call_tool("listPets", {})
        errlog.seek(0)
        stderr = errlog.read()
    assert {"whereTo", "shout", "listPets", "getPet"} <= listed
    assert not where.is_error and text_of(where) == "calls go to 127.0.0.1"
    assert not shout.is_error and shout.structured_content == {"said": "HELLO"}
    assert not pets.is_error and pets.structured_content is not None
    assert upstream.store.requests == [("GET", "/v1/pets")]
    assert DEMO_API_KEY not in stderr
