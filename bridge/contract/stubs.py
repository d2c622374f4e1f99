"""Typed stubs of an API for code mode: Python names of arguments, and per-program stub subsets.

A package's ``api.pyi`` (generator/emit/stubs.py) declares one ``async def`` per operation, keyword
arguments typed by ``TypedDict``s. The type checker is given only what a program uses: the
functions it names and the definitions those reach (:meth:`StubIndex.subset`), which keeps the
check in milliseconds on an API of a thousand operations.

Argument names of the catalogue are JSON property names; the few that are not Python
identifiers (``X-Request-ID``, ``from``) get one (:func:`python_names`), and host functions map
them back before calling the operation.
"""

from __future__ import annotations

import ast
import keyword
import re
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

__all__ = [
    "GENERATED_MARK",
    "PRELUDE",
    "PRELUDE_STUBS",
    "STUBS_FILE",
    "StubIndex",
    "argument_map",
    "function_names",
    "python_name",
    "python_names",
]

STUBS_FILE = "api.pyi"
_NOT_IDENT = re.compile(r"[^A-Za-z0-9_]")

# Monty has no class inheritance, so an API error is the built-in OSError under another name and
# its HTTP status travels at the start of its message ("HTTP 404: ..."), read by api_status.
# map and filter: Monty has neither; these return lists, which a program iterates as it would
# Python's iterators (bridge/modes/program_idioms.py makes ``next(map(...))`` work too).
PRELUDE = """ApiError = OSError
def api_status(error):
    text = str(error)
    if text.startswith("HTTP ") and text[5:8].isdigit():
        return int(text[5:8])
    return None
def map(function, iterable, *iterables):
    return [function(*items) for items in zip(iterable, *iterables)]
def filter(function, iterable):
    return [item for item in iterable if (item if function is None else function(item))]
"""
PRELUDE_STUBS = '''ApiError = OSError
"""Raised by an API function: the call failed (an HTTP error status, bad arguments, a timeout)."""

def api_status(error: BaseException) -> int | None:
    """The HTTP status of an ApiError (None when the call failed without an HTTP answer)."""

from typing import Callable as _Callable, Iterable as _Iterable

def map(function: _Callable[..., Any], iterable: _Iterable[Any], /, *iterables: _Iterable[Any]) -> list[Any]:
    """Python's map, as a list."""

def filter(function: _Callable[[Any], object] | None, iterable: _Iterable[Any], /) -> list[Any]:
    """Python's filter, as a list."""
'''
PRELUDE_NAMES = frozenset({"ApiError", "api_status", "map", "filter"})
# The builtin types are the stubs' annotations: a function named ``list`` would make ``list[str]`` mean it.
_PROGRAM_NAMES = frozenset(
    {"asyncio", "json", "re", "math", "datetime", "print", "len", "range", "Any", "iter", "next", "zip", "sorted"}
    | {"list", "dict", "str", "int", "float", "bool"}
)


def python_name(name: str) -> str:
    """A Python identifier for an argument name: other characters become ``_``, keywords get one appended.

    ASCII only: Python folds other identifiers (NFKC), so two distinct names could meet.
    """
    text = _NOT_IDENT.sub("_", name) or "_"
    if text[0].isdigit():
        text = "_" + text
    reserved = keyword.iskeyword(text) or (keyword.issoftkeyword(text) and text != "_")
    return text + "_" if reserved else text


def python_names(arguments: Iterable[str], reserved: Iterable[str] = ()) -> dict[str, str]:
    """Python name -> argument name, unique (a clash gets ``_2``, ``_3``...), in argument order."""
    out: dict[str, str] = {}
    taken = set(reserved)
    for argument in arguments:
        base = python_name(argument)
        name, n = base, 2
        while name in out or name in taken:
            name, n = f"{base}_{n}", n + 1
        out[name] = argument
    return out


def function_names(tool_names: Iterable[str]) -> dict[str, str]:
    """Python function name -> tool name, for every tool of an API in catalogue order.

    The prelude's names and the modules a program imports are never an operation's.
    """
    return python_names(tool_names, reserved=PRELUDE_NAMES | _PROGRAM_NAMES)


@dataclass(slots=True)
class _Definition:
    """One top-level statement: its source, and (parsed on first use) the names it uses."""

    source: str
    defines: tuple[str, ...]
    _uses: frozenset[str] | None = None

    @property
    def uses(self) -> frozenset[str]:
        if self._uses is None:  # two threads may both parse it: the same answer, no lock needed
            self._uses = _uses_of(self.source, self.defines)
        return self._uses


def _uses_of(source: str, defines: tuple[str, ...]) -> frozenset[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:  # not one statement after all: every identifier, a superset
        return frozenset(_IDENTIFIER.findall(source)) - set(defines)
    return frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name)) - set(defines)


# A generated stub module (it opens with the generator's line) puts every top-level statement at a
# line's first column and indents every other line of it (docstrings too: generator/emit/pytext.py),
# so its statements are found by their first lines alone, without parsing 27 MB of Microsoft Graph's
# stubs (25 s) for the few functions one search or program names.
GENERATED_MARK = '"""Typed stubs of the API for code mode (mcp-bridge serve --mode code); generated, do not edit."""'
_STATEMENT = re.compile(r"\n(?=[^ \t\n])")
_HEAD = re.compile(r"(?:async\s+def|def|class)\s+([A-Za-z_]\w*)|([A-Za-z_]\w*)\s*[:=]")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


@dataclass(slots=True)
class StubIndex:
    """The top-level definitions of a stub module by name, with the names each one uses."""

    header: str
    definitions: dict[str, _Definition]
    order: dict[str, int]
    _cache: dict[tuple[frozenset[str], bool], str] = field(default_factory=dict)

    @classmethod
    def parse(cls, source: str) -> StubIndex:
        """The index of a stub module: a generated one split at its statements' first lines (each
        parsed only when its uses are asked for), any other parsed whole."""
        if source.startswith(GENERATED_MARK):
            found = cls._split(source)
            if found is not None:
                return found
        return cls._parse_whole(source)

    @classmethod
    def _split(cls, source: str) -> StubIndex | None:
        """The statements of a generated module by their first lines; None on a line it does not know."""
        header: list[str] = []
        definitions: dict[str, _Definition] = {}
        order: dict[str, int] = {}
        starts = [0, *(m.end() for m in _STATEMENT.finditer(source)), len(source)]
        for position, (start, end) in enumerate(pairwise(starts)):
            text = source[start:end].rstrip("\n")
            if text.startswith(("from ", "import ")):
                header.append(text)
                continue
            if text.startswith(('"""', "#")):  # the module's docstrings and comments define nothing
                continue
            head = _HEAD.match(text)
            if head is None:
                return None
            name = head.group(1) or head.group(2)
            definitions[name] = _Definition(text, (name,))
            order[name] = position
        return cls("\n".join(header), definitions, order)

    @classmethod
    def _parse_whole(cls, source: str) -> StubIndex:
        tree = ast.parse(source)
        # Whole lines of each top-level statement (ast.get_source_segment splits the source on
        # every call: minutes on GitHub's stubs).
        lines = source.splitlines(keepends=True)
        header: list[str] = []
        definitions: dict[str, _Definition] = {}
        order: dict[str, int] = {}
        for position, node in enumerate(tree.body):
            end = node.end_lineno or node.lineno
            text = "".join(lines[node.lineno - 1 : end]).rstrip("\n")
            if isinstance(node, ast.ImportFrom | ast.Import):
                header.append(text)
                continue
            names = _defined(node)
            if not names:
                continue
            uses = frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name)) - set(names)
            for name in names:
                definitions[name] = _Definition(text, tuple(names), uses)
                order[name] = position
        return cls("\n".join(header), definitions, order)

    def __contains__(self, name: object) -> bool:
        return name in self.definitions

    def closure(self, names: Iterable[str]) -> list[str]:
        """``names`` and every definition they reach, in module order."""
        seen: set[str] = set()
        todo = [n for n in names if n in self.definitions]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            todo.extend(u for u in self.definitions[name].uses if u in self.definitions and u not in seen)
        return sorted(seen, key=lambda n: self.order[n])

    def subset(self, names: Iterable[str], *, module: bool = True) -> str:
        """A stub module with just ``names`` (functions) and what their signatures use.

        ``module=False``: the definitions alone, without the imports and the prelude, for the model
        to read (it knows ``typing``, and the run tools' descriptions say what ``ApiError`` is).
        """
        key = (frozenset(names), module)
        cached = self._cache.get(key)
        if cached is None:
            parts: list[str] = [self.header, PRELUDE_STUBS] if module else []
            done: set[int] = set()
            for name in self.closure(key[0]):
                if name in PRELUDE_NAMES or id(self.definitions[name]) in done:
                    continue
                done.add(id(self.definitions[name]))
                parts.append(self.definitions[name].source)
            cached = "\n\n".join(parts) + "\n"
            if len(self._cache) < 256:
                self._cache[key] = cached
        return cached

    def bounded_subset(self, names: Iterable[str], max_chars: int) -> tuple[str, list[str]]:
        """:meth:`subset` (``module=False``) cut to about ``max_chars``: the functions, then the
        types they use nearest first (breadth-first), while they fit; and the names left out.

        The functions themselves are always kept. A big API's one operation can reach hundreds of
        TypedDicts (an e-signature envelope's recipients, their tabs, forty kinds of tab); the
        model asks for a left-out one by name.
        """
        wanted = [n for n in dict.fromkeys(names) if n in self.definitions]
        full = self.subset(wanted, module=False)
        if len(full) <= max_chars:
            return full, []
        reachable = self.closure(wanted)
        picked: dict[str, None] = dict.fromkeys(wanted)
        used = sum(len(self.definitions[n].source) + 2 for n in wanted)
        queue = deque(wanted)
        seen = set(wanted)
        while queue:
            name = queue.popleft()
            for use in sorted(self.definitions[name].uses, key=lambda n: self.order.get(n, 0)):
                if use in seen or use not in self.definitions or use in PRELUDE_NAMES:
                    continue
                seen.add(use)
                cost = len(self.definitions[use].source) + 2
                if used + cost <= max_chars:
                    picked[use] = None
                    used += cost
                    queue.append(use)
        sources: list[str] = []
        done: set[int] = set()
        for name in sorted(picked, key=lambda n: self.order[n]):
            if id(self.definitions[name]) not in done:
                done.add(id(self.definitions[name]))
                sources.append(self.definitions[name].source)
        omitted = [n for n in reachable if n not in picked and n not in PRELUDE_NAMES]
        return "\n\n".join(sources) + "\n", omitted

    def function(self, name: str) -> str | None:
        definition = self.definitions.get(name)
        return definition.source if definition is not None else None

    def signature(self, name: str) -> str | None:
        """``async def name(*, ...) -> T`` without its docstring."""
        source = self.function(name)
        if source is None:
            return None
        if not source.startswith("async def "):
            return None
        header = source.split("\n", 1)[0]
        return header.removesuffix(":") if header.endswith(":") else None


def bounded_stubs(index: StubIndex, names: Iterable[str], max_chars: int, ask: str) -> str:
    """:meth:`StubIndex.bounded_subset` as text for the model: the types left out are named, with
    ``ask`` (how to get one of them)."""
    text, omitted = index.bounded_subset(names, max_chars)
    if not omitted:
        return text
    listed = ", ".join(omitted[:60]) + (f" and {len(omitted) - 60} more" if len(omitted) > 60 else "")
    return f"{text}\n# Not shown, to stay within the result budget: {listed}.\n# {ask} shows one of them.\n"


def _defined(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def argument_map(input_schema: Mapping[str, Any], skip: Iterable[str] = ()) -> dict[str, str]:
    """Python name -> argument name for one tool's arguments (``skip``: e.g. its ``fields`` argument)."""
    properties = input_schema.get("properties")
    left_out = set(skip)
    names = [str(p) for p in properties if p not in left_out] if isinstance(properties, dict) else []
    return python_names(names)
