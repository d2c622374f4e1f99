"""A task and its ideal transcripts in every mode.

A task has a prompt, its expected answer (computed from the upstream's data before the run) and,
for writes, a check of the state it leaves. Its transcripts are the calls a capable agent makes:

- tools: the task's ``plan`` calling the operations' tools, a turn at a time (independent calls
  in one turn, e.g. one ``pulls_list`` per repository);
- discovery: one turn of ``search_operations`` (one query per operation the plan needs, in
  parallel), one turn of ``describe_operation`` for those operations, then the same plan, each
  call through ``call_operation``;
- code (the bridge): one turn of ``search_operations`` (one query per operation, in parallel;
  the answer's signatures with their result shapes and paging), then one ``run_query``
  (``run_code`` for writes) program; a variant asks for the full stubs (``detail: true``) and
  runs the same program;
- FastMCP's code mode: one turn of its ``search`` with ``detail: "detailed"`` (the same queries;
  on the project's suite, where its search misses the bridge's query, the words of the
  operation's description and the limit that reaches it), then one ``execute`` program calling
  ``call_tool``.

A search whose answer lacks the operation is a miss: the transcript asks again with a larger
limit (``RETRY_LIMITS``) in one more turn and counts the miss; not finding it at the last fails
the transcript, as does an answer that differs from the expected one.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bench.tasks.session import Session
from bench.tasks.upstream import Upstream


class TranscriptError(Exception):
    """The transcript could not go on: a search missed, a call failed."""


@dataclass(frozen=True, slots=True)
class Search:
    query: str
    tool: str  # the bridge's tool name the transcript needs, e.g. "issues_list-for-repo"
    limit: int = 1
    # FastMCP's search (BM25 over its tools' names and descriptions) misses the bridge's query on
    # some operations: the words of the operation's own description and the rank it reaches there.
    fastmcp_query: str | None = None
    fastmcp_limit: int | None = None

    @property
    def function(self) -> str:
        """Its name in code mode's programs and stubs."""
        return re.sub(r"[^A-Za-z0-9_]", "_", self.tool)


class Caller:
    """The plan's way to call operations: their own tools, or ``call_operation``."""

    def __init__(self, session: Session, *, discovery: bool) -> None:
        self.session = session
        self.discovery = discovery

    async def turn(self, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
        if self.discovery:
            calls = tuple(("call_operation", {"name": name, "arguments": args}) for name, args in calls)
        before = len(self.session.tally.errors)
        results = await self.session.turn(*calls)
        if len(self.session.tally.errors) > before:
            raise TranscriptError(self.session.tally.errors[-1])
        return results

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        return (await self.turn((name, arguments)))[0]


Plan = Callable[[Caller], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    api: str  # "github" or "petstore"
    prompt: str
    expected: Callable[[Upstream], Any]
    plan: Plan  # tools and discovery mode
    searches: tuple[Search, ...]
    program: str  # the bridge's code mode
    fastmcp_program: str  # FastMCP's code mode (``call_tool(name, params)``, ``return``)
    write: bool = False
    verify: Callable[[Upstream], list[str]] | None = None  # what the state must be after a write
    # How the model reads a program's final value: results leave out empty fields (the server says so)
    read_answer: Callable[[Any], Any] | None = None


async def run_tools(task: Task, session: Session) -> Any:
    await session.list_tools()
    return await task.plan(Caller(session, discovery=False))


def _missing(found: Any, names: tuple[str, ...]) -> list[str]:
    text = str(found)
    return [name for name in names if name not in text]


# A search that misses is asked again, in one more turn, at the next of these limits: the model
# reads the wrong answer, then asks for more of the same query (each miss costs a round trip and
# what it reads). Not found at the last one, the transcript fails.
RETRY_LIMITS = (5, 20)


async def _searches(
    session: Session,
    searches: tuple[Search, ...],
    ask: Callable[[Search, int], tuple[str, dict[str, Any]]],
    found: Callable[[Search, Any], bool],
) -> None:
    """One turn of searches at each search's limit; the ones that miss again, at larger limits."""
    results = await session.turn(*(ask(s, s.limit) for s in searches))
    missed = [s for s, result in zip(searches, results, strict=True) if not found(s, result)]
    for limit in RETRY_LIMITS:
        if not missed:
            return
        session.tally.misses += len(missed)
        again = await session.turn(*(ask(s, max(limit, s.limit + 1)) for s in missed))
        missed = [s for s, result in zip(missed, again, strict=True) if not found(s, result)]
    if missed:
        session.tally.misses += len(missed)
        raise TranscriptError(f"{missed[0].query!r} did not find {missed[0].tool} at limit {RETRY_LIMITS[-1]}")


async def run_discovery(task: Task, session: Session) -> Any:
    await session.list_tools()

    def found(search: Search, result: Any) -> bool:
        return not (_missing(result, (f'"{search.tool}"',)) and _missing(result, (f"'{search.tool}'",)))

    await _searches(
        session, task.searches, lambda s, limit: ("search_operations", {"query": s.query, "limit": limit}), found
    )
    await session.turn(*(("describe_operation", {"name": s.tool}) for s in task.searches))
    return await task.plan(Caller(session, discovery=True))


async def run_code(task: Task, session: Session, *, detail: bool = False) -> Any:
    """The search answer's signatures with their result shapes (``detail=True``: the variant that
    asks for the full stubs, TypedDicts and docstrings, instead); then one program."""
    await session.list_tools()

    def ask(search: Search, limit: int) -> tuple[str, dict[str, Any]]:
        return "search_operations", {"query": search.query, "limit": limit, **({"detail": True} if detail else {})}

    await _searches(session, task.searches, ask, lambda s, result: not _missing(result, (f"def {s.function}(",)))
    tool = "run_code" if task.write else "run_query"
    result = await session.call(tool, {"code": task.program})
    if session.tally.errors:
        raise TranscriptError(session.tally.errors[-1])
    return task.read_answer(result["result"]) if task.read_answer else result["result"]


async def run_fastmcp(task: Task, session: Session, names: dict[str, str]) -> Any:
    """``names``: the bridge's tool name -> FastMCP's for the same operation."""
    await session.list_tools()

    def ask(search: Search, limit: int) -> tuple[str, dict[str, Any]]:
        query = search.fastmcp_query or search.query
        return "search", {"query": query, "limit": max(limit, search.fastmcp_limit or 0), "detail": "detailed"}

    await _searches(session, task.searches, ask, lambda s, result: not _missing(result, (f"### {names[s.tool]}\n",)))
    program = task.fastmcp_program
    for tool, name in names.items():
        program = program.replace(f"'{{{tool}}}'", repr(name))
    result = await session.call("execute", {"code": program})
    if session.tally.errors:
        raise TranscriptError(session.tally.errors[-1])
    value = result["result"] if isinstance(result, dict) and set(result) == {"result"} else result
    return task.read_answer(value) if task.read_answer else value
