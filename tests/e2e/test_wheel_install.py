"""The distribution a user installs: sdist and wheel built from the checkout, the wheel installed into a
fresh venv outside it, and the commands a new user runs first (``--version``, ``generate``, ``list``,
``call``, ``serve`` with the official client, ``demo``) working from there (issue "New users", item 1)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from bridge.cli.demo_upstream import DEMO_API_KEY, serve_pet_store
from bridge.contract.version import DISTRIBUTION, bridge_version
from tests.e2e.conftest import ROOT

pytestmark = pytest.mark.anyio

WAIT = 600.0
SOURCE_FILES = ("pyproject.toml", "README.md", "LICENSE")


def _run(*command: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=WAIT, cwd=cwd, env=env)
    assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-3000:])
    return done.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(sdist, wheel), built from a copy of the checkout (building in it would leave build/ behind)."""
    folder = tmp_path_factory.mktemp("dist")
    source = folder / "source"
    source.mkdir()
    for name in SOURCE_FILES:
        shutil.copy2(ROOT / name, source / name)
    for name in ("bridge", "generator"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    _run(sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", folder / "out", source)
    return next((folder / "out").glob("*.tar.gz")), next((folder / "out").glob("*.whl"))


@pytest.fixture(scope="module")
def installed(built: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv outside the checkout with the wheel installed; its ``bin`` folder."""
    venv = tmp_path_factory.mktemp("user") / "venv"
    _run(sys.executable, "-m", "venv", venv)
    _run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", built[1])
    return venv / "bin"


def _user_env(bin_dir: Path) -> dict[str, str]:
    """A user's shell: the venv first on PATH, none of the checkout's variables or paths."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "PETS_", "PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_the_sdist_and_wheel_carry_the_license_the_demo_spec_and_the_templates(built: tuple[Path, Path]) -> None:
    sdist, wheel = built
    stem = DISTRIBUTION.replace("-", "_")
    assert sdist.name.startswith(stem) and wheel.name.startswith(stem)
    with tarfile.open(sdist) as archive:
        sdist_names = {Path(name).name for name in archive.getnames()}
    assert "LICENSE" in sdist_names
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "bridge/cli/demo_petstore.yaml" in names
    assert any(name.endswith("LICENSE") for name in names)
    assert any(name.startswith("generator/emit/templates/") and name.endswith(".jinja") for name in names)


async def test_a_new_user_generates_lists_calls_and_serves_from_the_installed_wheel(
    installed: Path, tmp_path: Path
) -> None:
    env = _user_env(installed)
    work = tmp_path / "work"  # not the checkout: nothing of it is on the path
    work.mkdir()
    spec = work / "petstore.yaml"
    shutil.copy2(ROOT / "specs" / "petstore.yaml", spec)
    version = await anyio.to_thread.run_sync(lambda: _run("mcp-bridge", "--version", cwd=work, env=env))
    assert bridge_version() in version
    await anyio.to_thread.run_sync(lambda: _run("mcp-bridge", "generate", spec, "-o", work / "pets", cwd=work, env=env))
    requirements = (work / "pets" / "requirements.txt").read_text()
    assert DISTRIBUTION in requirements
    listed = await anyio.to_thread.run_sync(lambda: _run("mcp-bridge", "list", "pets", cwd=work, env=env))
    assert "getPet  [read-only]" in listed
    async with serve_pet_store() as (port, store):
        store.add("Rex", "dog")
        # `-o pets` names the package, and so its variables: PETS_*.
        upstream = {"PETS_BASE_URL": f"http://127.0.0.1:{port}/v1", "PETS_API_KEY": DEMO_API_KEY}
        call = ("mcp-bridge", "call", "pets", "getPet", "--args", '{"petId": 1}')
        called = await anyio.to_thread.run_sync(lambda: _run(*call, cwd=work, env={**env, **upstream}))
        assert json.loads(called)["structuredContent"]["name"] == "Rex"
        params = StdioServerParameters(
            command=str(installed / "mcp-bridge"), args=["serve", "pets"], env={**env, **upstream}, cwd=str(work)
        )
        with anyio.fail_after(WAIT):
            async with Client(params) as client:
                result = await client.call_tool("getPet", {"petId": 1})
    assert result.is_error is False
    assert result.structured_content == {"id": 1, "name": "Rex", "tag": "dog", "status": "available"}
    assert store.requests == [("GET", "/v1/pets/1"), ("GET", "/v1/pets/1")]


def test_the_demo_runs_from_the_installed_wheel_outside_a_checkout(installed: Path, tmp_path: Path) -> None:
    out = _run("mcp-bridge", "demo", cwd=tmp_path, env=_user_env(installed))
    assert "Serving over stdio: 6 tools listed" in out and "upstream saw the request closed" in out
    assert list(tmp_path.iterdir()) == []  # the package went to a temporary folder, and is gone


def test_the_shipped_demo_spec_is_the_projects_petstore() -> None:
    shipped = ROOT / "bridge" / "cli" / "demo_petstore.yaml"
    assert shipped.read_bytes() == (ROOT / "specs" / "petstore.yaml").read_bytes()
