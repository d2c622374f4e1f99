"""One scripted transcript against one MCP client, counted as the model would pay for it.

A transcript is a list of turns; a turn is the tool calls the model makes in one message (several
calls in one turn run in parallel and count as one round trip, as a client that supports
parallel tool calls sends them). Counted, o200k_base (:func:`bench.visible.token_counter`):

- read: the tool list once (the model-visible JSON of ``{name, description, inputSchema}`` per
  tool, :func:`bench.visible.model_visible_tokens`) plus the text content of every result, which
  is what a client puts in the model's context;
- written: for every call, its tool name and its arguments as compact JSON (a program is its
  ``code`` string inside that JSON). The final answer, the same in every mode, is not counted;
- round trips: the turns that call tools.

A result is parsed from that same text (JSON when it is JSON), so a transcript only knows what
the model would have read; an error result is kept as its text and recorded in ``errors``.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from dataclasses import dataclass, field
from typing import Any

import mcp_types

from bench.tasks.upstream import Upstream, union_seconds
from bench.visible import model_visible_tokens, wire_dicts

PROGRAM_TOOLS = frozenset({"run_query", "run_code", "execute"})


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@dataclass
class Tally:
    list_tokens: int = 0
    result_tokens: int = 0
    written: int = 0
    round_trips: int = 0
    calls: int = 0
    misses: int = 0  # searches whose answer lacked the operation the transcript needed
    errors: list[str] = field(default_factory=list)
    # code mode: each program's time, upstream time excluded, as the bridge's HTTP client sees it
    # (NaN when not measured, e.g. FastMCP) and as the upstream app sees it
    program_ms: list[float] = field(default_factory=list)
    program_ms_server: list[float] = field(default_factory=list)

    @property
    def read(self) -> int:
        return self.list_tokens + self.result_tokens


def result_text(result: mcp_types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, mcp_types.TextContent))


async def listed_tools(client: Any) -> list[dict[str, Any]]:
    tools: list[Any] = []
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return wire_dicts(tools)


class Session:
    """A client, a counter and the upstream (for the upstream time inside a program's call)."""

    def __init__(
        self,
        client: Any,
        counter: Any,
        upstream: Upstream | None,
        client_intervals: list[tuple[float, float]] | None = None,
        timeout: float = 120,
    ) -> None:
        self.client = client
        self.counter = counter
        self.upstream = upstream
        self.client_intervals = client_intervals
        self.timeout = timeout
        self.tally = Tally()
        self.tools: list[dict[str, Any]] = []

    async def list_tools(self) -> list[dict[str, Any]]:
        self.tools = await listed_tools(self.client)
        self.tally.list_tokens = model_visible_tokens(self.tools, self.counter)
        return self.tools

    async def turn(self, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
        """One model message calling ``calls`` in parallel; the parsed results, in order."""
        if not calls:
            raise ValueError("a turn calls at least one tool")
        self.tally.round_trips += 1
        self.tally.calls += len(calls)
        for name, arguments in calls:
            self.tally.written += self.counter.count(name) + self.counter.count(compact(arguments))
        return list(await asyncio.gather(*(self._call(name, arguments) for name, arguments in calls)))

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """A turn of one call."""
        return (await self.turn((name, arguments)))[0]

    async def _call(self, name: str, arguments: dict[str, Any]) -> Any:
        started = time.monotonic()
        async with asyncio.timeout(self.timeout):
            result = await self.client.call_tool(name, arguments)
        ended = time.monotonic()
        text = result_text(result)
        self.tally.result_tokens += self.counter.count(text)
        if name in PROGRAM_TOOLS and self.upstream is not None and not result.is_error:
            elapsed = ended - started
            server = union_seconds(self.upstream.intervals, started, ended)
            self.tally.program_ms_server.append((elapsed - server) * 1000)
            if self.client_intervals is None:
                self.tally.program_ms.append(math.nan)
            else:
                self.tally.program_ms.append((elapsed - union_seconds(self.client_intervals, started, ended)) * 1000)
        if result.is_error:
            self.tally.errors.append(f"{name}: {text[:300]}")
            return text
        try:
            return json.loads(text)
        except ValueError:
            return text
