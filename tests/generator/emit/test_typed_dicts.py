"""api.pyi's TypedDicts: each schema shape's Python type (a table), any schema gives a closed,
declaration-only module that keeps every key (hypothesis), and mypy accepts what the table writes."""

from __future__ import annotations

import ast
import builtins
import keyword
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.emit.typed_dicts import TYPING_NAMES, Declarations, TypedDictClass, typed_dicts

MYPY_TIMEOUT = 180
OBJ = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}

# (schema of the property `v`, its annotation)
ANNOTATIONS: list[tuple[dict[str, Any], str]] = [
    ({"type": "string"}, "str"),
    ({"type": "string", "format": "date-time"}, "str"),
    ({"type": "integer"}, "int"),
    ({"type": "number"}, "float"),
    ({"type": "boolean"}, "bool"),
    ({"type": "null"}, "None"),
    ({"type": ["string", "null"]}, "str | None"),
    ({"type": ["null", "integer", "string"]}, "int | str | None"),
    ({"type": "string", "nullable": True}, "str | None"),
    ({}, "Any"),
    ({"description": "anything"}, "Any"),
    ({"type": "array"}, "list[Any]"),
    ({"type": "array", "items": {"type": "string"}}, "list[str]"),
    ({"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}}, "list[Any]"),
    ({"type": "array", "items": {"type": "array", "items": {"type": "number"}}}, "list[list[float]]"),
    ({"type": "object"}, "dict[str, Any]"),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, "dict[str, int]"),
    ({"type": "object", "additionalProperties": True}, "dict[str, Any]"),
    ({"enum": ["a", "b"]}, "Literal['a', 'b']"),
    ({"type": "string", "enum": ["a", None]}, "Literal['a'] | None"),
    ({"enum": [1, 2, True]}, "Literal[1, 2, True]"),
    ({"type": "number", "enum": [1.5, 2.5]}, "float"),
    ({"const": "x"}, "Literal['x']"),
    ({"const": {"a": 1}, "type": "object"}, "dict[str, Any]"),
    ({"enum": ["it's", 'say "hi"', "\\", "\n"]}, "Literal[\"it's\", 'say \"hi\"', '\\\\', '\\n']"),
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, "str | int"),
    ({"oneOf": [{"type": "string"}, {"type": "string"}]}, "str"),
    ({"anyOf": [{"type": "string"}, {}]}, "Any"),
    ({"anyOf": [{"$ref": "#/$defs/Shared"}, {"type": "null"}]}, "Shared | None"),
    ({"oneOf": [{"required": ["a"]}, {"required": ["b"]}], "type": "string"}, "str"),
    ({"allOf": [{"$ref": "#/$defs/Shared"}]}, "Shared"),
    ({"allOf": [{"$ref": "#/$defs/Shared"}], "nullable": True}, "Shared | None"),
    ({"allOf": [{"type": "string"}, {"maxLength": 3}]}, "str"),
    ({"$ref": "#/$defs/Shared"}, "Shared"),
    ({"$ref": "#/$defs/Missing"}, "Any"),
    ({"$ref": "other.json#/Thing"}, "Any"),
    ({"not": {"type": "string"}}, "Any"),
    ({"type": "object", "properties": {"x": {"type": "string"}}}, "{}"),
    ({"type": ["object", "null"], "properties": {"x": {"type": "string"}}}, "{} | None"),
    ({"type": "array", "items": OBJ}, "list[{}]"),
]


def _module(defs: dict[str, Any], reserved: tuple[str, ...] = ()) -> tuple[Declarations, str]:
    declarations = typed_dicts(defs, reserved=reserved)
    body = "\n\n".join(d.render() for d in declarations.items)
    header = (
        "from __future__ import annotations\n"
        "from typing import Any, Literal, NotRequired, TypeAlias\n"
        "from typing_extensions import TypedDict\n\n"
    )
    return declarations, header + body + "\n"


def _table_defs() -> dict[str, Any]:
    defs: dict[str, Any] = {"Shared": OBJ}
    for i, (schema, _) in enumerate(ANNOTATIONS):
        defs[f"Case{i}"] = {"type": "object", "properties": {"v": schema}}
    return defs


@pytest.mark.parametrize(("index", "expected"), [(i, a) for i, (_, a) in enumerate(ANNOTATIONS)])
def test_each_schema_shape_has_its_python_type(index: int, expected: str) -> None:
    declarations, _ = _module(_table_defs())
    fields = declarations.fields(f"Case{index}")
    assert fields is not None
    annotation = fields["v"].annotation
    if "{}" in expected:  # an inline object: a class named after its property
        name = annotation.removesuffix(" | None").removeprefix("list[").removesuffix("]")
        assert annotation == expected.format(name) and name.startswith("V")
        assert isinstance(declarations.get(name), TypedDictClass)
    else:
        assert annotation == expected


def test_all_of_extends_a_shared_shape_and_flattens_when_parts_clash() -> None:
    base = {"type": "object", "properties": {"id": {"type": "integer"}}}
    defs = {
        "Base": base,
        "Extends": {"allOf": [{"$ref": "#/$defs/Base"}, {"properties": {"name": {"type": "string"}}}]},
        "Clashes": {"allOf": [{"$ref": "#/$defs/Base"}, {"properties": {"id": {"type": "string"}}}]},
        "Requires": {"allOf": [{"$ref": "#/$defs/Base"}], "required": ["id"], "properties": {"x": {"type": "string"}}},
        "Loop": {"allOf": [{"$ref": "#/$defs/Loop"}, {"properties": {"n": {"type": "integer"}}}]},
    }
    declarations, _ = _module(defs)
    extends = declarations.get("Extends")
    assert isinstance(extends, TypedDictClass) and extends.bases == ["Base"]
    assert [f.key for f in extends.fields] == ["name"]
    clashes = declarations.get("Clashes")
    assert isinstance(clashes, TypedDictClass) and clashes.bases == []  # an override would not type-check
    assert {f.key: f.annotation for f in clashes.fields} == {"id": "str"}
    requires = declarations.fields("Requires")
    assert requires is not None and requires["id"].required and not requires["x"].required
    assert set(declarations.fields("Loop") or {}) == {"n"}


def test_names_never_take_a_reserved_or_typing_name() -> None:
    defs = {"Any": OBJ, "None": OBJ, "TypedDict": OBJ, "GetPet": OBJ, "Literal": {"type": "string"}}
    declarations, source = _module(defs, reserved=("GetPet",))
    names = [d.name for d in declarations.items]
    assert not set(names) & (TYPING_NAMES | {"GetPet", "None"}) and len(set(names)) == len(names)
    ast.parse(source)


# ------------------------------------------------------------------ any schema (hypothesis)
KEYS = st.one_of(
    st.sampled_from(["id", "name", "class", "from", "__x", "str", "Any", "a-b", "2fa", "é", "", '"""', "\\", "v"]),
    st.text(max_size=6),
)
POOL = ["D0", "D1", "D2"]
ENUMS = st.lists(st.one_of(st.text(max_size=5), st.integers(), st.none()), max_size=3)
REQUIRED = st.lists(KEYS, max_size=2)


def _schemas() -> st.SearchStrategy[Any]:
    leaves = st.one_of(
        st.sampled_from([{"type": t} for t in ("string", "integer", "number", "boolean", "null")]),
        st.just({}),
        st.builds(
            lambda v: {"enum": v}, st.lists(st.one_of(st.text(max_size=5), st.integers(), st.none()), max_size=3)
        ),
        st.sampled_from([{"$ref": f"#/$defs/{n}"} for n in POOL] + [{"$ref": "#/$defs/Nope"}]),
    )

    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        props = st.dictionaries(KEYS, children, max_size=4)
        return st.one_of(
            st.builds(
                lambda p, r: {"type": "object", "properties": p, "required": r}, props, st.lists(KEYS, max_size=2)
            ),
            st.builds(lambda i: {"type": "array", "items": i}, children),
            st.builds(lambda a: {"anyOf": a}, st.lists(children, min_size=1, max_size=3)),
            st.builds(lambda a: {"oneOf": a}, st.lists(children, min_size=1, max_size=3)),
            st.builds(lambda a: {"allOf": a}, st.lists(children, min_size=1, max_size=3)),
            st.builds(lambda v: {"type": "object", "additionalProperties": v}, children),
            st.builds(lambda v: {**v, "nullable": True} if isinstance(v, dict) else v, children),
        )

    return st.recursive(leaves, extend, max_leaves=12)


def _defined(tree: ast.Module) -> set[str]:
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            out.update(a.asname or a.name for a in node.names)
    return out


def _uses(tree: ast.Module) -> list[ast.AST]:
    """The expressions that name types: bases, annotations and assigned values (not the keys)."""
    out: list[ast.AST] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out += [*node.bases, *(k.value for k in node.keywords)]
            out += [s.annotation for s in node.body if isinstance(s, ast.AnnAssign)]
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            out.append(node.value)
    return out


def _keys(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.ClassDef):
        return [s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    assert isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
    table = node.value.args[1]
    assert isinstance(table, ast.Dict)
    return [ast.literal_eval(k) for k in table.keys if k is not None]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.fixed_dictionaries({n: _schemas() for n in POOL}))
def test_any_schema_gives_a_closed_declaration_only_module_that_keeps_every_key(defs: dict[str, Any]) -> None:
    declarations, source = _module(defs)
    tree = ast.parse(source)
    for node in tree.body:  # only declarations: the functional form is the one call
        assert isinstance(node, ast.ImportFrom | ast.ClassDef | ast.Assign | ast.AnnAssign)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name) and node.func.id == "TypedDict"
        assert not isinstance(node, ast.Lambda | ast.Attribute | ast.Await | ast.Import | ast.FunctionDef)
    used = {n.id for part in _uses(tree) for n in ast.walk(part) if isinstance(n, ast.Name)}
    assert used <= _defined(tree) | set(dir(builtins)), used - _defined(tree)
    by_name = {d.name: d for d in declarations.items}
    for node in tree.body:
        declaration = by_name.get(_defined_name(node))
        if isinstance(declaration, TypedDictClass):  # each key once, spelled as in the schema
            assert _keys(node) == [f.key for f in declaration.fields]
    for name, schema in defs.items():  # a plain object def keeps every property, required as said
        if isinstance(schema, dict) and schema.get("properties") and "allOf" not in schema:
            fields = declarations.fields(declarations.names[name]) or {}
            assert set(fields) == set(schema["properties"])
            assert {k for k, f in fields.items() if f.required} == set(schema["required"]) & set(schema["properties"])
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            assert all(k.isidentifier() and not keyword.iskeyword(k) for k in _keys(node))


def _defined_name(node: ast.stmt) -> str:
    if isinstance(node, ast.ClassDef):
        return node.name
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return ""


def test_mypy_accepts_every_declaration_the_table_writes(tmp_path: Path) -> None:
    defs = _table_defs()
    defs["Extends"] = {"allOf": [{"$ref": "#/$defs/Shared"}, {"properties": {"b": {"type": "string"}}}]}
    defs["Keys"] = {"type": "object", "properties": {k: {"type": "string"} for k in ["a-b", "class", "__x", "str"]}}
    _, source = _module(defs)
    (tmp_path / "stubs.pyi").write_text(source, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "stubs.pyi"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=MYPY_TIMEOUT,
    )
    assert done.returncode == 0, done.stdout
