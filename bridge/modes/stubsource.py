"""Where code mode's stubs come from: the package's ``api.pyi``, or built from the catalogue.

A generated package carries ``api.pyi`` (split at its statements once, on first use; each statement
is parsed only when a program or search reaches it: bridge/contract/stubs.py). ``serve spec.yaml`` has no
package: stubs are then built from the catalogue for just the operations asked for (a search
page, the functions one program names) and kept: building all of GitHub's 1,223 at once takes
about half a second, a handful a few milliseconds.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import anyio

from bridge.contract.catalogue import ToolEntry
from bridge.contract.stubs import STUBS_FILE, StubIndex, function_names

__all__ = ["BuiltStubs", "PackageStubs", "StubSource", "stub_source"]

BUILT_CACHE = 128


class StubSource(Protocol):
    """Stubs holding at least the functions ``names`` (Python function names)."""

    async def index_for(self, names: Sequence[str]) -> StubIndex: ...


class PackageStubs:
    """The stubs of a package's ``api.pyi``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._index: StubIndex | None = None
        self._lock = anyio.Lock()

    async def index_for(self, names: Sequence[str]) -> StubIndex:
        if self._index is None:
            async with self._lock:
                if self._index is None:
                    source = self.path.read_text(encoding="utf-8")
                    self._index = await anyio.to_thread.run_sync(StubIndex.parse, source)
        return self._index


class BuiltStubs:
    """Stubs built from catalogue entries on demand, per set of functions (cached)."""

    def __init__(self, entries: Sequence[ToolEntry]) -> None:
        self._functions = {tool: py for py, tool in function_names(e.name for e in entries).items()}
        self._entries = {self._functions[entry.name]: entry for entry in entries}
        self._cache: OrderedDict[frozenset[str], StubIndex] = OrderedDict()
        self._lock = anyio.Lock()  # one build at a time: two programs naming the same functions build once

    async def index_for(self, names: Sequence[str]) -> StubIndex:
        key = frozenset(n for n in names if n in self._entries)
        found = self._cache.get(key)
        if found is not None:
            self._cache.move_to_end(key)
            return found
        async with self._lock:
            found = self._cache.get(key)
            if found is None:
                entries = [self._entries[n] for n in sorted(key)]
                found = await anyio.to_thread.run_sync(_build, entries, self._functions)
                self._cache[key] = found
                while len(self._cache) > BUILT_CACHE:
                    self._cache.popitem(last=False)
        return found


def _build(entries: list[ToolEntry], functions: dict[str, str]) -> StubIndex:
    from generator.emit.stubs import render_stubs

    return StubIndex.parse(render_stubs(entries, functions=functions))


def stub_source(package_dir: Path | None, entries: Sequence[ToolEntry]) -> StubSource:
    """The package's ``api.pyi`` when it has one, else stubs built from ``entries``."""
    if package_dir is not None and (package_dir / STUBS_FILE).is_file():
        return PackageStubs(package_dir / STUBS_FILE)
    return BuiltStubs(entries)
