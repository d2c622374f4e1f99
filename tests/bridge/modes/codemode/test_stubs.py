"""api.pyi: typed, deterministic, and safe for any spec text (property tests)."""

from __future__ import annotations

import ast
import dataclasses
import keyword
import logging
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge.contract.catalogue import HttpBinding, ToolAnnotationsSpec, ToolEntry
from bridge.contract.stubs import StubIndex, python_name, python_names
from generator.emit import stubs as stubs_module
from generator.emit.pytext import docstring
from generator.emit.stubs import render_stubs

READ = ToolAnnotationsSpec(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=True)
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)
# Texts made to break out of a docstring or a string literal.
NASTY = st.sampled_from(['"""', "'''", "\\", '"""\nimport os\n"""', '\\"""', '"', "\r\n", "\x00", "\u2028", "\t"])
SPEC_TEXT = st.lists(st.one_of(TEXT, NASTY), max_size=4).map("".join)


def _normal(text: str) -> str:
    return " ".join(text.replace("\t", " ").split())


def entry(name: str = "op", *, description: str = "d", properties: dict[str, Any] | None = None) -> ToolEntry:
    properties = properties if properties is not None else {"id": {"type": "integer"}}
    return ToolEntry(
        name=name,
        description=description,
        input_schema={"type": "object", "properties": properties, "required": list(properties)[:1]},
        output_schema={"type": "object", "properties": {"name": {"type": "string", "description": description}}},
        annotations=READ,
        binding=HttpBinding(method="get", path="/x"),
    )


DEFAULTS = st.one_of(
    SPEC_TEXT, st.integers(), st.floats(), st.booleans(), st.none(), st.lists(st.integers(), max_size=2)
)


@settings(max_examples=30, deadline=None)
@given(DEFAULTS)
def test_any_default_is_a_literal_or_an_ellipsis(default: Any) -> None:
    from generator.emit.stubs import _default

    text = _default({"default": default})
    if text != "...":
        assert ast.literal_eval(text) == default or default != default  # NaN is never equal


@given(SPEC_TEXT)
def test_docstring_evaluates_back_to_the_text_and_nothing_else(text: str) -> None:
    literal = docstring(text, "    ")
    tree = ast.parse("def f():\n    " + literal + "\n")
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef) and len(function.body) == 1
    value = ast.literal_eval(literal)
    assert _normal(value) == _normal(text.replace("\r", "\n"))


def test_docstrings_fast_path_skips_only_characters_the_escape_keeps() -> None:
    # docstring() skips the per-character escape for printable text without quote, backslash or tab.
    from generator.emit.pytext import _escape

    changed = [c for c in map(chr, range(0x110000)) if c not in '\\"\n\t' and c.isprintable() and _escape(c) != c]
    assert changed == []


def _only_declarations(tree: ast.Module) -> None:
    for node in tree.body:
        kinds = ast.ImportFrom | ast.ClassDef | ast.Assign | ast.AnnAssign | ast.AsyncFunctionDef | ast.FunctionDef
        assert isinstance(node, kinds | ast.Expr)
        if isinstance(node, ast.Expr):
            assert isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            assert len(node.body) == 1 and isinstance(node.body[0], ast.Expr)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):  # only the functional TypedDict form
            assert isinstance(node.func, ast.Name) and node.func.id == "TypedDict"
        assert not isinstance(node, ast.Lambda | ast.Await | ast.Attribute | ast.Import)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(description=SPEC_TEXT, argument=SPEC_TEXT, enum=SPEC_TEXT, default=SPEC_TEXT)
def test_spec_text_never_becomes_code_in_api_pyi(description: str, argument: str, enum: str, default: str) -> None:
    properties = {
        "id": {"type": "integer", "description": description},
        argument or "x": {"type": "string", "enum": [enum, "b"], "default": default, "description": description},
    }
    source = render_stubs([entry(description=description, properties=properties)], lambda note: None)
    tree = ast.parse(source)
    _only_declarations(tree)
    function = next(n for n in tree.body if isinstance(n, ast.AsyncFunctionDef))
    assert function.name == "op"
    assert len(function.body) == 1  # the docstring, nothing else
    doc = ast.get_docstring(function, clean=False) or ""
    assert _normal(description.replace("\r", "\n")) in _normal(doc)
    assert [a.arg for a in function.args.kwonlyargs] == list(python_names(properties))


def test_an_operation_named_like_a_builtin_type_does_not_shadow_it() -> None:
    ids = {"ids": {"type": "array", "items": {"type": "string"}}}
    tools = [entry(name, properties=ids) for name in ("list", "str")]
    index = StubIndex.parse(render_stubs(tools))
    assert index.signature("list_2") == "async def list_2(*, ids: list[str]) -> List2Output"
    assert index.signature("str_2") == "async def str_2(*, ids: list[str]) -> Str2Output"


def test_stubs_are_deterministic() -> None:
    entries = [entry("b"), entry("a", description="second")]
    assert render_stubs(entries) == render_stubs(entries)


NAMES = [
    ("petId", "petId"),
    ("X-Request-ID", "X_Request_ID"),
    ("api-version", "api_version"),
    ("from", "from_"),
    ("class", "class_"),
    ("match", "match_"),
    ("2fa", "_2fa"),
    ("", "_"),
    ("é", "_"),
    ("x¹", "x_"),
]


@pytest.mark.parametrize(("argument", "expected"), NAMES)
def test_argument_names_become_python_identifiers(argument: str, expected: str) -> None:
    name = python_name(argument)
    assert name == expected
    assert name.isidentifier() and not keyword.iskeyword(name)


@given(st.lists(TEXT, max_size=8, unique=True))
def test_python_names_are_unique_identifiers_and_map_back(arguments: list[str]) -> None:
    names = python_names(arguments)
    assert sorted(names.values()) == sorted(arguments)
    assert all(n.isidentifier() and not keyword.iskeyword(n) for n in names)


def test_an_untypeable_schema_is_any_with_a_warning(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The emitter degrades odd schemas to Any itself (never raises on one); a failure is injected.
    real = stubs_module._typed_dicts

    def failing(tools: list[dict[str, Any]], reserved: frozenset[str]) -> Any:
        if any(tool["name"] == "Broken" for tool in tools):
            raise ValueError("cannot type this")
        return real(tools, reserved)

    monkeypatch.setattr(stubs_module, "_typed_dicts", failing)
    broken = entry("broken", properties={"id": {"type": "integer"}, "x": {"type": "string"}})
    notes: list[str] = []
    source = render_stubs([entry("fine"), broken], notes.append)
    index = StubIndex.parse(source)
    assert index.signature("broken") == "async def broken(*, id: Any, x: Any = ...) -> Any"
    assert index.signature("fine") == "async def fine(*, id: int) -> FineOutput"
    assert notes and "broken" in notes[0]
    with caplog.at_level(logging.WARNING):
        assert "broken" in render_stubs([broken])


def test_a_failure_only_the_whole_api_has_leaves_every_stub_untyped_not_the_generate_failed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = stubs_module._typed_dicts

    def failing_together(tools: list[dict[str, Any]], reserved: frozenset[str]) -> Any:
        if len(tools) > 2:
            raise ValueError("inheritance cycle")
        return real(tools, reserved)

    monkeypatch.setattr(stubs_module, "_typed_dicts", failing_together)
    notes: list[str] = []
    index = StubIndex.parse(render_stubs([entry(f"op{i}") for i in range(4)], notes.append))
    assert [n for n in notes if "any function" in n] == [
        "no typed stub for any function (ValueError: inheritance cycle); all arguments are dict[str, Any]"
    ]
    assert all(index.signature(f"op{i}") == f"async def op{i}(*, id: Any) -> Any" for i in range(4))


def _required_keys(cls: ast.ClassDef) -> set[str]:
    total = not any(
        k.arg == "total" and isinstance(k.value, ast.Constant) and k.value.value is False for k in cls.keywords
    )
    keys = set()
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            wrapped = isinstance(stmt.annotation, ast.Subscript) and ast.unparse(stmt.annotation.value) == "NotRequired"
            if total and not wrapped:
                keys.add(stmt.target.id)
    return keys


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), min_size=1, unique=True), st.data())
def test_a_result_typed_dict_requires_exactly_the_schemas_required_keys(keys: list[str], data: st.DataObject) -> None:
    required = data.draw(st.lists(st.sampled_from(keys), unique=True))
    tool = ToolEntry(
        name="op",
        description="d",
        input_schema={"type": "object", "properties": {}},
        output_schema={"type": "object", "properties": {k: {"type": "integer"} for k in keys}, "required": required},
        annotations=READ,
        binding=HttpBinding(method="get", path="/x"),
    )
    source = render_stubs([tool])
    (cls,) = [n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "OpOutput"]
    assert _required_keys(cls) == set(required)
    if not required:  # all keys optional: said once for the class, not once per key
        assert "NotRequired" not in ast.unparse(cls)


def test_a_subset_holds_only_what_the_functions_use() -> None:
    nested = {"type": "object", "properties": {"deep": {"type": "object", "properties": {"v": {"type": "integer"}}}}}
    source = render_stubs([entry("one", properties={"a": nested}), entry("two", properties={"b": {"type": "string"}})])
    index = StubIndex.parse(source)
    subset = index.subset(["one"])
    tree = ast.parse(subset)
    functions = [n.name for n in tree.body if isinstance(n, ast.AsyncFunctionDef)]
    assert functions == ["one"]
    assert "TwoInput" not in subset and "class OneOutput" in subset and "ApiError" in subset


def _golden_indexes() -> list[StubIndex]:
    from tests.golden import GENERATED_DIR

    return [StubIndex.parse(p.read_text(encoding="utf-8")) for p in sorted(GENERATED_DIR.glob("*/api.pyi"))]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_a_subset_is_closed_every_name_it_uses_is_defined_in_it(data: st.DataObject) -> None:
    index = data.draw(st.sampled_from(_golden_indexes()))
    functions = [n for n, d in index.definitions.items() if d.source.startswith("async def ")]
    chosen = data.draw(st.lists(st.sampled_from(functions), unique=True, max_size=4))
    subset = ast.parse(index.subset(chosen))
    defined = {t for node in subset.body for t in _targets(node)}
    used = {n.id for n in ast.walk(subset) if isinstance(n, ast.Name)}
    assert (used & set(index.definitions)) <= defined
    assert {n.name for n in subset.body if isinstance(n, ast.AsyncFunctionDef)} == set(chosen)


def _targets(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    if isinstance(node, ast.ImportFrom):
        return [a.asname or a.name for a in node.names]
    return []


def test_paging_is_in_the_stub_even_when_nothing_could_be_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stubs_module, "_typed_dicts", lambda tools, reserved: (_ for _ in ()).throw(ValueError("no")))
    page = {
        "type": "object",
        "properties": {
            "data": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}}},
            "has_more": {"type": "boolean"},
        },
    }
    listing = ToolEntry(
        name="list_charges",
        description="List charges.",
        input_schema={"type": "object", "properties": {"limit": {"type": "integer"}, "starting-after": {}}},
        output_schema=page,
        annotations=READ,
        binding=HttpBinding(method="get", path="/charges", page_args=("limit", "starting-after")),
    )
    index = StubIndex.parse(render_stubs([listing], lambda note: None))
    signature = "async def list_charges(*, limit: Any = ..., starting_after: Any = ...) -> Any"
    assert index.signature("list_charges") == signature
    source = index.function("list_charges") or ""
    # the Python names a program passes, and the field that says there is more
    assert "Pages: arguments limit, starting_after; next page: has_more." in source


def _tabbed(name: str) -> ToolEntry:
    """A tool whose compacted schema keeps its repeated shapes in its own `$defs`, one of them recursive."""
    tab = {"type": "object", "properties": {"x": {"type": "integer"}, "label": {"type": "string"}}}
    recipient = {
        "type": "object",
        "properties": {"tabs": {"type": "array", "items": {"$ref": "#/$defs/Tab"}}, "signer": {"$ref": "#/$defs/Tab"}},
    }
    node = {
        "type": "object",
        "properties": {"value": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
    }
    schema = {
        "type": "object",
        "properties": {
            "recipients": {"type": "array", "items": {"$ref": "#/$defs/Recipient"}},
            "cc": {"$ref": "#/$defs/Recipient"},
            "tree": {"$ref": "#/$defs/Node"},
        },
        "$defs": {"Tab": tab, "Recipient": recipient, "Node": node},
    }
    return dataclasses.replace(entry(name), input_schema=schema)


def test_shapes_in_each_tools_own_defs_become_one_class_for_the_whole_api() -> None:
    source = render_stubs([_tabbed(f"op{i}") for i in range(30)])
    classes = [n.name for n in ast.parse(source).body if isinstance(n, ast.ClassDef)]
    # One Tab and one Recipient for thirty tools (they were once numbered Tab, Tab2, ... Tab30).
    assert len([c for c in classes if c.startswith("Tab")]) == 1
    assert len([c for c in classes if c.startswith("Recipient")]) == 1
    index = StubIndex.parse(source)
    subset = index.subset(["op7"])
    assert "class Op7Input" in subset and "recipients" in subset and "children" in subset
