"""The two peers, set up on demand and measured with the same harness as mcp-bridge.

- **FastMCP 4.2.3** (PyPI) in its own virtualenv, ``bench/out/.venv-fastmcp`` (it may pin
  another ``mcp``; bench/out/ is ignored by git, and nothing is added to the project's
  dependencies). Served by :data:`FASTMCP_SERVER`: ``FastMCP.from_openapi(spec, client=...)``
  over stdio, its httpx client pointed at the loopback upstream.
- **openapi-mcp-generator 4.0.1** (npm, pinned in bench/node): ``openapi-mcp-generator --input
  SPEC --output DIR --force``, then ``npm install`` and ``npm run build`` in the generated project
  (its documented steps; the npm registry is reachable here), served with ``node
  build/index.js`` and ``API_BASE_URL``. On GitHub's spec ``tsc`` exits 2 (TS2590, "union type
  too complex") but still emits ``build/index.js``, which is what is served (as in peers.md).
  Built projects are cached under bench/out/omg/ by spec digest.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.common import BENCH_NODE_MODULES, OUT_DIR, ensure_bench_node_modules

FASTMCP_VERSION = "4.2.3"
FASTMCP_VENV = OUT_DIR / ".venv-fastmcp"
FASTMCP_PYTHON = FASTMCP_VENV / "bin" / "python"
OMG_VERSION = "4.0.1"
OMG_DIR = OUT_DIR / "omg"
OMG_CLI = BENCH_NODE_MODULES / "openapi-mcp-generator" / "bin" / "openapi-mcp-generator.js"
INSTALL_TIMEOUT = 900

FASTMCP_SERVER = """
import json, os, sys, warnings
warnings.simplefilter("ignore")
try:
    import httpx2 as httpx
except ImportError:
    import httpx
from fastmcp import FastMCP

spec = json.loads(open(sys.argv[1], encoding="utf-8").read())
headers = json.loads(os.environ.get("BENCH_HEADERS", "{}"))
client = httpx.AsyncClient(base_url=os.environ["BENCH_BASE_URL"], headers=headers, trust_env=False)
server = FastMCP.from_openapi(openapi_spec=spec, client=client, name="bench")
server.run(transport="stdio", show_banner=False)
"""


def fastmcp_python(install: bool = True) -> Path | None:
    """The FastMCP venv's python, created (``pip install fastmcp==4.2.3``) on first use."""
    marker = FASTMCP_VENV / f".fastmcp-{FASTMCP_VERSION}"
    if marker.exists():
        return FASTMCP_PYTHON
    if not install:
        return None
    if not FASTMCP_PYTHON.exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(FASTMCP_VENV)], check=True, timeout=300)
    pip = [str(FASTMCP_PYTHON), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, f"fastmcp=={FASTMCP_VERSION}"], check=True, timeout=INSTALL_TIMEOUT)
    marker.write_text("ok\n", encoding="utf-8")
    return FASTMCP_PYTHON


def fastmcp_versions(python: Path) -> str:
    code = "import importlib.metadata as m; print(m.version('fastmcp'), m.version('mcp'))"
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=False, timeout=60)
    fastmcp, _, mcp = out.stdout.strip().partition(" ")
    return f"fastmcp {fastmcp}, mcp {mcp}" if out.returncode == 0 else "unknown"


def fastmcp_server_script() -> Path:
    path = OUT_DIR / "fastmcp_server.py"
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    path.write_text(FASTMCP_SERVER.lstrip(), encoding="utf-8")
    return path


def spec_as_json(spec: Path) -> Path:
    """A JSON copy of a YAML spec (FastMCP and the generator get the same document)."""
    if spec.suffix == ".json":
        return spec
    import yaml

    out = OUT_DIR / "specs" / (spec.stem + ".json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(yaml.safe_load(spec.read_text(encoding="utf-8"))), encoding="utf-8")
    return out


def omg_generate_cmd(spec: Path, out: Path) -> list[str]:
    return ["node", str(OMG_CLI), "--input", str(spec), "--output", str(out), "--force"]


def omg_project(spec: Path, install: bool = True) -> tuple[Path | None, str]:
    """A built openapi-mcp-generator project for ``spec`` (cached), and a note on how the build went."""
    ensure_bench_node_modules()
    digest = hashlib.sha256(spec.read_bytes()).hexdigest()[:12]
    project = OMG_DIR / f"{spec.stem}-{digest}"
    entry = project / "build" / "index.js"
    note_file = project / ".bench-note"
    if entry.exists() and note_file.exists():
        return project, note_file.read_text(encoding="utf-8").strip()
    if not install:
        return None, "not built (run without --quick once)"
    if project.exists():
        shutil.rmtree(project)
    subprocess.run(omg_generate_cmd(spec, project), check=True, capture_output=True, timeout=300)
    npm = shutil.which("npm") or "npm"
    env = {**os.environ, "npm_config_audit": "false", "npm_config_fund": "false"}
    subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=project,
        check=True,
        capture_output=True,
        timeout=INSTALL_TIMEOUT,
        env=env,
    )
    build = subprocess.run(
        [npm, "run", "build"], cwd=project, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, env=env
    )
    if not entry.exists():
        return None, f"build failed (exit {build.returncode}): {_first_error(build.stdout + build.stderr)}"
    note = (
        "built"
        if build.returncode == 0
        else f"tsc exit {build.returncode} ({_first_error(build.stdout)}); build/index.js emitted anyway"
    )
    note_file.write_text(note + "\n", encoding="utf-8")
    return project, note


def _first_error(text: str) -> str:
    for line in text.splitlines():
        if "error TS" in line or "Error" in line:
            return " ".join(line.split())[:160]
    return " ".join(text.split())[-160:]


def omg_env(project: Path) -> dict[str, Any]:
    """Environment variable names the generated project reads (from its .env.example)."""
    names = {}
    example = project / ".env.example"
    if example.exists():
        for line in example.read_text(encoding="utf-8").splitlines():
            if "=" in line and not line.lstrip().startswith("#"):
                key, _, value = line.partition("=")
                names[key.strip()] = value.strip()
    return names
