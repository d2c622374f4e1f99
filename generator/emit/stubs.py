"""``api.pyi``: the operations as typed async Python functions, for code mode.

One ``async def <tool>(*, <arguments>) -> <Tool>Output`` per operation, whose keyword arguments
and result are ``TypedDict``s of the schemas the tools advertise (shared shapes hoisted once,
generator/shape/hoist.py; declarations written by generator/emit/typed_dicts.py). The result type
is the response body a program receives (the tool's ``{"result": ...}`` wrapper and ``_truncated``
note are the tool surface's, not the data's).

Spec text cannot become code here: descriptions and examples are removed before the schemas are
typed, typed_dicts.py writes names, keys and literals only in forms that stay names and strings,
and tool descriptions reach docstrings only through :func:`generator.emit.pytext.docstring`. A tool
whose schemas cannot be typed (a bug, or a schema nested too deep to walk) gets ``dict[str, Any]``
/ ``Any``, with a warning.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from bridge.contract.catalogue import ToolEntry
from bridge.contract.listing import listing, paging_note
from bridge.contract.result_shape import MARKER_KEY
from bridge.contract.stubs import GENERATED_MARK, PRELUDE_STUBS, argument_map, function_names
from bridge.contract.trim_fields import WRAP_KEY
from generator.emit.pytext import docstring
from generator.emit.typed_dicts import TYPING_NAMES, Declarations, TypedDictClass, typed_dicts
from generator.shape.hoist import class_name, hoisted_document

__all__ = ["STUBS_HEADER", "body_schema", "render_stubs", "stubs_with_warnings"]

logger = logging.getLogger("generator.stubs")

# The first line is how the runtime knows a module as generated (bridge/contract/stubs.py splits it by lines).
STUBS_HEADER = GENERATED_MARK + "\n\nfrom __future__ import annotations\n"
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


def _typed_dicts(tools: list[dict[str, Any]], reserved: frozenset[str] = frozenset()) -> Declarations:
    """The TypedDict declarations for ``tools``; raises only on a bug (or a schema too deep to walk)."""
    document = hoisted_document(tools)
    inputs = [class_name(tool["name"], "Tool") + "Input" for tool in tools]
    return typed_dicts(document["$defs"], reserved=reserved, classes=inputs)


def _declarations(tools: list[dict[str, Any]], warn: Warn, reserved: frozenset[str]) -> tuple[Declarations, set[str]]:
    """The declarations, and the tools whose schemas could not be typed (they get ``Any``)."""
    try:
        return _typed_dicts(tools, reserved), set()
    except Exception:  # a bug must cost the tools that cause it, not the package: find them
        failures = _failing(tools, reserved)
    for name, exc in failures.items():
        warn(f"{name}: no typed stub ({_reason(exc)}); its arguments are dict[str, Any]")
    good = [tool for tool in tools if tool["name"] not in failures]
    try:
        return (_typed_dicts(good, reserved) if good else Declarations([], {})), set(failures)
    except Exception as exc:  # only the combination fails: nothing is typed rather than nothing written
        warn(f"no typed stub for any function ({_reason(exc)}); all arguments are dict[str, Any]")
        return Declarations([], {}), {tool["name"] for tool in tools}


def _failing(tools: list[dict[str, Any]], reserved: frozenset[str]) -> dict[str, Exception]:
    """The tools that fail by themselves, each tried alone."""
    failures: dict[str, Exception] = {}
    for tool in tools:
        try:
            _typed_dicts([tool], reserved)
        except Exception as exc:
            failures[tool["name"]] = exc
    return failures


def _reason(exc: Exception) -> str:
    first = " ".join(str(exc).split())[:120]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


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


def _function(entry: ToolEntry, name: str, base: str, declarations: Declarations, typed: bool) -> str:
    names = argument_map(entry.input_schema, [entry.binding.fields_arg] if entry.binding.fields_arg else [])
    fields = declarations.fields(declarations.names.get(base + "Input", "")) if typed else None
    properties = entry.input_schema.get("properties") or {}
    required = set(entry.input_schema.get("required") or ())
    params: list[str] = []
    optional: list[str] = []
    for py, arg in names.items():
        annotation = fields[arg].annotation if fields is not None and arg in fields else "Any"
        if arg in required:
            params.append(f"{py}: {annotation}")
        else:
            optional.append(f"{py}: {annotation} = {_default(properties.get(arg))}")
    signature = ", ".join(["*", *params, *optional]) if names else ""
    output = declarations.names.get(base + "Output", "Any") if typed else "Any"
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

    reserved = frozenset(functions.values())
    declarations, untyped_bases = (
        _declarations(_wire_tools(entries, bases), warn_tool, reserved) if entries else (Declarations([], {}), set())
    )
    untyped = {by_base[b] for b in untyped_bases}
    for e in entries:
        page = declarations.get(declarations.names.get(bases[e.name] + "Output", ""))
        if e.name not in untyped and isinstance(page, TypedDictClass) and _is_page(e):
            page.extra_items = "Any"
    classes = [d.render() for d in declarations.items]
    parts = [STUBS_HEADER + _imports("\n".join(classes)), PRELUDE_STUBS.rstrip("\n"), *classes]
    parts += [
        _function(e, functions[e.name], bases[e.name], declarations, e.name not in untyped).rstrip("\n")
        for e in entries
    ]
    return "\n\n".join(parts) + "\n"


def _imports(declarations: str) -> str:
    """The typing names the declarations use (``Any`` always: the functions use it); ``TypedDict``
    from typing_extensions, which has PEP 728's ``closed`` and ``extra_items``."""
    used = sorted({"Any"} | {n for n in TYPING_NAMES - {"TypedDict"} if re.search(rf"\b{n}\b", declarations)})
    lines = [f"from typing import {', '.join(used)}"]
    if re.search(r"\bTypedDict\b", declarations):
        lines.append("from typing_extensions import TypedDict")
    return "\n".join(lines)


def _is_page(entry: ToolEntry) -> bool:
    """Whether the result is a listing's envelope (``{"data": [...], ...}``), not a bare array."""
    found = listing(body_schema(entry))
    return found is not None and bool(found.items)


def stubs_with_warnings(entries: Sequence[ToolEntry]) -> tuple[str, list[str]]:
    """:func:`render_stubs`, its warnings returned (it may run in another process)."""
    warnings_: list[str] = []
    return render_stubs(entries, warnings_.append), warnings_
