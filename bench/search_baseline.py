"""The discovery ranking before bridge/modes/search.py (integration branch at 7e93e6e), kept verbatim in
substance so bench/search_bench.py can compare old and new in one run on the same catalogue.

Each query word scores the best field weight it hits (a prefix hit at half weight) times a smoothed
idf; an exact name or ``METHOD /path`` scores infinity. Not used by the bridge.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from bridge.contract.catalogue import ToolEntry

_WEIGHTS = {"name": 3.0, "summary": 2.0, "tags": 2.0, "path": 1.5, "description": 1.0}
_PREFIX_FACTOR = 0.5
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD = re.compile(r"[a-z0-9]+")


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(_CAMEL.sub(" ", text).lower())]


class BaselineIndex:
    def __init__(self, entries: Iterable[ToolEntry]) -> None:
        self._docs: list[tuple[str, str, dict[str, frozenset[str]]]] = []
        for entry in entries:
            self._docs.append(
                (
                    entry.name,
                    entry.operation,
                    {
                        "name": frozenset(words(entry.name)),
                        "summary": frozenset(words(entry.title or "")),
                        "tags": frozenset(w for tag in entry.tags for w in words(tag)),
                        "path": frozenset(words(entry.operation)),
                        "description": frozenset(words(entry.description)),
                    },
                )
            )
        frequency: Counter[str] = Counter()
        for _, _, fields in self._docs:
            frequency.update(set().union(*fields.values()))
        count = max(len(self._docs), 1)
        self._idf = {word: math.log(1 + count / n) for word, n in frequency.items()}

    def _score(
        self, name: str, operation: str, fields: dict[str, frozenset[str]], query: Sequence[str], exact: str
    ) -> float:
        if exact and (name.lower() == exact or operation.lower() == exact):
            return math.inf
        score = 0.0
        for word in query:
            best = 0.0
            for field, weight in _WEIGHTS.items():
                present = fields[field]
                if word in present:
                    best = max(best, weight)
                elif len(word) >= 3 and any(w.startswith(word) for w in present):
                    best = max(best, weight * _PREFIX_FACTOR)
            score += best * self._idf.get(word, math.log(1 + len(self._docs)))
        return score

    def rank(self, query: str, limit: int = 10) -> list[str]:
        terms = list(dict.fromkeys(words(query)))
        exact = " ".join(query.split()).lower()
        scored = [
            (self._score(name, operation, fields, terms, exact), position, name)
            for position, (name, operation, fields) in enumerate(self._docs)
        ]
        return [name for score, _, name in sorted(scored, key=lambda s: (-s[0], s[1])) if score > 0][:limit]
