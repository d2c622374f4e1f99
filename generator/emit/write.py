"""Writing a package without losing anything the tool did not write.

The target folder must be new, empty, or a package this tool wrote (its ``manifest.json`` says
``mcp-bridge``); anything else (a file, a project folder, ``-o .`` in a folder holding the spec)
is refused with a :class:`WriteError` before a byte is written. Files go to a temporary sibling
folder first; only when every file is written is the folder swapped in with renames, so a crash
never leaves a half-written package. Files in the old package that the manifest does not list as
generated (``hooks.py``, anything the user added) are carried over.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from generator.issues import Issue

MANIFEST_FILE = "manifest.json"
GENERATOR_MARK = "mcp-bridge"
# What packages written before the manifest listed its files contained.
LEGACY_GENERATED = frozenset(
    {
        "README.md",
        "__init__.py",
        "catalogue.json",
        MANIFEST_FILE,
        "server.py",
        "models/__init__.py",
        "models/inputs.py",
        "models/outputs.py",
    }
)


class WriteError(OSError):
    """The package cannot be written there; the message is one line for the user."""


class Target(Enum):
    ABSENT = "absent"
    EMPTY = "empty"
    PACKAGE = "package"


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
    issues: list[Issue] = field(default_factory=list)  # warnings found while rendering


def _manifest(folder: Path) -> dict[str, object] | None:
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def recorded_names(folder: Path) -> tuple[str | None, str | None]:
    """The package name and environment-variable prefix the manifest of the package in ``folder``
    records (None for each it does not: no package there, or one written before it recorded them)."""
    manifest = _manifest(folder)
    if not _is_ours(manifest):
        return None, None
    assert manifest is not None
    name, prefix = manifest.get("name"), manifest.get("env_prefix")
    return (name if isinstance(name, str) and name else None), (prefix if isinstance(prefix, str) and prefix else None)


def _is_ours(manifest: dict[str, object] | None) -> bool:
    return manifest is not None and str(manifest.get("generator", "")).startswith(GENERATOR_MARK)


def _manifest_tools(manifest: dict[str, object] | None) -> dict[str, str] | None:
    tools = manifest.get("tools") if manifest is not None else None
    if not isinstance(tools, dict):
        return None
    return {str(name): str(op) for name, op in tools.items()}


def _generated_files(manifest: dict[str, object]) -> frozenset[str]:
    files = manifest.get("files")
    if isinstance(files, list) and all(isinstance(f, str) for f in files):
        return frozenset(files)
    return LEGACY_GENERATED


def check_target(out_dir: Path) -> Target:
    """What ``out_dir`` is; :class:`WriteError` when writing there could destroy someone's files."""
    try:
        if not os.path.lexists(out_dir):
            for parent in out_dir.parents:  # `-o notes.txt/pkg`: say which part is in the way
                if os.path.lexists(parent):
                    if not parent.is_dir():
                        raise WriteError(f"cannot create {out_dir}: {parent} is a file, not a folder")
                    break
            return Target.ABSENT
        if not out_dir.is_dir():
            raise WriteError(f"{out_dir} is a file; give a folder for the package")
        if not any(out_dir.iterdir()):
            return Target.EMPTY
    except PermissionError:
        raise WriteError(f"cannot write {out_dir}: permission denied") from None
    if _is_ours(_manifest(out_dir)):
        return Target.PACKAGE
    raise WriteError(
        f"{out_dir} is not empty and is not a package written by mcp-bridge (no {MANIFEST_FILE} of ours); "
        "give a new or empty folder"
    )


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


def other_api(old: dict[str, object], api: Mapping[str, object], tools: dict[str, str]) -> str | None:
    """Why the package ``old`` describes is of another API than ``api`` (title, servers) with ``tools``;
    None when it is the same API, perhaps changed.

    A manifest that records the API's title decides by the title; an older one, by the operations:
    a regenerated API keeps some of them, another API keeps none (paths like ``GET /users`` aside,
    which many APIs share, a rename of every operation at once is not a new version of the same API).
    """
    recorded = old.get("api")
    old_ops = set((_manifest_tools(old) or {}).values())
    new_ops = set(tools.values())
    kept = len(old_ops & new_ops)
    said = f"{kept} of its {len(old_ops)} operation(s) are in this spec"
    if isinstance(recorded, dict) and isinstance(title := recorded.get("title"), str):
        if title != api.get("title"):
            return f"it is the package of {title!r}, not {api.get('title')!r} ({said})"
        return None
    if old_ops and new_ops and kept * 2 < len(old_ops):
        return f"{said}"
    return None


def write_package(
    package: PackageFiles,
    out_dir: Path,
    *,
    new_manifest_tools: dict[str, str],
    api: Mapping[str, object] | None = None,
    replace: bool = False,
) -> PackageDiff:
    """Write ``package`` to ``out_dir`` atomically and report what changed since the old manifest.

    A package of another API there (:func:`other_api`) is refused unless ``replace``.
    """
    out_dir = out_dir.resolve()  # a symlinked package folder is replaced where it really is
    target = check_target(out_dir)
    old_manifest = _manifest(out_dir) if target is Target.PACKAGE else None
    if old_manifest is not None and api is not None and not replace:
        why = other_api(old_manifest, api, new_manifest_tools)
        if why is not None:
            raise WriteError(
                f"{out_dir} holds a package of another API: {why}; give another -o, or --replace to write over it"
            )
    diff = diff_manifests(_manifest_tools(old_manifest), new_manifest_tools)
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        staging = _fresh_dir(out_dir, "tmp")
    except OSError as exc:
        raise WriteError(f"cannot write {out_dir}: {exc.strerror or exc}") from None
    try:
        for rel, content in sorted(package.files.items()):
            _write_file(staging / rel, content)
        if old_manifest is not None:
            _carry_over(out_dir, staging, skip=_generated_files(old_manifest) | set(package.files))
        for rel, content in sorted(package.user_files.items()):
            if not os.path.lexists(staging / rel):
                _write_file(staging / rel, content)
        if target is Target.PACKAGE:
            _swap_in(staging, out_dir)
        else:
            _move_into(staging, out_dir, create=target is Target.ABSENT)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, OSError) and not isinstance(exc, WriteError):
            raise WriteError(f"cannot write {out_dir}: {exc.strerror or exc}") from exc
        raise
    return diff


def _fresh_dir(out_dir: Path, suffix: str) -> Path:
    # os.mkdir honours the umask (mkdtemp would make it 0700 and the package unreadable to others).
    while True:
        path = out_dir.parent / f".{out_dir.name}.{secrets.token_hex(4)}.{suffix}"
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path


def _write_file(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(content)
        fh.flush()
        os.fsync(fh.fileno())


def _carry_over(old: Path, staging: Path, *, skip: set[str] | frozenset[str]) -> None:
    """Hard-link (else copy) every file of ``old`` that the tool did not write into ``staging``."""
    for root, dirs, files in os.walk(old):
        base = Path(root)
        for name in dirs:
            if (base / name).is_symlink():
                files.append(name)  # a symlink is carried as a link, never followed
        dirs[:] = [d for d in dirs if not (base / d).is_symlink()]
        for name in dirs:
            rel = (base / name).relative_to(old)
            (staging / rel).mkdir(parents=True, exist_ok=True)
        for name in files:
            source = base / name
            rel = source.relative_to(old)
            if rel.as_posix() in skip:
                continue
            dest = staging / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            if source.is_symlink():
                os.symlink(os.readlink(source), dest)
                continue
            try:
                os.link(source, dest)
            except OSError:
                shutil.copy2(source, dest)


def _move_into(staging: Path, out_dir: Path, *, create: bool) -> None:
    if create:
        os.replace(staging, out_dir)  # one rename: the whole package appears at once
        return
    # An existing empty folder keeps its identity (it may be the shell's current folder).
    moved: list[Path] = []
    try:
        for entry in sorted(staging.iterdir()):
            os.replace(entry, out_dir / entry.name)
            moved.append(out_dir / entry.name)
    except BaseException:
        for path in moved:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        raise
    staging.rmdir()


def _swap_in(staging: Path, out_dir: Path) -> None:
    # Two renames on the same filesystem: at every instant either the old or the new complete
    # package sits at out_dir (or, for one rename's time, the old one under its backup name).
    backup = _fresh_dir(out_dir, "old")
    backup.rmdir()
    os.replace(out_dir, backup)
    try:
        os.replace(staging, out_dir)
    except BaseException:
        os.replace(backup, out_dir)
        raise
    shutil.rmtree(backup, ignore_errors=True)
