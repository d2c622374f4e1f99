"""Spec text inside generated Python source: one escaping rule, so no text can become code.

Generated modules take spec text in two forms: string literals (``repr``, see render.py's
``pyrepr``) and docstrings, which a reader wants to read as prose. :func:`docstring` makes the
latter: every backslash and double quote is escaped, so the text can neither close the
triple-quoted literal nor start an escape sequence, and control characters are spelled as
escapes so the literal stays on the lines it appears to be on.
"""

from __future__ import annotations

__all__ = ["docstring"]


def _escape(char: str) -> str:
    if char in '\\"':
        return "\\" + char
    if char == "\n":
        return char
    if char == "\t":
        return "    "
    if not char.isprintable() or char in "\u2028\u2029\x85":
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else (f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return char


def docstring(text: str, indent: str = "") -> str:
    """``text`` as a triple-quoted literal whose value is ``text`` (tabs become spaces).

    Lines after the first are indented by ``indent``; a literal that evaluates back to the text
    (minus that indentation) is what the golden and property tests check.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if '"' in text or "\\" in text or "\t" in text or not text.replace("\n", "").isprintable():
        body = "".join(_escape(c) for c in text)
    else:  # nothing _escape would change (isprintable is False for U+2028, U+2029 and U+0085 too)
        body = text
    lines = body.split("\n")
    joined = "\n".join(indent + line.rstrip() if line.strip() else "" for line in lines)
    return f'"""{joined[len(indent) :] if lines[0].strip() else joined}"""'
