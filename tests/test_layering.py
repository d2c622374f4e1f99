"""The import layering (docs/architecture.md): each folder imports only the folders below it, in one order.

    bridge/     contract < tools < confirm < secrets < identity < server < request < upstream
                < results < calls < workflows < resources < modes < ops < serving < cli < the public face
    generator/  issues < options < workers < standards < load < parse < shape < workflows < emit < generate

``bridge.contract`` is what the two halves share: the generator imports nothing else of the runtime,
and a contract module loads neither httpx nor the generator nor any other bridge module. The runtime
imports the generator only lazily, in the commands that need it. No module imports itself back, by
any path. Every import counts: at module level, inside a function, and under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

BRIDGE_ORDER = (
    "contract",
    "tools",
    "confirm",
    "secrets",
    "identity",
    "server",
    "request",
    "upstream",
    "results",
    "calls",
    "workflows",
    "resources",
    "modes",
    "ops",
    "serving",
    "cli",
)
# bridge/*.py: the public face (docs/library.md, "What you may import"), above everything, imported by nothing inside.
FACE = ("bridge", "bridge.__main__", "bridge.content", "bridge.credentials", "bridge.http_tools", "bridge.transports")
GENERATOR_ORDER = (
    "issues",
    "options",
    "workers",
    "standards",
    "load",
    "parse",
    "shape",
    "workflows",
    "emit",
    "generate",
)
# Modules that may import the generator, inside a function only (the command that needs it);
# `mcp-bridge generate` is the one command that imports it at module level.
LAZY_GENERATOR_USERS = {
    "bridge.cli.generate",
    "bridge.cli.inspect",
    "bridge.cli.costs",
    "bridge.cli.demo",
    "bridge.cli.try_tools",
    "bridge.serving.assemble",
    "bridge.serving.process",
    "bridge.serving.spec_target",
    "bridge.modes.stubsource",
}
EAGER_GENERATOR_USERS = {"bridge.cli.generate"}
MAX_OWN_FILES = 8  # files of its own in bridge/ and generator/
MAX_MODULES = 15  # modules in any one folder


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules(half: str) -> dict[str, Path]:
    return {_name(path): path for path in sorted((ROOT / half).rglob("*.py"))}


def all_modules() -> dict[str, Path]:
    return {**modules("bridge"), **modules("generator")}


def imports(module: str, path: Path) -> Iterator[tuple[str, bool]]:
    """(imported module, at module level) for every import of ``module``, to the most precise module known."""
    known = all_modules()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, id(node) in top
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                yield (f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base), id(node) in top


def _layer(module: str) -> int:
    half, _, rest = module.partition(".")
    if half == "bridge":
        if module in FACE:
            return len(BRIDGE_ORDER)
        return BRIDGE_ORDER.index(rest.split(".")[0])
    return GENERATOR_ORDER.index(rest.split(".")[0]) if rest else len(GENERATOR_ORDER)


def test_every_module_sits_in_a_folder_of_the_order() -> None:
    strays = []
    for module in all_modules():
        half, _, rest = module.partition(".")
        order = BRIDGE_ORDER if half == "bridge" else GENERATOR_ORDER
        if module not in FACE and module != "generator" and rest.split(".")[0] not in order:
            strays.append(module)
    assert strays == []


def test_each_folder_imports_only_the_folders_below_it() -> None:
    upward = sorted(
        f"{module} -> {imported}"
        for module, path in all_modules().items()
        for imported, _ in imports(module, path)
        if imported.partition(".")[0] == module.partition(".")[0]
        and imported in all_modules()
        and _layer(imported) > _layer(module)
    )
    assert upward == []


def test_nothing_inside_the_bridge_imports_its_public_face() -> None:
    # Internal code imports the real module, so the face can stay a thin list of names.
    inward = sorted(
        f"{module} -> {imported}"
        for module, path in modules("bridge").items()
        if module not in FACE
        for imported, _ in imports(module, path)
        if imported in FACE
    )
    assert inward == []


def _folder(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_no_module_imports_a_private_name_of_another_folder() -> None:
    # A folder that needs another's internals is one idea split in two, or an API not yet named.
    reaching = sorted(
        f"{module} -> {node.module}.{alias.name}"
        for module, path in all_modules().items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
        for alias in node.names
        if alias.name.startswith("_")
        and node.module.partition(".")[0] in ("bridge", "generator")
        and _folder(node.module) != _folder(module)
    )
    assert reaching == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def import_graph() -> dict[str, set[str]]:
    known = all_modules()
    return {
        module: {imported for imported, _ in imports(module, path) if imported in known and imported != module}
        for module, path in known.items()
    }


def test_no_module_imports_itself_back() -> None:
    assert _cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_pair_and_a_longer_loop() -> None:
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert sorted(_cycles(graph)) == [["a", "b"], ["c", "d", "e"]]


def test_the_generator_imports_only_the_contract_from_the_runtime() -> None:
    offenders = sorted(
        f"{module}: {imported}"
        for module, path in modules("generator").items()
        for imported, _ in imports(module, path)
        if imported.partition(".")[0] == "bridge" and not imported.startswith("bridge.contract")
    )
    assert offenders == []


def test_the_runtime_imports_the_generator_only_lazily_in_the_commands_that_need_it() -> None:
    offenders = sorted(
        f"{module}: {imported}"
        for module, path in modules("bridge").items()
        for imported, top_level in imports(module, path)
        if imported.partition(".")[0] == "generator"
        and (module not in LAZY_GENERATOR_USERS or (top_level and module not in EAGER_GENERATOR_USERS))
    )
    assert offenders == []


def test_folders_stay_small() -> None:
    for half in ("bridge", "generator"):
        own = sorted(p.name for p in (ROOT / half).glob("*.py"))
        assert len(own) <= MAX_OWN_FILES, (half, own)
        for folder in [ROOT / half, *(p for p in (ROOT / half).rglob("*") if p.is_dir() and p.name != "__pycache__")]:
            count = len([p for p in folder.glob("*.py") if p.name != "__init__.py"])
            assert count <= MAX_MODULES, (folder.relative_to(ROOT), count)


CONTRACT = tuple(module for module in modules("bridge") if module.startswith("bridge.contract"))
PROBE = """
import json, sys
import {module}
print(json.dumps(sorted(k for k in sys.modules if k.split(".")[0] in ("bridge", "generator", "httpx"))))
"""


@pytest.mark.parametrize("module", CONTRACT)
def test_a_contract_module_loads_no_httpx_no_generator_and_no_other_bridge_module(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(json.loads(done.stdout))
    assert loaded - {"bridge", *CONTRACT} == set()
