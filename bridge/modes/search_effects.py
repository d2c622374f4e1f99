"""What an operation does against what a query asks: the last word on search's order.

Search (bridge/modes/search.py) ranks by words and fit; this moves back, stably, the operations the
query does not ask for, reading what each does from the catalogue's annotations (the generator's one
decision, generator/parse/annotations.py), so search agrees with ``--read-only``, run_query and
``--confirm``:

- For a read query (list, show, get, find, which, how many), a write that is not named as a read
  goes after every other match ("list my running instances" is not ``RunInstances``), and a
  read-only operation comes just before its twin that is not (``GET_DescribeInstances`` before
  ``POST_DescribeInstances``).
- For a write query, a read-only operation goes after the writes, unless it says the query's verb.
- A destructive operation (a DELETE, or one named with a destructive verb: terminate, revoke,
  purge...) is never first unless the query names a destructive verb or the operation says the
  query's own verb ("cancel a subscription": DELETE "Cancel a subscription"). A PUT overwrites, but
  it is what "rename a project" means: it is not held back.
"""

from __future__ import annotations

from collections.abc import Sequence

from bridge.contract.vocabulary.verbs import DESTRUCTIVE
from bridge.modes.search_intent import READ_INTENTS, READ_KINDS, VERBS, WRITE_INTENTS, Request, Traits
from bridge.modes.search_words import raw_words, spelt

__all__ = ["Effects"]

_MAX_WORDS = 64
_METHOD_WORDS = frozenset(spelt(word) for word in "get head options post put patch delete trace".split())
# The verbs that make a destructive operation something the query asks for (spelt as the index spells).
_DESTROYING = frozenset(spelt(word) for word in DESTRUCTIVE) | frozenset(
    word for word, intent in VERBS.items() if intent == "delete"
)


class Effects:
    """Per entry (by position): whether it is read-only, whether it destroys, its twin's key."""

    def __init__(
        self, traits: Sequence[Traits], *, reads: Sequence[bool], destroys: Sequence[bool], deletes: Sequence[bool]
    ) -> None:
        self._traits = tuple(traits)
        self._reads = tuple(reads)
        # Dangerous, not merely overwriting (a PUT is destructive too): a DELETE, or one saying a destructive verb.
        self._destroys = tuple(
            destroy and (delete or bool(trait.said & _DESTROYING))
            for destroy, delete, trait in zip(destroys, deletes, self._traits, strict=True)
        )
        self._twin = tuple(trait.said - _METHOD_WORDS for trait in self._traits)

    def _asked(self, position: int, request: Request) -> bool:
        """Whether the operation says the verb the query opens with."""
        return request.leading is not None and request.leading in self._traits[position].said

    def _twins_first(self, ranked: list[int]) -> list[int]:
        twins: dict[frozenset[str], int] = {}
        for position in ranked:
            if self._reads[position]:
                twins.setdefault(self._twin[position], position)
        out: list[int] = []
        placed: set[int] = set()
        for position in ranked:
            if position in placed:
                continue
            twin = None if self._reads[position] else twins.get(self._twin[position])
            if twin is not None and twin not in placed:
                out.append(twin)
                placed.add(twin)
            out.append(position)
            placed.add(position)
        return out

    def settle(self, ranked: list[int], request: Request, query: str) -> list[int]:
        """``ranked`` (positions, best first) with what the query does not ask for moved back."""

        def mismatched(position: int) -> bool:
            if request.intent in READ_INTENTS:  # a write, and not named as a read either (POST /getChat reads)
                return not self._reads[position] and self._traits[position].kind not in READ_KINDS
            return request.intent in WRITE_INTENTS and self._reads[position] and not self._asked(position, request)

        ranked = sorted(ranked, key=mismatched)
        if request.intent in READ_INTENTS:
            ranked = self._twins_first(ranked)
        said = frozenset(spelt(word) for word in raw_words(query)[:_MAX_WORDS])
        if request.intent == "delete" or said & _DESTROYING:
            return ranked
        unasked = [self._destroys[p] and not self._asked(p, request) for p in ranked]
        if unasked[:1] == [True] and not all(unasked):
            ranked.insert(0, ranked.pop(unasked.index(False)))
        return ranked
