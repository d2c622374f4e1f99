"""The pinned npm packages the tests use (tests/node/package.json), installed on first use."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

NODE_DIR = Path(__file__).resolve().parent / "node"
NODE_MODULES = NODE_DIR / "node_modules"
NPM_INSTALL_TIMEOUT = 600


def npm_ci(folder: Path) -> Path:
    """``folder/node_modules`` from its pinned lock file, running ``npm ci`` once when missing or stale."""
    modules = folder / "node_modules"
    marker = modules / ".package-lock.json"
    if modules.is_symlink():
        # A linked install (worktrees share one) belongs to its owner: `npm ci` through the link
        # empties the shared folder for everyone, and a fresh checkout's lock file is always
        # "newer" than an install made from the same lock.
        if not marker.exists():
            raise RuntimeError(f"{modules} links to a folder with no npm install; install it there")
        return modules
    if not marker.exists() or marker.stat().st_mtime < (folder / "package-lock.json").stat().st_mtime:
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("npm is needed here (Node 20 and npm are part of the supported machine)")
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=folder,
            check=True,
            timeout=NPM_INSTALL_TIMEOUT,
        )
    return modules


def ensure_node_modules() -> Path:
    """tests/node/node_modules (real specs, real clients and checkers), installed on first use."""
    return npm_ci(NODE_DIR)


def oas_examples() -> list[Path]:
    root = ensure_node_modules() / "@readme" / "oas-examples"
    return sorted(p for p in root.glob("[23].*/json/**/*.json"))


def github_spec() -> Path:
    return ensure_node_modules() / "@octokit" / "openapi" / "generated" / "api.github.com.json"
