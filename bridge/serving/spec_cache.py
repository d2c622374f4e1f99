"""``serve spec.json``: the generated catalogue kept in the user's cache folder, so a later start skips generation.

An entry is one JSON file under ``$XDG_CACHE_HOME/mcp-bridge/catalogues/`` (``~/.cache/...``
without it), named by its key: the SHA-256 of the spec's bytes, each overlay's and workflow
document's bytes, the spec's real path, the mcp-bridge version (and its generator's source
files, for an editable install), the catalogue format and the generate options. It holds data
only: a header line (the key, the generation warnings as text, the digest of the rest), then
the catalogue as a package's ``catalogue.json`` holds it. It is read the way a package's
catalogue is read (JSON, then the ``Catalogue`` model), so an entry can make ``serve`` serve
wrong tools at worst, never run code; and even that needs write access to the user's own 0700
folder. An entry is used only when the folder and the file belong to the
user and nobody else can write them, the file is a regular file (no symlink), it names the key
it is stored under and its catalogue matches the digest. Anything else - a truncated or corrupt
file, another version's entry, a foreign or planted file - is ignored with one log line and
rebuilt.

Writes are atomic (a private temporary file in the same folder, then ``os.replace``), so two
``serve`` processes starting at once each read either no entry or a whole one. Specs whose
``$ref`` reach other files, and specs given as URLs, are not cached: their key would have to
cover content the spec's bytes do not hold.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.util
import json
import logging
import os
import stat
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bridge.contract.catalogue import CATALOGUE_FORMAT, Catalogue
from bridge.contract.version import bridge_version

__all__ = ["CACHE_FORMAT", "CachedBuild", "CatalogueCache", "cache_root"]

logger = logging.getLogger("bridge.serve")

CACHE_FORMAT = 1
"""Bumped when an entry's layout changes: older entries then miss."""
_KIND = "mcp-bridge catalogue cache"
_MAX_ENTRY_BYTES = 512 * 1024 * 1024


def cache_root(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/mcp-bridge/catalogues`` (XDG: ``~/.cache`` when unset or not absolute)."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "mcp-bridge" / "catalogues"


@dataclass(frozen=True, slots=True)
class CachedBuild:
    catalogue: Catalogue
    issues: tuple[str, ...]  # the generation warnings, as ``str(issue)`` gave them
    validated: bool  # the warnings include the spec's validation problems
    catalogue_json: bytes  # the entry's catalogue, to write it again with more warnings


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class CatalogueCache:
    """The cache entry of one spec and its generate options."""

    def __init__(self, folder: Path, key: str, inputs: Mapping[str, bytes] | None = None) -> None:
        self.folder = folder
        self.key = key
        self.path = folder / f"{key}.json"
        self.inputs: Mapping[str, bytes] = inputs or {}
        """The bytes the key was made from, by real path: generation must read these, not the disk again."""

    @classmethod
    def for_spec(
        cls,
        spec: str,
        *,
        overlays: Sequence[str] = (),
        workflows: Sequence[str] = (),
        options: Any = None,
        folder: Path | None = None,
    ) -> CatalogueCache | None:
        """The entry for ``spec`` (a local file), or None when it cannot be cached (a URL, unreadable)."""
        if "://" in spec or spec.startswith("file:"):
            return None
        inputs: dict[str, bytes] = {}

        def read_once(path: str) -> list[str]:
            real = os.path.realpath(path)
            if real not in inputs:
                inputs[real] = Path(real).read_bytes()
            return [real, _digest(inputs[real])]

        try:
            parts: dict[str, Any] = {
                "kind": _KIND,
                "cache_format": CACHE_FORMAT,
                "catalogue_format": CATALOGUE_FORMAT,
                "version": bridge_version(),
                "code": _code_fingerprint(),
                "spec": read_once(spec),
                "overlays": [read_once(p) for p in overlays],
                "workflows": [read_once(p) for p in workflows],
                "options": _options_data(options),
            }
        except OSError:
            return None  # generation reports the unreadable file with its own message
        key = _digest(json.dumps(parts, sort_keys=True, default=repr).encode("utf-8"))
        return cls(folder if folder is not None else cache_root(), key, inputs)

    # ---------------------------------------------------------------------------------- reading

    def load(self) -> CachedBuild | None:
        """The entry's catalogue and warnings, or None (absent, or ignored with a log line why)."""
        try:
            raw = self._read()
        except FileNotFoundError:
            return None
        except _Refused as exc:
            logger.warning("catalogue cache entry %s ignored: %s; generating the catalogue", self.path, exc)
            return None
        except OSError as exc:
            logger.warning("catalogue cache entry %s ignored: %s; generating the catalogue", self.path, exc.strerror)
            return None
        try:
            head, _, body = raw.partition(b"\n")
            entry = json.loads(head)
            if not isinstance(entry, dict) or entry.get("kind") != _KIND or entry.get("key") != self.key:
                raise ValueError("it is not this spec's entry")
            if entry.get("catalogue_sha256") != _digest(body):
                raise ValueError("its catalogue is truncated or altered")
            issues, validated = entry.get("issues"), entry.get("validated")
            if not isinstance(issues, list) or not all(isinstance(i, str) for i in issues):
                raise ValueError("its warnings are malformed")
            if not isinstance(validated, bool):
                raise ValueError("it does not say whether the spec was validated")
            # As a package's catalogue.json is read (bridge.serving.package.load_catalogue).
            catalogue = Catalogue.model_validate(json.loads(body))
            if catalogue.format != CATALOGUE_FORMAT:
                raise ValueError(f"catalogue format {catalogue.format}")
        except (ValueError, TypeError, RecursionError) as exc:  # json's and pydantic's errors are ValueErrors
            reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            logger.warning("catalogue cache entry %s ignored (%s); generating the catalogue", self.path, reason)
            return None
        return CachedBuild(catalogue, tuple(issues), validated, body)

    def _read(self) -> bytes:
        self._check_folder(create=False)
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(self.path, flags)
        except OSError as exc:
            if exc.errno == getattr(os, "ELOOP", -1):
                raise _Refused("it is a symbolic link") from None
            raise
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            _check_private(info, "file", regular=True)
            if info.st_size > _MAX_ENTRY_BYTES:
                raise _Refused(f"larger than {_MAX_ENTRY_BYTES} bytes")
            return file.read(_MAX_ENTRY_BYTES + 1)

    def _check_folder(self, *, create: bool) -> None:
        if create:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            info = os.lstat(self.folder)
        except FileNotFoundError:
            raise FileNotFoundError(str(self.folder)) from None
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
            raise _Refused(f"{self.folder} is not a plain folder")
        _check_private(info, "folder", regular=False)

    # ---------------------------------------------------------------------------------- writing

    def store(self, catalogue_json: bytes, issues: Sequence[str], *, validated: bool) -> bool:
        """Write the entry atomically; False (with a log line) when the cache folder cannot be used.

        ``catalogue_json`` is the catalogue as a package's ``catalogue.json`` holds it.
        """
        entry = {
            "kind": _KIND,
            "key": self.key,
            "version": bridge_version(),
            "issues": list(issues),
            "validated": validated,
            "catalogue_sha256": _digest(catalogue_json),
        }
        data = json.dumps(entry, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n" + catalogue_json
        try:
            self._check_folder(create=True)
            fd, temporary = tempfile.mkstemp(prefix=f".{self.key[:16]}.", suffix=".tmp", dir=self.folder)
        except (OSError, _Refused) as exc:
            logger.warning("catalogue cache not written (%s): %s", self.folder, getattr(exc, "strerror", None) or exc)
            return False
        try:
            with os.fdopen(fd, "wb") as file:  # mkstemp: 0600, owned by this user
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except OSError as exc:
            logger.warning("catalogue cache not written (%s): %s", self.path, exc.strerror)
            try:
                os.unlink(temporary)
            except OSError:
                pass
            return False
        return True


class _Refused(Exception):
    """An entry or folder the cache does not trust."""


def _check_private(info: os.stat_result, what: str, *, regular: bool) -> None:
    if regular and not stat.S_ISREG(info.st_mode):
        raise _Refused(f"the {what} is not a regular file")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise _Refused(f"the {what} belongs to another user (uid {info.st_uid})")
    if info.st_mode & 0o022:
        raise _Refused(f"the {what} is writable by other users")


@functools.cache
def _code_fingerprint() -> str:
    """The generator's and the catalogue model's source files (names, sizes, change times): an
    editable install whose code changed under the same version number gets new keys. Found
    without importing the generator (a start from the cache does not load it)."""
    stamps = []
    for name in ("generator", "bridge.contract"):
        found = importlib.util.find_spec(name)
        for root in (found.submodule_search_locations or []) if found is not None else []:
            for folder, _, files in sorted(os.walk(root)):
                for file in sorted(f for f in files if f.endswith(".py")):
                    try:
                        info = os.stat(os.path.join(folder, file))
                    except OSError:
                        continue
                    stamps.append(f"{os.path.relpath(folder, root)}/{file}:{info.st_size}:{info.st_mtime_ns}")
    return _digest("\n".join(stamps).encode("utf-8"))


def _options_data(options: Any) -> Any:
    if options is None:
        return None
    if dataclasses.is_dataclass(options) and not isinstance(options, type):
        return {f.name: getattr(options, f.name) for f in dataclasses.fields(options)}
    return repr(options)
