"""Writing a package so that a crash never leaves a half-written folder.

Files go to a temporary sibling folder first; only when every file is written is the folder
swapped in with renames. User files (``hooks.py``) found in the old package are carried over.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

USER_FILES = ("hooks.py",)
MANIFEST_FILE = "manifest.json"


@dataclass(frozen=True, slots=True)
class PackageDiff:
    """Tools added, removed or renamed since the manifest of the package being replaced."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()  # (old name, new name) for the same operation
    first_write: bool = True

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed or self.renamed)

    def lines(self) -> list[str]:
        out = [f"+ {name}" for name in self.added]
        out += [f"- {name}" for name in self.removed]
        out += [f"~ {old} -> {new}" for old, new in self.renamed]
        return out


@dataclass(slots=True)
class PackageFiles:
    """The rendered package: relative path -> content, plus user files written only when absent."""

    files: dict[str, bytes] = field(default_factory=dict)
    user_files: dict[str, bytes] = field(default_factory=dict)


def _manifest_tools(folder: Path) -> dict[str, str] | None:
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
        tools = manifest["tools"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(tools, dict):
        return None
    return {str(name): str(op) for name, op in tools.items()}


def diff_manifests(old: dict[str, str] | None, new: dict[str, str]) -> PackageDiff:
    """Compare tool -> operation maps; a tool whose operation now has another name is a rename."""
    if old is None:
        return PackageDiff(added=tuple(sorted(new)), first_write=True)
    old_by_op = {op: name for name, op in old.items()}
    new_by_op = {op: name for name, op in new.items()}
    renamed = tuple(
        sorted((old_by_op[op], name) for op, name in new_by_op.items() if op in old_by_op and old_by_op[op] != name)
    )
    renamed_old = {o for o, _ in renamed}
    renamed_new = {n for _, n in renamed}
    added = tuple(sorted(n for n in new if n not in old and n not in renamed_new))
    removed = tuple(sorted(n for n in old if n not in new and n not in renamed_old))
    return PackageDiff(added=added, removed=removed, renamed=renamed, first_write=False)


def write_package(package: PackageFiles, out_dir: Path, *, new_manifest_tools: dict[str, str]) -> PackageDiff:
    """Write ``package`` to ``out_dir`` atomically and report what changed since the old manifest."""
    out_dir = out_dir.resolve()
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    diff = diff_manifests(_manifest_tools(out_dir) if out_dir.exists() else None, new_manifest_tools)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".tmp", dir=out_dir.parent))
    try:
        for rel, content in sorted(package.files.items()):
            _write_file(staging / rel, content)
        for rel, content in sorted(package.user_files.items()):
            existing = out_dir / rel
            if existing.is_file():
                shutil.copy2(existing, staging / rel)
            else:
                _write_file(staging / rel, content)
        _swap_in(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return diff


def _write_file(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(content)
        fh.flush()
        os.fsync(fh.fileno())


def _swap_in(staging: Path, out_dir: Path) -> None:
    # Two renames on the same filesystem: at every instant either the old or the new complete
    # package sits at out_dir (or, for one rename's time, the old one under its backup name).
    if not out_dir.exists():
        os.replace(staging, out_dir)
        return
    backup = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".old", dir=out_dir.parent))
    backup.rmdir()
    os.replace(out_dir, backup)
    try:
        os.replace(staging, out_dir)
    except BaseException:
        os.replace(backup, out_dir)
        raise
    shutil.rmtree(backup, ignore_errors=True)
