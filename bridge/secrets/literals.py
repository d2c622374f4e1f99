"""Many literal strings looked for in a text at once: the spellings redaction searches.

A few literals are plain substring searches (``in`` and ``str.find``, one fast C search each).
Many of them (a server that exchanged tokens for hundreds of users redacts every one) would cost
one search each, or a regular expression that tries every alternative at every position, so the
time would grow with their number: there an Aho-Corasick automaton (``pyahocorasick``, loaded
only then) finds them all in one pass. It holds a fixed-length key of each literal (its first
characters: memory grows with the number of literals, not with their length) and every hit is
confirmed with ``str.startswith``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["FEW", "KEY_CHARS", "Literals"]

FEW = 32
"""Up to this many keys, substring searches; beyond, the automaton."""
KEY_CHARS = 12


class Literals:
    """An immutable set of literals: :meth:`any_in` a text, and where in it (:meth:`find_all`)."""

    __slots__ = ("_automaton", "_keys", "literals")

    def __init__(self, literals: Iterable[str]) -> None:
        self.literals = tuple(sorted({lit for lit in literals if lit}, key=len, reverse=True))
        by_key: dict[str, list[str]] = {}
        for literal in self.literals:
            by_key.setdefault(literal[:KEY_CHARS], []).append(literal)
        self._keys = tuple(sorted(by_key))
        self._automaton: Any = None
        if len(by_key) > FEW:
            import ahocorasick

            automaton = ahocorasick.Automaton()
            for key, group in by_key.items():
                automaton.add_word(key, (len(key), tuple(group)))
            automaton.make_automaton()
            self._automaton = automaton

    def __bool__(self) -> bool:
        return bool(self.literals)

    def any_in(self, text: str) -> bool:
        """Whether the text may hold a literal (one of their keys is in it)."""
        if self._automaton is None:
            return any(key in text for key in self._keys)
        return next(self._automaton.iter(text), None) is not None

    def find_all(self, text: str) -> list[tuple[int, int]]:
        """The span of every occurrence of every literal, overlapping ones included."""
        spans: list[tuple[int, int]] = []
        if self._automaton is None:
            for literal in self.literals:
                at = text.find(literal)
                while at >= 0:
                    spans.append((at, at + len(literal)))
                    at = text.find(literal, at + 1)
            return spans
        for end, (size, group) in self._automaton.iter(text):
            start = end - size + 1
            spans.extend((start, start + len(literal)) for literal in group if text.startswith(literal, start))
        return spans
