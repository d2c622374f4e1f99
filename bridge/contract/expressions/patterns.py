"""``pattern`` / ``patternProperties`` matching in time linear in the value.

A spec's pattern is ECMA-262 and the value comes from the model (or the upstream), so neither is
trusted: Python's backtracking ``re`` took 3.4 s on a 27-character value for
``^[a-zA-Z0-9]+([._-]?[a-zA-Z0-9]+)*$``, four times more for every two more characters, and
about 60 bytes of memory per character of a long base64 value. Patterns are matched by the Rust
``regex`` crate behind ``jsonschema_rs`` (already a dependency), whose finite automata match in
time linear in the value and memory bounded by the pattern.

Constructs that engine refuses (lookaround, backreferences) go to ``fancy-regex`` with a
backtracking budget (:data:`BACKTRACK_LIMIT` steps, about a millisecond): when the budget runs
out, or neither engine compiles the pattern, the pattern is not enforced (the value passes, and
it is logged once). Python's ``re`` never sees a spec's pattern.

Semantics are ECMA-262's (``jsonschema_rs`` translates the pattern), not Python's: ``\\d``,
``\\w`` and ``\\b`` are ASCII-only, ``\\s`` includes U+FEFF, ``\\p{L}`` and ``\\u{1F600}`` work,
``$`` matches only at the very end (Python's also before a final newline), and ``.`` never
matches a line terminator. ECMA spellings the Rust engines do not read are respelled first
(:func:`ecma_spellings`: a literal ``{``, ``[^]``, ``\\0``, ``[\\b]``).
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["BACKTRACK_LIMIT", "MAX_CACHED_PATTERNS", "Pattern", "compiled_pattern"]

logger = logging.getLogger("bridge.validation")

BACKTRACK_LIMIT = 100_000
"""Backtracking steps a lookaround/backreference pattern may take on one value (~1 ms)."""

MAX_CACHED_PATTERNS = 4096
"""Distinct patterns kept compiled; the cache starts over when full (a spec has a few hundred)."""


@functools.cache
def _engines() -> tuple[Any, Any, Any, Any]:
    """(module, linear options, budgeted options, out-of-budget error kind), imported on first use.

    The native module costs ~6 MB of RSS: a server whose schemas have no pattern never loads it.
    """
    import jsonschema_rs

    return (
        jsonschema_rs,
        jsonschema_rs.RegexOptions(),
        jsonschema_rs.FancyRegexOptions(backtrack_limit=BACKTRACK_LIMIT),
        jsonschema_rs.ValidationErrorKind.BacktrackLimitExceeded,
    )


@dataclass(frozen=True, slots=True)
class Pattern:
    """One compiled ECMA-262 pattern; ``search`` says whether it matches anywhere in a string."""

    source: str
    engine: str  # "linear", "backtracking" (budgeted) or "none" (not enforced)
    _matcher: Any

    def search(self, text: str) -> bool | None:
        """True or False; None when the answer is unknown (not compiled, or over the budget)."""
        if self._matcher is None:
            return None
        if self._matcher.is_valid(text):
            return True
        if self.engine == "linear":
            return False
        # A miss of the budgeted engine is either "no match" or "gave up": only the error says which.
        for error in self._matcher.iter_errors(text):
            if isinstance(error.kind, _engines()[3]):
                _log_once(self.source, "ran out of its backtracking budget")
                return None
        return False

    def rejects(self, text: str) -> bool:
        """The pattern is known not to match ``text`` (unknown answers never reject)."""
        return self.search(text) is False

    def accepts(self, text: str) -> bool:
        """The pattern matches ``text``, or its answer is unknown (an unenforced pattern admits)."""
        return self.search(text) is not False


_CACHE: dict[str, Pattern] = {}
_LOGGED: set[str] = set()


def _log_once(source: str, what: str) -> None:
    if len(_LOGGED) < MAX_CACHED_PATTERNS and source not in _LOGGED:
        _LOGGED.add(source)
        logger.warning("pattern %r %s; it is not enforced for that value", source[:200], what)


def _build(source: str, options: Any) -> Any:
    module = _engines()[0]
    try:
        return module.Draft202012Validator({"type": "string", "pattern": source}, pattern_options=options)
    except (module.ValidationError, ValueError):
        return None


_QUANTIFIER = re.compile(r"\{\d+(?:,\d*)?\}")


def ecma_spellings(source: str) -> str:
    """``source`` with the ECMA-262 (Annex B) spellings the Rust engines refuse written their way.

    A ``{`` or ``}`` that is not part of a ``{n}``, ``{n,}``, ``{n,m}`` quantifier is a literal;
    ``[^]`` is any character; ``\\0`` is NUL; ``[\\b]`` is backspace.
    """
    out: list[str] = []
    i, n, in_class = 0, len(source), False
    while i < n:
        c = source[i]
        if c == "\\" and i + 1 < n:
            escaped = source[i + 1]
            if escaped == "0" and not source[i + 2 : i + 3].isdigit():
                out.append("\\x00")
            elif escaped == "b" and in_class:
                out.append("\\x08")
            else:
                out.append(source[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            out.append("\\[" if c == "[" else c)  # a nested class in Rust, a literal in ECMA
        elif source.startswith("[^]", i):
            out.append("[\\s\\S]")
            i += 2
        elif c == "[":
            in_class = True
            out.append(c)
        elif c == "{" and (m := _QUANTIFIER.match(source, i)) and out:
            out.append(m.group())
            i = m.end() - 1
        elif c in "{}":
            out.append("\\" + c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _compile(source: str) -> tuple[str, Any]:
    _, linear, bounded, _ = _engines()
    for spelling in dict.fromkeys((source, ecma_spellings(source))):
        for engine, options in (("linear", linear), ("backtracking", bounded)):
            matcher = _build(spelling, options)
            if matcher is not None:
                return engine, matcher
    return "none", None


def compiled_pattern(source: str) -> Pattern:
    """The cached :class:`Pattern` for ``source`` (compiled on first use)."""
    found = _CACHE.get(source)
    if found is not None:
        return found
    engine, matcher = _compile(source)
    if matcher is None:
        _log_once(source, "is not an ECMA-262 regular expression the bridge can run")
    if len(_CACHE) >= MAX_CACHED_PATTERNS:
        _CACHE.clear()
    pattern = _CACHE[source] = Pattern(source, engine, matcher)
    return pattern
