"""How code mode is chosen and configured: generate's default mode, serve's flags."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp import Client

from bridge.calls.runtime import HttpRuntime
from bridge.cli import cli
from bridge.modes.codemode import RUN_CODE, RUN_QUERY, SEARCH
from bridge.modes.sandbox import SandboxLimits
from bridge.serving.assemble import ServeOptions, build_bridge_server, build_registry
from bridge.serving.package import load_catalogue
from tests.bridge.modes.codemode.harness import ENV, UPSTREAM, petstore_package
from tests.golden import GENERATED_DIR

pytestmark = pytest.mark.anyio


async def test_a_package_generated_with_mode_code_serves_code_mode_by_default(tmp_path: Path) -> None:
    package = petstore_package(tmp_path, mode="code")
    catalogue = load_catalogue(package)
    assert catalogue.mode == "code"
    async with HttpRuntime.create(catalogue, base_url=UPSTREAM, environ=ENV) as runtime:
        server = build_bridge_server(
            catalogue, build_registry(catalogue, runtime, None), runtime=runtime, package_dir=package
        )
        async with Client(server) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
    assert names == {SEARCH, RUN_QUERY, RUN_CODE}


def test_serve_flags_set_the_program_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def fake_serve(target: str, options: ServeOptions) -> int:
        seen["options"] = options
        return 0

    monkeypatch.setattr("bridge.serving.assemble.serve_target", fake_serve)
    arguments = ["serve", str(GENERATED_DIR / "petstore"), "--mode", "code", "--program-timeout", "3"]
    arguments += ["--program-memory", "16", "--program-max-calls", "7"]
    result = CliRunner().invoke(cli, arguments)
    assert result.exit_code == 0, result.output
    options = seen["options"]
    assert options.mode == "code"
    assert options.sandbox == SandboxLimits(wall_seconds=3.0, memory_bytes=16 * 1024 * 1024, max_calls=7)


def test_generate_accepts_mode_code(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    result = CliRunner().invoke(cli, ["generate", "specs/petstore.yaml", "-o", str(out), "--mode", "code"])
    assert result.exit_code == 0, result.output
    assert load_catalogue(out).mode == "code"
    assert (out / "api.pyi").is_file()
