"""Another library's private names are used only in that library's seams module, and each use is listed here.

An AST scan of ``bridge/`` and ``generator/`` finds every private name (one leading underscore)
of a module that is not ours: imported (``from redis._parsers import ...``), reached as an
attribute (``validator._resolver``) or keyword (``evolve(_resolver=...)``), overridden in a
subclass of a foreign class, or named in a string (``"httpx._main"``). An attribute counts as
foreign when no module of ours defines that name. Each seams module says why it needs its names,
the versions checked, the upstream issue, and which test fails when the library changes them.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = ("bridge", "generator")

SEAMS = {
    "bridge/server/sdk_seams.py": "mcp",
    "bridge/tools/jsonschema_seams.py": "jsonschema",
    "generator/load/openapi_seams.py": "openapi_schema_validator, jsonschema_path",
    "bridge/serving/httpx_seams.py": "httpx",
    "bridge/ops/redis_seams.py": "redis",
    "bridge/ops/uvicorn_seams.py": "uvicorn",
}

# Every private name of another library in use, and the seams module that holds it.
EXPECTED = {
    "_claim_fd": "bridge/server/sdk_seams.py",
    "_open_stdout_diversion": "bridge/server/sdk_seams.py",
    "_open_stdin_diversion": "bridge/server/sdk_seams.py",
    "_UnownedTextWrapper": "bridge/server/sdk_seams.py",
    "_terminate_unanswered_request": "bridge/server/sdk_seams.py",
    "_resolver": "bridge/tools/jsonschema_seams.py",
    "openapi_schema_validator._specifications": "generator/load/openapi_seams.py",
    "_validate_schema_meta": "generator/load/openapi_seams.py",
    "_get_schema_checker": "generator/load/openapi_seams.py",
    "_resolve_node": "generator/load/openapi_seams.py",
    "_registry": "generator/load/openapi_seams.py",
    "_path_resolver": "generator/load/openapi_seams.py",
    "httpx._main": "bridge/serving/httpx_seams.py",
    "redis._parsers": "bridge/ops/redis_seams.py",
    "_AsyncRESP3Parser": "bridge/ops/redis_seams.py",
    "_readline": "bridge/ops/redis_seams.py",
    "_captured_signals": "bridge/ops/uvicorn_seams.py",
}

# Spelled both like a private attribute of ours (on ``self``) and like one of a library's (anywhere else).
SHARED_SPELLING = frozenset({"_registry"})

# Private by spelling, public by documentation: namedtuple's ``_replace``, ``os._exit``.
DOCUMENTED = frozenset({"_replace", "_exit", "_asdict", "_fields", "_make"})


_BY_NAME = frozenset({"getattr", "setattr", "hasattr", "delattr"})


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in DOCUMENTED


def _foreign_module(module: str) -> bool:
    return module.split(".")[0] not in OURS


@cache
def _trees() -> dict[str, ast.Module]:
    files = sorted(p for top in OURS for p in (ROOT / top).rglob("*.py"))
    return {str(p.relative_to(ROOT)): ast.parse(p.read_text(encoding="utf-8")) for p in files}


def _imported_names(tree: ast.Module) -> dict[str, str]:
    """Local name -> the foreign module path it was imported from (``module.name``)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and _foreign_module(node.module):
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _foreign_overrides(tree: ast.Module) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    """Methods named like a private attribute of the foreign class they subclass."""
    imported = _imported_names(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        bases = []
        for base in node.bases:
            dotted = imported.get(base.id) if isinstance(base, ast.Name) else None
            if dotted is not None:
                module, _, name = dotted.rpartition(".")
                try:
                    bases.append(getattr(importlib.import_module(module), name))
                except (ImportError, AttributeError):  # an optional extra not installed: checked by name below
                    bases.append(None)
        for item in node.body:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and _private(item.name):
                if any(base is None or hasattr(base, item.name) for base in bases):
                    yield item, item.name


@cache
def _ours() -> frozenset[str]:
    """Private names some module of ours defines (so an attribute by that name may be ours)."""
    overrides = {id(fn) for tree in _trees().values() for fn, _ in _foreign_overrides(tree)}
    defined: set[str] = set()
    for path, tree in _trees().items():
        if path in SEAMS:  # what a seams module assigns on a foreign object is not ours
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and id(node) not in overrides:
                defined.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                defined.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                defined.add(node.attr)
            elif isinstance(node, ast.arg):
                defined.add(node.arg)
            elif isinstance(node, ast.alias) and node.asname:
                defined.add(node.asname)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
                if len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
                    defined.add(str(node.args[1].value))
    return frozenset(defined)


def foreign_private_uses() -> set[tuple[str, str]]:
    """(file, name) of every use of another library's private name in bridge/ and generator/."""
    uses: set[tuple[str, str]] = set()
    ours = _ours()
    for path, tree in _trees().items():
        uses |= {(path, name) for _, name in _foreign_overrides(tree)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and _foreign_module(node.module):
                parts = node.module.split(".")
                if any(_private(p) for p in parts):
                    uses.add((path, ".".join(parts[: 1 + next(i for i, p in enumerate(parts) if _private(p))])))
                uses |= {(path, a.name) for a in node.names if _private(a.name)}
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    if _foreign_module(alias.name) and any(_private(p) for p in parts):
                        uses.add((path, alias.name))
            elif isinstance(node, ast.Attribute) and _private(node.attr):
                on_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
                if node.attr not in ours or (node.attr in SHARED_SPELLING and not on_self):
                    uses.add((path, node.attr))
            elif isinstance(node, ast.keyword) and node.arg and _private(node.arg) and node.arg not in ours:
                uses.add((path, node.arg))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _BY_NAME:
                named = node.args[1] if len(node.args) > 1 else None
                if isinstance(named, ast.Constant) and isinstance(named.value, str):
                    if _private(named.value) and named.value not in ours:
                        uses.add((path, named.value))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
                parts = text.split(".")
                if len(parts) > 1 and all(p.isidentifier() for p in parts) and _foreign_module(text):
                    if any(_private(p) for p in parts[1:]) and importlib.util.find_spec(parts[0]) is not None:
                        uses.add((path, text))
    return uses


def test_every_private_name_of_another_library_is_used_only_in_its_seams_module() -> None:
    outside = sorted((path, name) for path, name in foreign_private_uses() if path not in SEAMS)
    assert not outside, (
        "another library's private names used outside its seams module (move each use into the "
        f"library's seams module, with why, the versions checked and a test): {outside}"
    )


def test_the_private_names_in_use_are_exactly_the_listed_ones_each_in_its_seams_module() -> None:
    found: dict[str, set[str]] = {}
    for path, name in foreign_private_uses():
        found.setdefault(name, set()).add(path)
    assert {name: sorted(paths) for name, paths in found.items()} == {name: [path] for name, path in EXPECTED.items()}


def test_the_scan_finds_each_kind_of_use() -> None:
    source = (
        "from redis._parsers import _AsyncRESP3Parser\n"
        "import httpx._main\n"
        "def f(validator):\n"
        "    validator.evolve(_resolver=validator._resolver)\n"
        "    getattr(validator, '_schema_cache')\n"
        "    return 'httpx._main'\n"
    )
    tree = ast.parse(source)
    _trees()["bridge/probe.py"] = tree
    try:
        uses = {name for path, name in foreign_private_uses() if path == "bridge/probe.py"}
    finally:
        del _trees()["bridge/probe.py"]
    assert uses == {"redis._parsers", "_AsyncRESP3Parser", "httpx._main", "_resolver", "_schema_cache"}


def test_each_seams_module_opens_with_why_the_versions_and_an_upstream_issue_or_draft() -> None:
    for path in SEAMS:
        doc = ast.get_docstring(_trees()[path]) or ""
        assert "Checked on" in doc, path
        named = re.findall(r"tests/[\w/]+\.py", doc)
        assert named and all((ROOT / test).is_file() for test in named), (path, named)  # the test that fails
        assert "raft" in doc or "#" in doc, path  # an upstream issue, or a draft of one
