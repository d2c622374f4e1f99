"""A package's hooks.py adds, replaces and removes tools at start-up, with the same checks as generated tools."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from bridge.serving.assemble import ServeOptions, build_bridge_server, build_registry, build_runtime, load_target
from tests.golden import GENERATED_DIR, ROOT

HOOKS = """
from bridge.tools.registry import Tool


def register(registry, runtime):
    registry.remove("deletePet")

    @registry.tool("ping", description="Check that the server is up.")
    async def ping(args, ctx):
        return "pong"
"""


def _package(tmp_path: Path, hooks: str) -> Path:
    package = tmp_path / "petstore"
    shutil.copytree(GENERATED_DIR / "petstore", package)
    (package / "hooks.py").write_text(hooks, encoding="utf-8")
    return package


@pytest.mark.anyio
async def test_hooks_add_and_remove_tools(tmp_path: Path) -> None:
    catalogue, package_dir = load_target(str(_package(tmp_path, HOOKS)))
    runtime = build_runtime(catalogue, ServeOptions(), environ={})
    async with runtime:
        server = build_bridge_server(catalogue, build_registry(catalogue, runtime, package_dir))
        async with Client(server) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool("ping", {})
    assert "ping" in names and "deletePet" not in names and "getPet" in names
    assert result.content[0].text == "pong"  # type: ignore[union-attr]


def test_a_hook_registering_a_bad_name_stops_start_up_with_one_line(tmp_path: Path) -> None:
    package = _package(tmp_path, HOOKS.replace('"ping"', '"bad name!"'))
    done = subprocess.run(
        [sys.executable, "-m", "bridge", "serve", str(package)],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "bad name!" in lines[0]
