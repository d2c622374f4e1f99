"""RFC 9535 JSONPath queries over JSON data, bounded in time and memory.

Queries are parsed and run by python-jsonpath (strict RFC 9535 mode), shared by overlays (the
generator) and workflow criteria (the runtime). Two things are added around it, both because the
query text and the data come from people who need not be trusted (a vendor's overlay, an upstream
answer):

- ``match()`` and ``search()`` use the linear-time engine of :mod:`bridge.contract.expressions.patterns`, never
  Python's backtracking ``re``: ``match(@.x, '(a+)+$')`` on a long string costs microseconds.
- Every node a query touches (including inside filters and function arguments) is counted through
  thin read-only views of the data: a query that would touch more than its budget stops with
  :class:`QueryBudgetError` instead of running for minutes (``$..[?@..[?@..*]]`` is cubic).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jsonpath
from jsonpath.exceptions import JSONPathError, JSONPathRecursionError
from jsonpath.function_extensions import ExpressionType, FilterFunction

from bridge.contract.expressions import json_pointer
from bridge.contract.expressions.patterns import compiled_pattern

__all__ = ["MAX_QUERY_CHARS", "Query", "QueryBudgetError", "QueryError", "compile_query"]

MAX_QUERY_CHARS = 4096
"""Longest query text accepted (an overlay target or a criterion condition)."""
DEFAULT_MAX_VISITS = 2_000_000
"""Nodes one query may touch unless the caller says otherwise (~5 s of python-jsonpath)."""
_CLOCK_EVERY = 4096  # visits between two looks at the clock


class QueryError(ValueError):
    """The query cannot be parsed (the message says where), or cannot be run on this data."""


class QueryBudgetError(QueryError):
    """The query touched more nodes, or took longer, than it was allowed."""


class _Budget:
    """What one run of a query may still spend; with ``root``, local ``$ref``s are followed."""

    __slots__ = ("deadline", "left", "limit", "root", "seconds")

    def __init__(self, limit: int, seconds: float | None, root: Any = None) -> None:
        self.limit = self.left = limit
        self.seconds = seconds
        self.deadline = None if seconds is None else time.monotonic() + seconds
        self.root = root

    def spend(self) -> None:
        self.left -= 1
        if self.left % _CLOCK_EVERY == 0 or self.left < 0:
            if self.left < 0:
                raise QueryBudgetError(f"the query touches more than {self.limit:,} nodes of the document")
            if self.deadline is not None and time.monotonic() > self.deadline:
                raise QueryBudgetError(f"the query ran for more than {self.seconds:g} s")


MAX_REF_HOPS = 32  # a chain of local refs longer than this is left unfollowed (or it loops)


def _followed(value: dict[str, Any], root: Any) -> Any:
    for _ in range(MAX_REF_HOPS):
        ref = value.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return value
        try:
            target = json_pointer.resolve(root, ref)
        except (json_pointer.PointerError, LookupError, TypeError):
            return value
        if not isinstance(target, dict):
            return target
        value = target
    return value


def _view(value: Any, budget: _Budget) -> Any:
    if budget.root is not None and isinstance(value, dict) and "$ref" in value:
        value = _followed(value, budget.root)
    if isinstance(value, dict):
        return _Object(value, budget)
    if isinstance(value, list):
        return _Array(value, budget)
    return value


def raw(value: Any) -> Any:
    """The data behind a view handed out by a query (the value itself for scalars)."""
    return value.raw if isinstance(value, _Object | _Array) else value


class _Object(Mapping[str, Any]):
    """A read-only, counting view of a JSON object."""

    __slots__ = ("budget", "raw")

    def __init__(self, raw: dict[str, Any], budget: _Budget) -> None:
        self.raw = raw
        self.budget = budget

    def __getitem__(self, key: str) -> Any:
        self.budget.spend()
        return _view(self.raw[key], self.budget)

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def __len__(self) -> int:
        return len(self.raw)

    def __contains__(self, key: object) -> bool:
        return key in self.raw

    def items(self) -> Iterator[tuple[str, Any]]:  # type: ignore[override]
        budget = self.budget
        for key, value in self.raw.items():
            budget.spend()
            yield key, _view(value, budget)

    def values(self) -> Iterator[Any]:  # type: ignore[override]
        budget = self.budget
        for value in self.raw.values():
            budget.spend()
            yield _view(value, budget)


class _Array(Sequence[Any]):
    """A read-only, counting view of a JSON array."""

    __slots__ = ("budget", "raw")

    def __init__(self, raw: list[Any], budget: _Budget) -> None:
        self.raw = raw
        self.budget = budget

    def __getitem__(self, index: Any) -> Any:
        self.budget.spend()
        if isinstance(index, slice):
            return [_view(v, self.budget) for v in self.raw[index]]
        return _view(self.raw[index], self.budget)

    def __len__(self) -> int:
        return len(self.raw)

    def __iter__(self) -> Iterator[Any]:
        budget = self.budget
        for value in self.raw:
            budget.spend()
            yield _view(value, budget)


class _Regex(FilterFunction):
    """RFC 9535 ``match`` (whole string) or ``search`` (anywhere), in linear time."""

    arg_types = [ExpressionType.VALUE, ExpressionType.VALUE]  # noqa: RUF012  # the library's own spelling
    return_type = ExpressionType.LOGICAL

    def __init__(self, *, whole: bool) -> None:
        self.whole = whole

    def __call__(self, value: object, pattern: object) -> bool:
        if not isinstance(value, str) or not isinstance(pattern, str):
            return False
        source = f"^(?:{pattern})$" if self.whole else pattern
        return compiled_pattern(source).search(value) is True  # an unknown answer is no match


class _Environment(jsonpath.JSONPathEnvironment):
    def setup_function_extensions(self) -> None:
        super().setup_function_extensions()
        self.function_extensions["match"] = _Regex(whole=True)
        self.function_extensions["search"] = _Regex(whole=False)


_ENV = _Environment(strict=True)

Location = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed query; :meth:`nodes` runs it."""

    text: str
    _path: Any

    @property
    def filters_root(self) -> bool:
        """Whether the query starts by filtering the root's children (``$[?...]``)."""
        return self.text.replace(" ", "").startswith("$[?")

    def nodes(
        self,
        data: Any,
        *,
        max_visits: int = DEFAULT_MAX_VISITS,
        seconds: float | None = None,
        follow_refs: bool = False,
    ) -> list[tuple[Location, Any]]:
        """(location, value) of every node the query selects, in document order.

        ``follow_refs``: a local ``$ref`` object is seen as the node it refers to (RFC 9535 knows
        nothing of refs; the locations are then the way through the refs, not real places).

        Raises:
            QueryBudgetError: the query touched more than ``max_visits`` nodes, or ran longer
                than ``seconds``.
            QueryError: the data is nested deeper than the library follows.
        """
        budget = _Budget(max_visits, seconds, data if follow_refs else None)
        try:
            return [(tuple(m.parts), raw(m.obj)) for m in self._path.finditer(_view(data, budget))]
        except JSONPathRecursionError:
            raise QueryError("the document is nested too deeply for a descendant query") from None
        except JSONPathError as exc:
            raise QueryError(_message(exc)) from None


def _message(exc: Exception) -> str:
    # python-jsonpath adds a drawing of the query under its first line; the first line says it all.
    lines = str(exc).splitlines()
    return " ".join(lines[0].split()) if lines else type(exc).__name__


@functools.lru_cache(maxsize=512)
def compile_query(text: str) -> Query:
    """The parsed query ``text`` (cached).

    Raises:
        QueryError: not an RFC 9535 query (the message says what and where), or too long.
    """
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"the query is longer than {MAX_QUERY_CHARS} characters")
    if not text.startswith("$"):
        raise QueryError("a JSONPath query starts with $ (the root), as in $.paths['/pets'].get")
    try:
        return Query(text, _ENV.compile(text))
    except (JSONPathError, RecursionError) as exc:
        raise QueryError(_message(exc)) from None
