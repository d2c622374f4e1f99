"""``api.pyi``: the operations as typed async Python functions, for code mode.

One ``async def <tool>(*, <arguments>) -> <Tool>Output`` per operation, whose keyword arguments
and result are ``TypedDict``s made by datamodel-code-generator from the schemas the tools
advertise (shared shapes hoisted once, generator/shape/hoist.py). The result type is
the response body a program receives (the tool's ``{"result": ...}`` wrapper and ``_truncated``
note are the tool surface's, not the data's).

Spec text cannot become code here: descriptions are removed before datamodel-code-generator sees
the schemas, its output is parsed and only declarations are kept (re-rendered with
``ast.unparse``, which quotes every string itself), and tool descriptions reach docstrings only
through :func:`generator.emit.pytext.docstring`. A schema the library cannot type makes that
operation's arguments and result ``dict[str, Any]`` / ``Any``, with a warning.
"""

from __future__ import annotations

import ast
import logging
import math
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from bridge.contract.catalogue import ToolEntry
from bridge.contract.listing import listing, paging_note
from bridge.contract.result_shape import MARKER_KEY
from bridge.contract.stubs import PRELUDE_STUBS, argument_map, function_names
from bridge.contract.trim_fields import WRAP_KEY
from generator.emit.pytext import docstring
from generator.shape.hoist import class_name, hoisted_document

__all__ = ["STUBS_HEADER", "body_schema", "render_stubs", "stubs_with_warnings"]

logger = logging.getLogger("generator.stubs")

STUBS_HEADER = (
    '"""Typed stubs of the API for code mode (mcp-bridge serve --mode code); generated, do not edit."""\n\n'
    "from __future__ import annotations\n"
)
_DROPPED_KEYS = frozenset({"description", "examples", "example", "$comment", "deprecated"})

Warn = Callable[[str], None]


def _strip(node: Any, memo: dict[int, tuple[Any, Any]] | None = None) -> Any:
    """``node`` without descriptions and examples; a dict shared by several tools stays one
    (stripped) dict, so what follows sees the sharing (``memo``: id -> (node, stripped), the node
    kept alive so that its id is not reused)."""
    if memo is None:
        memo = {}
    if isinstance(node, list):
        return [_strip(v, memo) for v in node]
    if not isinstance(node, dict):
        return node
    done = memo.get(id(node))
    if done is not None:
        return done[1]
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _strip(sub, memo) for name, sub in value.items()}
        elif key not in _DROPPED_KEYS:
            out[key] = _strip(value, memo)
    memo[id(node)] = (node, out)
    return out


def body_schema(entry: ToolEntry) -> dict[str, Any] | None:
    """The schema of the response data a program gets, from the tool's output schema."""
    schema = entry.output_schema
    if schema is None:
        return None
    properties = dict(schema.get("properties") or {})
    properties.pop(MARKER_KEY, None)
    if entry.binding.wrap_output:
        inner = properties.get(WRAP_KEY)
        if not isinstance(inner, dict):
            return None
        out = dict(inner)
        if "$defs" in schema:
            out["$defs"] = schema["$defs"]
        return out
    return {**schema, "properties": properties}


def _input_schema(entry: ToolEntry) -> dict[str, Any]:
    schema = dict(entry.input_schema)
    fields_arg = entry.binding.fields_arg
    if fields_arg and isinstance(schema.get("properties"), dict):
        schema["properties"] = {k: v for k, v in schema["properties"].items() if k != fields_arg}
        schema["required"] = [r for r in schema.get("required", ()) if r != fields_arg]
    return schema


def _class_bases(entries: Sequence[ToolEntry], functions: Mapping[str, str]) -> dict[str, str]:
    """Tool name -> the unique CamelCase stem of its ``<Stem>Input``/``<Stem>Output`` types."""
    bases: dict[str, str] = {}
    taken: set[str] = set()
    for entry in entries:
        base = class_name(functions[entry.name], "Tool")
        stem, n = base, 2
        while stem in taken:
            stem, n = f"{base}{n}", n + 1
        taken.add(stem)
        bases[entry.name] = stem
    return bases


def _wire_tools(entries: Sequence[ToolEntry], bases: Mapping[str, str]) -> list[dict[str, Any]]:
    tools = []
    memo: dict[int, tuple[Any, Any]] = {}  # the catalogue's entries share schema dicts
    for entry in entries:
        tool: dict[str, Any] = {"name": bases[entry.name], "inputSchema": _strip(_input_schema(entry), memo)}
        body = body_schema(entry)
        if body is not None:
            tool["outputSchema"] = _strip(body, memo)
        tools.append(tool)
    return tools


def _typed_dicts(tools: list[dict[str, Any]]) -> list[ast.stmt]:
    """datamodel-code-generator's TypedDict declarations for ``tools``; raises on any failure."""
    import datamodel_code_generator as dmcg  # slow to import: only when stubs are made

    source = dmcg.generate(
        hoisted_document(tools),
        input_file_type=dmcg.InputFileType.JsonSchema,
        output_model_type=dmcg.DataModelType.TypingTypedDict,
        formatters=[],
        disable_timestamp=True,
        custom_file_header="",
        use_field_description=False,
        target_python_version=dmcg.PythonVersion.PY_311,
    )
    if not isinstance(source, str):
        raise TypeError("datamodel-code-generator split the stubs into several modules")
    return [node for node in ast.parse(source).body if _is_declaration(node)]


def _is_declaration(node: ast.stmt) -> bool:
    """Imports, TypedDict classes and type aliases only: anything else is not kept."""
    if isinstance(node, ast.ImportFrom):
        return node.module in {"typing", "typing_extensions", "__future__"}
    if isinstance(node, ast.ClassDef):
        return all(isinstance(s, ast.AnnAssign | ast.Pass) or _is_text(s) for s in node.body)
    if isinstance(node, ast.Assign | ast.AnnAssign):
        value = node.value
        return value is not None and not any(
            isinstance(n, ast.Lambda | ast.Await | ast.NamedExpr | ast.Attribute) for n in ast.walk(value)
        )
    return False


def _is_text(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _declarations(tools: list[dict[str, Any]], warn: Warn) -> tuple[list[ast.stmt], set[str]]:
    """The declarations, and the tools whose schemas could not be typed (they get ``Any``)."""
    with _quiet():
        try:
            return _typed_dicts(tools), set()
        except Exception:  # the library's failures have no common type: find the tools that cause them
            failures = _failing(tools)
        for name, exc in failures.items():
            warn(f"{name}: no typed stub ({_reason(exc)}); its arguments are dict[str, Any]")
        good = [tool for tool in tools if tool["name"] not in failures]
        try:
            return (_typed_dicts(good) if good else []), set(failures)
        except Exception as exc:  # only the combination fails: nothing is typed rather than nothing written
            warn(f"no typed stub for any function ({_reason(exc)}); all arguments are dict[str, Any]")
            return [], {tool["name"] for tool in tools}


def _failing(tools: list[dict[str, Any]]) -> dict[str, Exception]:
    """The tools the library fails on by themselves, each tried alone.

    Halving looks cheaper but is not: the library's failures (a recursion through shared shapes)
    come late in a run, so a failing half costs about a whole run, and on a 500-operation spec with
    9 such tools halving took 131 s and 3.1 GB against 58 s and 1.1 GB for one run per tool.
    """
    failures: dict[str, Exception] = {}
    for tool in tools:
        try:
            _typed_dicts([tool])
        except Exception as exc:
            failures[tool["name"]] = exc
    return failures


def _reason(exc: Exception) -> str:
    first = " ".join(str(exc).split())[:120]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


@contextmanager
def _quiet() -> Iterator[None]:
    """datamodel-code-generator warns (duplicate field names, unknown formats) through warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _fields(node: ast.stmt | None, classes: Mapping[str, ast.stmt]) -> dict[str, tuple[str, bool]] | None:
    """Field name -> (annotation, required) of a TypedDict declaration (class or functional form)."""
    if isinstance(node, ast.ClassDef):
        out: dict[str, tuple[str, bool]] = {}
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id != "TypedDict":
                out.update(_fields(classes.get(base.id), classes) or {})
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                out[stmt.target.id] = _required(stmt.annotation)
        return out
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.value.args) >= 2:
        table = node.value.args[1]
        if isinstance(table, ast.Dict):
            return {
                key.value: _required(value)
                for key, value in zip(table.keys, table.values, strict=True)
                if isinstance(key, ast.Constant) and isinstance(key.value, str)
            }
    return None


def _required(annotation: ast.expr) -> tuple[str, bool]:
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name):
        if annotation.value.id == "NotRequired":
            return ast.unparse(annotation.slice), False
        if annotation.value.id == "Required":
            return ast.unparse(annotation.slice), True
    return ast.unparse(annotation), True


def _default(schema: Any) -> str:
    """A schema default as a Python literal (``repr``: spec text stays a string), else ``...``."""
    value = schema.get("default") if isinstance(schema, dict) else None
    if isinstance(value, float) and not math.isfinite(value):
        return "..."  # YAML's .inf and .nan have no literal
    if isinstance(value, bool | int | float) or (isinstance(value, str) and len(value) <= 80):
        return repr(value)
    return "..."


def _hints(entry: ToolEntry) -> str:
    a = entry.annotations
    kind = "read-only" if a.readOnlyHint else ("destructive" if a.destructiveHint else "writes")
    return f"{entry.operation} ({kind}{', idempotent' if a.idempotentHint and not a.readOnlyHint else ''})"


def _function(entry: ToolEntry, name: str, base: str, declarations: Mapping[str, ast.stmt], typed: bool) -> str:
    names = argument_map(entry.input_schema, [entry.binding.fields_arg] if entry.binding.fields_arg else [])
    fields = _fields(declarations.get(base + "Input"), declarations) if typed else None
    properties = entry.input_schema.get("properties") or {}
    required = set(entry.input_schema.get("required") or ())
    params: list[str] = []
    optional: list[str] = []
    for py, arg in names.items():
        annotation = fields[arg][0] if fields is not None and arg in fields else "Any"
        if arg in required:
            params.append(f"{py}: {annotation}")
        else:
            optional.append(f"{py}: {annotation} = {_default(properties.get(arg))}")
    signature = ", ".join(["*", *params, *optional]) if names else ""
    output = base + "Output" if typed and base + "Output" in declarations else "Any"
    text = entry.title or ""
    description = entry.description.strip()
    if description and not description.startswith(text):
        text = f"{text}\n\n{description}" if text else description
    elif description:
        text = description
    renamed = [f"`{py}` is the argument `{arg}`." for py, arg in names.items() if py != arg]
    python = {arg: py for py, arg in names.items()}
    paging = paging_note([python.get(a, a) for a in entry.binding.page_args], body_schema(entry))
    pages = f"Pages: {paging}." if paging else ""
    doc = "\n\n".join(part for part in (text, _hints(entry), pages, " ".join(renamed)) if part)
    return f"async def {name}({signature}) -> {output}:\n    {docstring(doc, '    ')}\n"


def render_stubs(
    entries: Iterable[ToolEntry], warn: Warn | None = None, *, functions: Mapping[str, str] | None = None
) -> str:
    """The source of ``api.pyi`` for ``entries`` (deterministic).

    ``functions`` maps tool names to Python function names (:func:`bridge.contract.stubs.function_names`
    of the whole API, so that stubs of a few operations name them as the API's stubs do).
    """
    entries = list(entries)
    warn = warn or logger.warning
    functions = functions or {tool: py for py, tool in function_names(e.name for e in entries).items()}
    bases = _class_bases(entries, functions)
    by_base = {bases[e.name]: e.name for e in entries}

    def warn_tool(note: str) -> None:
        stem, _, rest = note.partition(":")
        warn(f"{by_base.get(stem, stem)}:{rest}")

    nodes, untyped_bases = _declarations(_wire_tools(entries, bases), warn_tool) if entries else ([], set())
    untyped = {by_base[b] for b in untyped_bases}
    imported: dict[str, set[str]] = {"typing": {"Any"}}
    for n in nodes:
        if isinstance(n, ast.ImportFrom) and n.module and n.module != "__future__":
            imported.setdefault(n.module, set()).update(a.name for a in n.names)
    imports = [f"from {module} import {', '.join(sorted(names))}" for module, names in sorted(imported.items())]
    body = [n for n in nodes if not isinstance(n, ast.ImportFrom)]
    declarations = {name: n for n in body for name in _names(n)}
    parts = [STUBS_HEADER + "\n".join(imports), PRELUDE_STUBS.rstrip("\n")]
    pages = {bases[e.name] + "Output" for e in entries if e.name not in untyped and _is_page(e)}
    parts += [ast.unparse(_open_page(_total_false(n), pages)) for n in body]
    parts += [
        _function(e, functions[e.name], bases[e.name], declarations, e.name not in untyped).rstrip("\n")
        for e in entries
    ]
    return "\n\n".join(parts) + "\n"


def _is_page(entry: ToolEntry) -> bool:
    """Whether the result is a listing's envelope (``{"data": [...], ...}``), not a bare array."""
    found = listing(body_schema(entry))
    return found is not None and bool(found.items)


def _open_page(node: ast.stmt, pages: set[str]) -> ast.stmt:
    """A page's TypedDict also takes keys the spec does not declare, typed ``Any``
    (``extra_items=Any``, PEP 728): envelopes carry paging fields their specs leave out (Asana's
    ``next_page``), and a program reading one should not fail to type-check. Item types stay exact."""
    if (
        not isinstance(node, ast.ClassDef)
        or node.name not in pages
        or any(k.arg == "extra_items" for k in node.keywords)
    ):
        return node
    keywords = [*node.keywords, ast.keyword(arg="extra_items", value=ast.Name("Any"))]
    return ast.ClassDef(name=node.name, bases=node.bases, keywords=keywords, body=node.body, decorator_list=[])


def _total_false(node: ast.stmt) -> ast.stmt:
    """A TypedDict class whose own keys are all ``NotRequired[...]`` as ``total=False`` with bare types.

    The same type to a checker, and about three tokens less per key for the model reading the stub
    (response shapes are mostly optional keys: GitHub's issue has forty).
    """
    if not isinstance(node, ast.ClassDef) or any(k.arg == "total" for k in node.keywords):
        return node
    fields = [stmt for stmt in node.body if isinstance(stmt, ast.AnnAssign)]
    if not fields or not all(_not_required(f.annotation) for f in fields):
        return node
    body: list[ast.stmt] = []
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.annotation, ast.Subscript):
            stmt = ast.AnnAssign(target=stmt.target, annotation=stmt.annotation.slice, value=stmt.value, simple=1)
        body.append(stmt)
    keywords = [*node.keywords, ast.keyword(arg="total", value=ast.Constant(False))]
    return ast.ClassDef(name=node.name, bases=node.bases, keywords=keywords, body=body, decorator_list=[])


def _not_required(annotation: ast.expr) -> bool:
    return (
        isinstance(annotation, ast.Subscript)
        and isinstance(annotation.value, ast.Name)
        and annotation.value.id == "NotRequired"
    )


def stubs_with_warnings(entries: Sequence[ToolEntry]) -> tuple[str, list[str]]:
    """:func:`render_stubs`, its warnings returned (it may run in another process)."""
    warnings_: list[str] = []
    return render_stubs(entries, warnings_.append), warnings_


def _names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []
