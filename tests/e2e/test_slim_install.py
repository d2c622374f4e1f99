"""The slim install: mcp-bridge without its generator's libraries, plus a package's requirements.txt,
serves that package over stdio (issue "Foundation", item 5: <= 40 packages, <= 80 MB).

A fresh venv is made in a temporary folder; pip installs from the package registry (its cache
after ``make setup``), as ``make setup`` itself does. The venv's own pip and setuptools are not
counted: every venv has them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from bridge.contract.runtime_requirements import RUNTIME_REQUIREMENTS, requirements
from tests.e2e.conftest import PACKAGE, ROOT, Upstream

pytestmark = pytest.mark.anyio

MAX_PACKAGES = 40
MAX_MEGABYTES = 80
VENV_OWN = {"pip", "setuptools"}
GENERATOR_ONLY = {"openapi-spec-validator", "jinja2", "rich", "pyyaml", "tiktoken"}


def _run(*command: str | Path, timeout: float = 600) -> str:
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def _megabytes(folder: Path, skip: set[str]) -> float:
    total = 0
    for path in folder.iterdir():
        name = path.name.split("-")[0].lower()
        if name in skip or name in {"_distutils_hack", "pkg_resources", "distutils-precedence.pth"}:
            continue
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        total += sum(p.stat().st_size for p in files)
    return total / 1e6


@pytest.fixture(scope="module")
def slim_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("slim")
    source = folder / "source"  # a copy: building in the checkout would leave build/ and egg-info there
    for name in ("pyproject.toml", "README.md"):
        source.mkdir(exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    for name in ("bridge", "generator"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    venv = folder / "venv"
    _run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    _run(python, "-m", "pip", "install", "--quiet", "--no-deps", source)
    _run(python, "-m", "pip", "install", "--quiet", "-r", PACKAGE / "requirements.txt")
    return venv


def test_the_slim_install_is_small_and_leaves_out_the_generators_libraries(slim_venv: Path) -> None:
    listed = json.loads(_run(slim_venv / "bin" / "python", "-m", "pip", "list", "--format=json"))
    names = {item["name"].lower() for item in listed} - VENV_OWN
    size = _megabytes(_site_packages(slim_venv), VENV_OWN)
    print(f"slim install: {len(names)} packages, {size:.1f} MB")
    assert len(names) <= MAX_PACKAGES, sorted(names)
    assert size <= MAX_MEGABYTES
    assert names.isdisjoint(GENERATOR_ONLY), sorted(names & GENERATOR_ONLY)


async def test_the_slim_install_serves_a_generated_package_over_stdio(slim_venv: Path, upstream: Upstream) -> None:
    params = StdioServerParameters(
        command=str(slim_venv / "bin" / "mcp-bridge"),
        args=["serve", str(PACKAGE)],
        env=upstream.bridge_env(),
        cwd=str(ROOT.parent),  # not the checkout: nothing may be imported from the source tree
    )
    with anyio.fail_after(60):
        async with Client(stdio_client(params), mode="legacy") as client:
            listed = await client.list_tools()
            pet = await client.call_tool("getPet", {"petId": 1})
    assert len(listed.tools) == 6
    assert pet.is_error is False


def test_every_runtime_requirement_is_a_dependency_spelled_the_same() -> None:
    import tomllib

    declared = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"])
    assert set(RUNTIME_REQUIREMENTS) <= declared
    assert set(requirements("discovery")) <= declared
    assert set(requirements("tools", workflows=True)) <= declared
