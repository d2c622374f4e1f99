"""Spec text in generated Python: only as string literals, never as code.

Two guards. :func:`py_str` is the one way the templates put a spec-derived string into Python
source: a literal that reads back as the same string and is one token, whatever the text holds
(quotes, backslashes, newlines, NUL, U+2028, lone surrogates). :func:`check_models_source` reads
the models datamodel-code-generator wrote (which we do not control character by character) and
refuses any statement or expression outside the small shapes pydantic models need, so a string
that escaped its literal there would be refused rather than imported.
"""

from __future__ import annotations

import ast
import io
import tokenize

__all__ = ["UnsafeSourceError", "check_models_source", "py_str"]


class UnsafeSourceError(ValueError):
    """Generated source holds something other than the expected model definitions."""


def py_str(value: object) -> str:
    """``value`` as a Python string literal (``repr`` escapes every non-printable character)."""
    text = str(value)
    literal = repr(text)
    # repr is correct by its contract; this checks it, since a mistake here would be code execution.
    if ast.literal_eval(literal) != text or len(_tokens(literal)) != 1:
        raise UnsafeSourceError(f"cannot write {text[:40]!r} as one string literal")
    return literal


def _tokens(source: str) -> list[tokenize.TokenInfo]:
    skip = {tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.ENCODING}
    return [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in skip]


# What a models module may contain ------------------------------------------------------------

_IMPORTS = {"__future__", "typing", "typing_extensions", "pydantic", "enum", "datetime", "decimal", "uuid", "ipaddress"}
# Callables the models call at import: pydantic's field and type constructors, nothing else.
_CALLS = {
    "Field",
    "ConfigDict",
    "conint",
    "confloat",
    "constr",
    "conlist",
    "conset",
    "condecimal",
    "conbytes",
    "condate",
    "AwareDatetime",
}
_TYPING_LITERAL = "Literal"
_EXPR_NODES = (
    ast.Constant,
    ast.Name,
    ast.Attribute,
    ast.Subscript,
    ast.Tuple,
    ast.List,
    ast.Dict,
    ast.Set,
    ast.BinOp,
    ast.UnaryOp,
    ast.Call,
    ast.keyword,
    ast.Load,
    ast.BitOr,
    ast.USub,
    ast.UAdd,
)


def check_models_source(source: str) -> None:
    """Raise :class:`UnsafeSourceError` unless ``source`` is only imports and plain model classes."""
    try:
        module = ast.parse(source)
    except SyntaxError as exc:
        raise UnsafeSourceError(f"not valid Python (line {exc.lineno})") from None
    for node in module.body:
        if isinstance(node, ast.ImportFrom):
            if node.level or (node.module or "").split(".")[0] not in _IMPORTS:
                raise UnsafeSourceError(f"line {node.lineno}: unexpected import")
        elif isinstance(node, ast.ClassDef):
            _check_class(node)
        elif isinstance(node, ast.Expr) and _is_rebuild(node.value):
            continue  # Model.model_rebuild(): resolves forward references, runs no spec text
        else:
            raise UnsafeSourceError(f"line {node.lineno}: unexpected {type(node).__name__} statement")


def _is_rebuild(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and not node.args
        and not node.keywords
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "model_rebuild"
        and isinstance(node.func.value, ast.Name)
    )


def _check_class(node: ast.ClassDef) -> None:
    if node.decorator_list or node.keywords:
        raise UnsafeSourceError(f"line {node.lineno}: decorated class")
    for base in node.bases:
        _check_expr(base, annotation=True)
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            _check_expr(stmt.annotation, annotation=True)
            if stmt.value is not None:
                _check_expr(stmt.value, annotation=False)
        elif isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
            _check_expr(stmt.value, annotation=False)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            continue  # a docstring: a constant, whatever it says
        elif isinstance(stmt, ast.Pass):
            continue
        else:
            raise UnsafeSourceError(f"line {stmt.lineno}: unexpected {type(stmt).__name__} in a model class")


def _check_expr(node: ast.AST, *, annotation: bool) -> None:
    """Only constants, names and calls of pydantic constructors; strings in annotations only as values.

    With ``from __future__ import annotations`` pydantic evaluates annotations as code, so a bare
    string there would be evaluated: it may only appear under ``Literal[...]`` or as an argument.
    """
    if not isinstance(node, _EXPR_NODES):
        raise UnsafeSourceError(f"line {getattr(node, 'lineno', '?')}: unexpected {type(node).__name__}")
    if isinstance(node, ast.Constant):
        if annotation and isinstance(node.value, str):
            raise UnsafeSourceError(f"line {node.lineno}: a string where a type is expected")
        return
    if isinstance(node, ast.Call):
        if not (isinstance(node.func, ast.Name) and node.func.id in _CALLS):
            raise UnsafeSourceError(f"line {node.lineno}: unexpected call")
        for arg in node.args:
            _check_expr(arg, annotation=False)
        for keyword in node.keywords:
            if keyword.arg is None:
                raise UnsafeSourceError(f"line {node.lineno}: unexpected **arguments")
            _check_expr(keyword.value, annotation=False)
        return
    if isinstance(node, ast.Subscript):
        _check_expr(node.value, annotation=annotation)
        literal = isinstance(node.value, ast.Name) and node.value.id == _TYPING_LITERAL
        _check_expr(node.slice, annotation=annotation and not literal)
        return
    if isinstance(node, ast.Attribute):
        if node.attr.startswith("__"):
            raise UnsafeSourceError(f"line {node.lineno}: unexpected dunder attribute")
        _check_expr(node.value, annotation=annotation)
        return
    if isinstance(node, ast.Name):
        if node.id.startswith("__"):
            raise UnsafeSourceError(f"line {node.lineno}: unexpected dunder name")
        return
    if isinstance(node, ast.Dict) and any(key is None for key in node.keys):
        raise UnsafeSourceError(f"line {node.lineno}: unexpected ** in a dict")
    for child in ast.iter_child_nodes(node):
        _check_expr(child, annotation=annotation)
