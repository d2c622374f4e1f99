"""``@modelcontextprotocol/inspector-cli`` (pinned) against the stdio bridge.

Its CLI: ``index.js <command> [args...] --method tools/list`` or ``--method tools/call
--tool-name NAME --tool-arg key=value...``; it prints the JSON result on stdout. The target must
come before the options (``--tool-arg`` takes every following word).

Quirk of 1.0.3: it reads its own package.json through ``fs.existsSync("../package.json")``
relative to the *current directory*, so it is run from a directory whose parent holds a
package.json.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from bridge.cli.demo_upstream import DEMO_API_KEY
from tests.e2e.conftest import Upstream, bridge_command, subprocess_env
from tests.node_tools import ensure_node_modules

pytestmark = [pytest.mark.anyio, pytest.mark.node]

NODE_TIMEOUT = 45.0


@pytest.fixture
def inspector(tmp_path: Path) -> tuple[Path, Path]:
    """The inspector CLI entry point and a working directory that satisfies its package.json lookup."""
    entry = ensure_node_modules() / "@modelcontextprotocol" / "inspector-cli" / "build" / "index.js"
    (tmp_path / "package.json").write_text("{}\n", encoding="utf-8")
    workdir = tmp_path / "run"
    workdir.mkdir()
    return entry, workdir


async def run_inspector(inspector: tuple[Path, Path], *args: str, env: dict[str, str]) -> Any:
    entry, workdir = inspector
    node = shutil.which("node")
    assert node is not None, "Node.js is needed for this test"
    with anyio.fail_after(NODE_TIMEOUT):
        done = await anyio.run_process([node, str(entry), *args], cwd=workdir, env=subprocess_env(env), check=False)
    stderr = done.stderr.decode(errors="replace")
    assert done.returncode == 0, stderr
    assert DEMO_API_KEY not in stderr
    return json.loads(done.stdout)


async def test_inspector_cli_usage_has_the_options_these_tests_use(inspector: tuple[Path, Path]) -> None:
    entry, workdir = inspector
    node = shutil.which("node")
    assert node is not None
    with anyio.fail_after(NODE_TIMEOUT):
        done = await anyio.run_process([node, str(entry), "--help"], cwd=workdir, check=False)
    usage = done.stdout.decode()
    for option in ("--method <method>", "--tool-name <toolName>", "--tool-arg <pairs...>", "<target...>"):
        assert option in usage


async def test_inspector_cli_lists_the_bridge_tools(upstream: Upstream, inspector: tuple[Path, Path]) -> None:
    listed = await run_inspector(inspector, *bridge_command(), "--method", "tools/list", env=upstream.bridge_env())
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert len(tools) == 6
    assert tools["deletePet"]["annotations"]["destructiveHint"] is True
    assert tools["getPet"]["_meta"]["mcp-bridge/operation"] == "GET /pets/{petId}"
    assert "outputSchema" in tools["getPet"]


async def test_inspector_cli_calls_a_bridge_tool(upstream: Upstream, inspector: tuple[Path, Path]) -> None:
    result = await run_inspector(
        inspector,
        *bridge_command(),
        "--method",
        "tools/call",
        "--tool-name",
        "listPets",
        "--tool-arg",
        "status=pending",
        "limit=5",
        env=upstream.bridge_env(),
    )
    assert result.get("isError", False) is False
    assert result["structuredContent"] == {"result": [upstream.store.pets[2]]}
    assert upstream.store.requests == [("GET", "/v1/pets")]
