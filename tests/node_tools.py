"""The pinned npm packages the tests use (tests/node/package.json), installed on first use."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

NODE_DIR = Path(__file__).resolve().parent / "node"
NODE_MODULES = NODE_DIR / "node_modules"
NPM_INSTALL_TIMEOUT = 600


def ensure_node_modules() -> Path:
    """Return tests/node/node_modules, running `npm ci` once when it is missing or stale."""
    lock = NODE_DIR / "package-lock.json"
    marker = NODE_MODULES / ".package-lock.json"
    if not marker.exists() or marker.stat().st_mtime < lock.stat().st_mtime:
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("npm is needed for these tests (Node 20 and npm are part of the supported machine)")
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=NODE_DIR,
            check=True,
            timeout=NPM_INSTALL_TIMEOUT,
        )
    return NODE_MODULES


def oas_examples() -> list[Path]:
    root = ensure_node_modules() / "@readme" / "oas-examples"
    return sorted(p for p in root.glob("[23].*/json/**/*.json"))


def github_spec() -> Path:
    return ensure_node_modules() / "@octokit" / "openapi" / "generated" / "api.github.com.json"
