"""The import layering (README "Layout"): the generator and the runtime share only the contract.

    generator/  ──imports──▶  contract (bridge.contract.catalogue, wire_rules, media_types, path_template,
                               result_shape, trim_schema, trim_fields, json_pointer, runtime_requirements,
                               version, stubs, listing, patterns, json_path, workflows.expressions/conditions,
                               longrunning.links, server_info.text, server_info.icons)
    bridge/     ──imports──▶  contract, and the generator only lazily, where a command needs it

Contract modules import neither httpx nor the generator, nor any other bridge module.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = (
    "bridge.contract.catalogue",
    "bridge.contract.wire_rules",
    "bridge.contract.media_types",
    "bridge.contract.path_template",
    "bridge.contract.result_shape",
    "bridge.contract.trim_schema",
    "bridge.contract.schema_bound",
    "bridge.contract.formats",
    "bridge.contract.trim_fields",
    "bridge.contract.expressions.json_pointer",
    "bridge.contract.runtime_requirements",
    "bridge.contract.version",
    "bridge.contract.stubs",
    "bridge.contract.expressions.patterns",
    "bridge.contract.expressions.json_path",
    "bridge.workflows",
    "bridge.contract.expressions.arazzo",
    "bridge.contract.expressions.conditions",
    "bridge.contract.listing",
    "bridge.calls.longrunning",
    "bridge.contract.expressions.links",
    "bridge.server_info",
    "bridge.contract.plain_text",
    "bridge.contract.icons",
)
# bridge modules that may import the generator, inside a function only (the command that needs it).
LAZY_GENERATOR_USERS = {"cli_generate", "cli_inspect", "serve", "demo", "inspect", "stubsource"}


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(module, at module level) for every import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] if node.module != "bridge" else [f"bridge.{a.name}" for a in node.names]
            found.extend((name, id(node) in top) for name in names)
        elif isinstance(node, ast.Import):
            found.extend((alias.name, id(node) in top) for alias in node.names)
    return found


def test_the_generator_imports_only_the_contract_from_the_runtime() -> None:
    offenders = sorted(
        f"{path.relative_to(ROOT)}: {module}"
        for path in (ROOT / "generator").rglob("*.py")
        for module, _ in _imports(path)
        if module.startswith("bridge") and module not in CONTRACT
    )
    assert offenders == []


def test_the_runtime_imports_the_generator_only_lazily_in_the_commands_that_need_it() -> None:
    offenders = sorted(
        f"{path.relative_to(ROOT)}: {module}"
        for path in (ROOT / "bridge").rglob("*.py")
        for module, top_level in _imports(path)
        if module.split(".")[0] == "generator"
        and (path.stem not in LAZY_GENERATOR_USERS or (top_level and path.stem != "cli_generate"))
    )
    assert offenders == []


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
