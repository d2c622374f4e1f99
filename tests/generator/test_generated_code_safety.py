"""P32: spec text never becomes code in a generated package, whatever the text holds."""

from __future__ import annotations

import ast
import io
import json
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.generate import generate
from generator.models import render_module
from generator.options import GenerateOptions
from generator.pysafe import UnsafeSourceError, check_models_source, py_str

IMPORT_TIMEOUT = 60


def _payloads(marker: Path) -> list[str]:
    """Texts that would run ``touch marker`` if pasted into Python source in any quoting context."""
    touch = f"__import__({_no_quotes('pathlib')}).Path({_no_quotes(str(marker))}).touch()"
    return [
        f'"""+{touch}+"""',
        f"'''+{touch}+'''",
        f"'+{touch}+'",
        f'"+{touch}+"',
        f"x\n{touch}\n",
        f"x\r{touch}\rx",
        f"# note\n{touch}  #",
        f"\\\n{touch}",
        f"x\u2028{touch}\u2029",
        f"{{{{ {touch} }}}} {{% raw %}}",
        f"nul \x00 {touch} \x0b \x0c end",
    ]


def _no_quotes(text: str) -> str:
    # The payload spells its strings without quotes, so an escaped quote cannot disarm it.
    return f"bytes({list(text.encode())}).decode()"


def _hostile_spec(marker: Path) -> dict[str, object]:
    texts = _payloads(marker)
    props = {text: {"type": "string", "description": text, "title": text, "default": text} for text in texts}
    schema = {
        "type": "object",
        "description": texts[0],
        "properties": {**props, "kind": {"type": "string", "enum": texts}},
        "required": [texts[1], "kind"],
    }
    operations: dict[str, object] = {}
    for index, text in enumerate(texts):
        ref = f"#/components/schemas/S{index}"
        operations[f"/op{index}"] = {
            "post": {
                "operationId": text,
                "summary": text,
                "description": text,
                "tags": [text],
                "parameters": [{"name": text, "in": "query", "description": text, "schema": {"type": "string"}}],
                "requestBody": {"content": {"application/json": {"schema": {"$ref": ref}}}},
                "responses": {
                    "200": {
                        "description": text,
                        "content": {"application/json": {"schema": {"$ref": ref}}},
                    }
                },
            }
        }
    return {
        "openapi": "3.0.3",
        "info": {"title": texts[0], "version": texts[1], "description": texts[2]},
        "servers": [
            {"url": "https://api.example.com/{v}", "variables": {"v": {"default": texts[3], "enum": texts}}},
            *({"url": f"https://api.example.com/{text}", "description": text} for text in texts),
        ],
        "paths": operations,
        "components": {
            "schemas": {f"S{i}": {**schema, "title": text} for i, text in enumerate(texts)},
            "securitySchemes": {texts[4]: {"type": "apiKey", "in": "header", "name": "X-Key"}},
        },
        "security": [{texts[4]: []}],
    }


def _docstrings_and_comments(path: Path) -> list[str]:
    source = path.read_text(encoding="utf-8")
    comments = [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    docstrings = [
        node.value.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    ]
    return comments + docstrings


def test_no_generated_module_runs_spec_text_when_imported(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    spec = tmp_path / "hostile.json"
    spec.write_text(json.dumps(_hostile_spec(marker)), encoding="utf-8")
    out = tmp_path / "hostile_pkg"
    result = generate(str(spec), out, GenerateOptions(name="hostile_pkg"))
    assert result.api.operations
    modules = sorted(p.relative_to(tmp_path).with_suffix("") for p in out.rglob("*.py"))
    names = [".".join(m.parts) for m in modules]
    assert {"hostile_pkg", "hostile_pkg.server", "hostile_pkg.hooks", "hostile_pkg.models.inputs"} <= {
        n.removesuffix(".__init__") for n in names
    }
    for path in (out / "models").glob("*.py"):
        if path.name != "__init__.py":
            check_models_source(path.read_text(encoding="utf-8"))
    for path in out.rglob("*.py"):
        assert all("bytes([" not in text for text in _docstrings_and_comments(path)), path
    typed = (out / "models" / "inputs.py").read_text(encoding="utf-8")
    assert "Input(BaseModel)" in typed  # the hostile text did not just make the models disappear
    script = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    done = subprocess.run(
        [sys.executable, "-c", script, *[n.removesuffix(".__init__") for n in names]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=IMPORT_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert not marker.exists()


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF)))
def test_py_str_is_one_string_token_that_reads_back_as_the_text(text: str) -> None:
    literal = py_str(text)
    assert ast.literal_eval(literal) == text
    tokens = [
        t
        for t in tokenize.generate_tokens(io.StringIO(literal).readline)
        if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER)
    ]
    assert [t.type for t in tokens] == [tokenize.STRING]
    # Pasted into a statement, the text is still one constant: nothing else appears in the tree.
    tree = ast.parse(f"X = {literal}\n")
    assert [type(n).__name__ for n in ast.walk(tree)] == ["Module", "Assign", "Name", "Constant", "Store"]
    literal.encode("utf-8")  # writable in a UTF-8 source file, lone surrogates included


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=4, unique=True))
def test_models_of_any_property_names_and_enums_pass_the_source_check(names: list[str]) -> None:
    schema = {
        "type": "object",
        "properties": {n: {"type": "string", "description": n, "enum": [n, n + "'\"\n"]} for n in names},
        "required": names[:1],
    }
    module = render_module([{"name": "tool", "inputSchema": schema}])
    check_models_source(module.source)
    assert module.untyped == ()


@pytest.mark.parametrize(
    "source",
    [
        "import os\n",
        "from os import system\n",
        "from .sibling import x\n",
        "__import__('os').system('id')\n",
        "class A(BaseModel):\n    x: int = __import__('os').system('id')\n",
        "class A(BaseModel):\n    x: 'os.system(1)'\n",
        "class A(BaseModel):\n    x: list['os']\n",
        "class A(RootModel['os']):\n    pass\n",
        "class A(BaseModel):\n    x: int = Field(default_factory=lambda: 1)\n",
        "class A(BaseModel):\n    x: int = Field(**{'a': 1})\n",
        "class A(BaseModel):\n    x: int = Field(None).__class__\n",
        "class A(BaseModel):\n    def f(self): pass\n",
        "@decorator\nclass A(BaseModel):\n    pass\n",
        "class A(BaseModel, metaclass=M):\n    pass\n",
        "class A(BaseModel):\n    x: int = 1 if y else 2\n",
        "class A(BaseModel):\n    x: int = [y for y in z]\n",
        "X = 1\n",
        "if True:\n    pass\n",
        "A.model_rebuild(force=os.system('id'))\n",
        "def f(\n",
    ],
)
def test_the_models_source_check_refuses_anything_but_plain_models(source: str) -> None:
    with pytest.raises(UnsafeSourceError):
        check_models_source(source)


def test_the_models_source_check_accepts_what_the_library_writes() -> None:
    source = (
        "from __future__ import annotations\n"
        "from typing import Any, Literal\n"
        "from pydantic import BaseModel, ConfigDict, Field, RootModel, conint, constr\n"
        "from enum import StrEnum\n"
        "class Model(RootModel[Any]):\n    root: Any\n"
        'class Kind(StrEnum):\n    a = \'a"""\'\n'
        "class T(BaseModel):\n"
        "    model_config = ConfigDict(extra='forbid')\n"
        "    k: Kind | None = Kind.a\n"
        "    c: Literal['x', 'y'] = 'x'\n"
        "    n: conint(ge=-1) | None = Field(-1, description='\"\"\"; import os', alias='n\\n')\n"
        "    s: constr(pattern='^a$') = Field(..., examples=[{'a': [1, None, True]}])\n"
        "    '''docstring'''\n"
        "T.model_rebuild()\n"
    )
    check_models_source(source)
