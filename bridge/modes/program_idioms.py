"""Python idioms the sandbox runs differently from CPython: rewritten to what it runs, or refused early.

Monty (pydantic-monty 1.4) builds a generator expression as a list, so ``next(x for x in xs if
...)`` fails with "'list' object is not an iterator", and so do ``next(zip(...))``,
``next(enumerate(...))`` and ``next(reversed(...))``. :func:`rewrite` wraps every generator
expression, and the argument of ``next`` when it is one of those calls, in ``iter(...)``, which
Monty runs as CPython runs the original: a one-shot iterator (``sum``, ``any``, ``sorted``,
``str.join``, ``dict``, ``asyncio.gather(*...)``, ``for`` and ``in`` all take it). The edits are
made in the source text at the expressions' own positions, so line numbers in diagnostics stay
the program's. What Monty cannot run at all is refused before anything runs (:func:`refusals`:
generator functions), and a name the type checker does not know gets a hint
(:func:`unknown_name_hints`): the closest operation names and a pointer to search, or what to
use instead of a builtin the sandbox leaves out.

The program is parsed with the standard ``ast`` (top-level ``await`` allowed); a program it
cannot parse is left alone, for the sandbox to report its syntax error.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterable

__all__ = ["AVAILABLE_MODULES", "MISSING_BUILTINS", "prepare", "refusals", "rewrite", "unknown_name_hints"]

_ONE_SHOT = frozenset({"zip", "enumerate", "reversed", "map", "filter"})
# Builtins the sandbox does not have, and what to write instead.
MISSING_BUILTINS = {
    "open": "the sandbox has no files; the API functions are the only way out",
    "input": "a program cannot ask for input; return what you have",
    "eval": "not available; write the expression itself",
    "exec": "not available; write the code itself",
    "compile": "not available",
    "__import__": "use an import statement",
    "globals": "not available",
    "locals": "not available",
    "vars": "not available; use a dict",
    "help": "not available; search_operations describes the API",
}
AVAILABLE_MODULES = ("asyncio", "json", "re", "math", "datetime", "time", "itertools", "functools", "collections")
_UNKNOWN_NAME = re.compile(r"Name `([A-Za-z_][A-Za-z0-9_]*)` used when not defined")
_UNKNOWN_MODULE = re.compile(r"Cannot resolve imported module `([A-Za-z_][A-Za-z0-9_.]*)`")
_CLOSE = 3


def _parse(code: str) -> ast.Module | None:
    try:
        tree = compile(code, "program.py", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return tree if isinstance(tree, ast.Module) else None


def _wrapped(tree: ast.AST) -> tuple[list[ast.expr], set[int]]:
    """The expressions to wrap in ``iter(...)``, and (by ``id``) the generator expressions that are
    a call's only argument, whose span is the call's parentheses: ``sum(x for x in xs)``."""
    found: list[ast.expr] = []
    shared: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.GeneratorExp):
            found.append(node)
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            arg = node.args[0]
            if isinstance(arg, ast.GeneratorExp) and (arg.end_lineno, arg.end_col_offset) == (
                node.end_lineno,
                node.end_col_offset,
            ):
                shared.add(id(arg))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "next"
            and node.args
            and isinstance(first := node.args[0], ast.Call)
            and isinstance(first.func, ast.Name)
            and first.func.id in _ONE_SHOT
        ):
            found.append(first)
    return found, shared


def prepare(code: str) -> tuple[str, list[str]]:
    """``code`` as the sandbox should run it, and what it cannot run (each with what to write
    instead; empty: nothing). One parse, linear in the program's length."""
    tree = _parse(code)
    if tree is None:
        return code, []
    return _rewritten(code, tree), _refused(tree)


def rewrite(code: str) -> str:
    """``code`` with generator expressions (and ``next``'s one-shot arguments) made iterators."""
    return prepare(code)[0]


def refusals(code: str) -> list[str]:
    """What the sandbox cannot run in ``code``, each with what to write instead (empty: nothing)."""
    return prepare(code)[1]


def _rewritten(code: str, tree: ast.Module) -> str:
    targets, shared = _wrapped(tree)
    if not targets:
        return code
    lines = code.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    encoded: dict[int, bytes] = {}

    def offset(line: int, column: int) -> int:
        # ast columns count UTF-8 bytes
        raw = encoded.setdefault(line, lines[line - 1].encode("utf-8"))
        return starts[line - 1] + len(raw[:column].decode("utf-8", errors="ignore"))

    inserts: list[tuple[int, int, str]] = []  # (offset, order, text): at one offset, closers first
    for node in targets:
        if node.end_lineno is None or node.end_col_offset is None:
            continue
        inside = 1 if id(node) in shared else 0  # within the call's own parentheses
        inserts.append((offset(node.lineno, node.col_offset) + inside, 1, "iter("))
        inserts.append((offset(node.end_lineno, node.end_col_offset) - inside, 0, ")"))
    pieces: list[str] = []
    done = 0
    for position, _, text in sorted(inserts):
        pieces += [code[done:position], text]
        done = position
    pieces.append(code[done:])
    return "".join(pieces)


def _refused(tree: ast.Module) -> list[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Yield | ast.YieldFrom):
            return [
                f"line {node.lineno}: generator functions (`yield`) do not run in the sandbox; "
                "build a list and return it, or use a generator expression"
            ]
    return []


def unknown_name_hints(diagnostic: str, functions: Iterable[str], search_tool: str) -> list[str]:
    """Hints for the names and modules a type-check ``diagnostic`` says are not defined."""
    hints: list[str] = []
    names = list(dict.fromkeys(_UNKNOWN_NAME.findall(diagnostic)))[:5]
    known = sorted(set(functions))
    for name in names:
        if name in MISSING_BUILTINS:
            hints.append(f"`{name}` is not in the sandbox: {MISSING_BUILTINS[name]}.")
            continue
        close = difflib.get_close_matches(name, known, n=_CLOSE, cutoff=0.6)
        if not close:
            lowered = {k.lower(): k for k in known}
            close = [lowered[k] for k in difflib.get_close_matches(name.lower(), list(lowered), n=_CLOSE, cutoff=0.5)]
        suggestion = f" Did you mean {', '.join(close)}?" if close else ""
        hints.append(f"`{name}` is not an API function.{suggestion} {search_tool} finds operations by words.")
    for module in list(dict.fromkeys(_UNKNOWN_MODULE.findall(diagnostic)))[:3]:
        hints.append(f"Module `{module}` is not in the sandbox; it has {', '.join(AVAILABLE_MODULES)}.")
    return hints
