"""MCP clients' configuration files: where each lives, and one server entry merged in without loss.

A file that is not a JSON object is refused and left as it was (VS Code's files may hold comments,
which a JSON rewrite would drop). Before writing, the old file is copied aside with a timestamp,
so a second install never overwrites the first backup; the new text replaces the file in one
rename, with the old file's permissions (new files are private: the entry may hold keys).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bridge.contract.version import DISTRIBUTION


class ClientFileError(Exception):
    """The client's file cannot be read or merged into; the message is one line and names the file."""


def default_config_file(client: str) -> Path:
    """The usual file of ``client`` on this system (project files are relative to the current folder)."""
    home = Path.home()
    if client == "claude-desktop":
        if sys.platform == "darwin":
            return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
        if sys.platform == "win32":
            return Path(os.environ.get("APPDATA", home)) / "Claude" / "claude_desktop_config.json"
        return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "Claude" / "claude_desktop_config.json"
    if client == "cursor":
        return home / ".cursor" / "mcp.json"
    if client == "vscode":
        return Path.cwd() / ".vscode" / "mcp.json"
    return Path.cwd() / ".mcp.json"  # claude-code, project scope


def read_config(path: Path) -> dict[str, Any]:
    """The file's JSON object; ``{}`` when it does not exist or is empty."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ClientFileError(f"{path}: cannot read it ({exc}); left as it was") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ClientFileError(
            f"{path}: not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg}); "
            "left as it was, fix it or name another file with --config-file"
        ) from None
    if not isinstance(data, dict):
        raise ClientFileError(f"{path}: a JSON object was expected, found {type(data).__name__}; left as it was")
    return data


def merge_entry(path: Path, servers_key: str, name: str, entry: dict[str, Any]) -> Path | None:
    """Put ``entry`` at ``servers_key.name`` in ``path``, keeping everything else; returns the backup, if any."""
    data = read_config(path)
    servers = data.setdefault(servers_key, {})
    if not isinstance(servers, dict):
        raise ClientFileError(f"{path}: /{servers_key} is {type(servers).__name__}, not an object; left as it was")
    servers[name] = entry
    try:
        return _write(path, data)
    except OSError as exc:
        raise ClientFileError(f"{path}: cannot write it ({exc.strerror or exc}); left as it was") from None


def _write(path: Path, data: dict[str, Any]) -> Path | None:
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = _backup(path) if path.exists() else None
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return backup


def _backup(path: Path) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%S")
    for n in range(1000):  # bounded: two installs in the same second get .1, .2, ...
        candidate = path.with_name(f"{path.name}.{stamp}{f'.{n}' if n else ''}.bak")
        if not candidate.exists():
            shutil.copy2(path, candidate)
            return candidate
    raise ClientFileError(f"{path}: too many backups from this second; left as it was")


def stable_program() -> tuple[str, ...]:
    """A command that will still exist for a client to start: this ``mcp-bridge``, or ``uvx`` from uv's cache.

    Under ``uvx`` the running script sits in uv's cache, which ``uv cache clean`` deletes; the
    client gets ``uvx --from <distribution> mcp-bridge`` instead. Otherwise the absolute path of
    this environment's script (or the one on PATH), else this Python with ``-m bridge``.
    """
    running = _running_script()
    if running is not None and in_uv_cache(running):
        uvx = shutil.which("uvx")
        return (os.path.abspath(uvx) if uvx else "uvx", "--from", DISTRIBUTION, "mcp-bridge")
    found = running or shutil.which("mcp-bridge")
    return (os.path.abspath(found),) if found else (sys.executable, "-m", "bridge")


def _running_script() -> str | None:
    if Path(sys.argv[0]).name == "mcp-bridge" and Path(sys.argv[0]).is_file():
        return sys.argv[0]
    beside = Path(sys.executable).parent / "mcp-bridge"  # the script of this interpreter's environment
    return str(beside) if beside.is_file() else None


def in_uv_cache(path: str) -> bool:
    """Under uv's cache (where ``uvx`` keeps its environments), which ``uv cache clean`` deletes."""
    resolved = Path(os.path.abspath(path))
    explicit = os.environ.get("UV_CACHE_DIR")
    roots = [Path(explicit)] if explicit else []
    caches = [os.environ.get("XDG_CACHE_HOME"), str(Path.home() / ".cache"), str(Path.home() / "Library" / "Caches")]
    roots += [Path(root) / "uv" for root in caches if root]
    if any(resolved.is_relative_to(root) for root in roots):
        return True
    parts = resolved.parts
    return any(a == "uv" and b.startswith(("archive-v", "builds-v")) for a, b in itertools.pairwise(parts))
