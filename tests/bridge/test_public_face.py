"""The public face: docs/library.md's "What you may import", the code's ``__all__``, and what importing it costs.

Users' files (``hooks.py``, their own servers, every generated ``server.py``) import these paths,
so they must keep working whatever moves inside the bridge; anything else is internal.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PUBLIC = {
    "bridge.tools": [
        "Tool",
        "ToolContext",
        "ToolRegistry",
        "RunFunction",
        "ProgressReporter",
        "ToolError",
        "ToolDefinitionError",
        "TOOL_NAME_PATTERN",
        "check_tool_name",
    ],
    "bridge.server": ["build_server"],
    "bridge.content": [
        "text",
        "image",
        "audio",
        "link",
        "resource",
        "error_result",
        "to_call_result",
        "CONTENT_BLOCK_TYPES",
    ],
    "bridge.credentials": ["Credentials", "CredentialParts"],
    "bridge.http_tools": ["HttpRuntime", "HttpSettings", "make_http_tool", "tools_from_catalogue"],
    "bridge.transports": ["http_app", "run_http"],
    "bridge.cli": ["main", "serve_package_main"],
}
# The paths generated files and the docs' examples name: they are part of the face too.
GENERATED_IMPORTS = (
    ("generator/emit/templates/hooks.py.jinja", "from bridge.http_tools import HttpRuntime"),
    ("generator/emit/templates/hooks.py.jinja", "from bridge.tools import ToolRegistry"),
    ("generator/emit/templates/server.py.jinja", "from bridge.cli import serve_package_main"),
)


def documented_list() -> dict[str, list[str]]:
    text = (ROOT / "docs" / "library.md").read_text(encoding="utf-8")
    section = text.split("## What you may import", 1)[1].split("\n## ", 1)[0]
    return {
        match[1]: re.findall(r"`(\w+)`", match[2])
        for match in re.finditer(r"^- `([\w.]+)`: (.*)$", section, flags=re.MULTILINE)
    }


def test_the_docs_list_exactly_the_public_face() -> None:
    assert documented_list() == PUBLIC


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_each_public_path_exports_its_names_and_no_others(module: str) -> None:
    loaded = importlib.import_module(module)
    assert sorted(loaded.__all__) == sorted(PUBLIC[module])
    for name in PUBLIC[module]:
        assert getattr(loaded, name) is not None


@pytest.mark.parametrize(("template", "line"), GENERATED_IMPORTS)
def test_generated_files_import_only_the_public_face(template: str, line: str) -> None:
    assert line in (ROOT / template).read_text(encoding="utf-8")
    module, _, name = line.removeprefix("from ").partition(" import ")
    assert name in PUBLIC[module]


def test_every_golden_package_imports_the_bridge_through_the_public_face_only() -> None:
    imported = {
        match
        for path in (ROOT / "generated").rglob("*.py")
        for match in re.findall(r"^\s*from (bridge[\w.]*) import", path.read_text(encoding="utf-8"), re.MULTILINE)
    }
    assert imported and imported <= set(PUBLIC)


PROBE = """
import json, sys
import {modules}
print(json.dumps(sorted(sys.modules)))
"""
# A library user who builds a server of hand-written tools pays for none of these.
NOT_LOADED = ("generator", "bridge.modes.codemode", "bridge.modes.sandbox", "pydantic_monty", "jwt", "numpy")


def test_importing_the_public_face_loads_neither_the_generator_nor_code_mode_nor_jwt() -> None:
    probe = PROBE.format(modules=", ".join(sorted(PUBLIC)))
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    loaded = set(json.loads(done.stdout))
    assert set(PUBLIC) <= loaded
    assert {name for name in loaded if name.split(".")[0] in NOT_LOADED or name in NOT_LOADED} == set()
