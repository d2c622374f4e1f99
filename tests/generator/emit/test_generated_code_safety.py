"""P32: spec text never becomes code in a generated package, whatever the text holds."""

from __future__ import annotations

import ast
import io
import json
import subprocess
import sys
import tokenize
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.contract.stubs import STUBS_FILE
from generator.emit.pysafe import py_str
from generator.generate import generate
from generator.options import GenerateOptions

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


def _is_functional_typed_dict(call: ast.Call) -> bool:
    """``TypedDict('Name', {'any key': type, ...})``: how a stub spells keys that are not identifiers."""
    name, *rest = call.args
    fields = rest[0] if rest else None
    return (
        isinstance(call.func, ast.Name)
        and call.func.id == "TypedDict"
        and isinstance(name, ast.Constant)
        and isinstance(fields, ast.Dict)
        and len(rest) == 1
        and all(isinstance(key, ast.Constant) and isinstance(key.value, str) for key in fields.keys)
        and all(kw.arg in {"total", "closed"} and isinstance(kw.value, ast.Constant) for kw in call.keywords)
    )


def test_no_generated_module_runs_spec_text_when_imported(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    spec = tmp_path / "hostile.json"
    spec.write_text(json.dumps(_hostile_spec(marker)), encoding="utf-8")
    out = tmp_path / "hostile_pkg"
    result = generate(str(spec), out, GenerateOptions(name="hostile_pkg"))
    assert result.api.operations
    modules = sorted(p.relative_to(tmp_path).with_suffix("") for p in out.rglob("*.py"))
    names = [".".join(m.parts) for m in modules]
    assert {"hostile_pkg", "hostile_pkg.server", "hostile_pkg.hooks"} <= {n.removesuffix(".__init__") for n in names}
    for path in out.rglob("*.py"):
        assert all("bytes([" not in text for text in _docstrings_and_comments(path)), path
    # api.pyi is read by type checkers, never run; still, no spec text may turn into a statement or a call there.
    stubs = ast.parse((out / STUBS_FILE).read_text(encoding="utf-8"))
    assert all(_is_functional_typed_dict(node) for node in ast.walk(stubs) if isinstance(node, ast.Call))
    typed = [n for n in ast.walk(stubs) if isinstance(n, ast.Call | ast.ClassDef) and "Input" in ast.unparse(n)[:200]]
    assert typed  # the hostile text did not just make the types disappear
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
