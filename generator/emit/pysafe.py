"""Spec text in generated Python: only as string literals, never as code.

:func:`py_str` is the one way the templates put a spec-derived string into Python source: a
literal that reads back as the same string and is one token, whatever the text holds (quotes,
backslashes, newlines, NUL, U+2028, lone surrogates). api.pyi has its own guard (generator/emit/typed_dicts.py
writes names, keys and literals only in forms that stay names and strings).
"""

from __future__ import annotations

import ast
import io
import tokenize

__all__ = ["UnsafeSourceError", "py_str"]


class UnsafeSourceError(ValueError):
    """A text cannot be written as one Python string literal."""


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
