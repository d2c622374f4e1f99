"""Code mode: the model writes a short Python program against typed functions of the API.

Three tools: ``search_operations`` finds operations and shows them as Python signatures (or, on
request, their full stubs with the ``TypedDict``s they use); ``run_query`` runs a program that may
call only read-only operations; ``run_code`` one that may call every operation served (absent
when every operation is read-only). A program is type-checked against the stubs of exactly the
functions it names before it runs (a type error costs no API call), then runs in the sandbox
(bridge/modes/sandbox.py) where each operation is an async host function.

Every API call of a program goes through the call core (``OperationCall.__call__`` with
validation): the caller's identity, per-user tokens, limits and the audit line apply as to a
tool call, and an operation the caller's scopes do not allow is neither in the program's stubs
nor among its functions. A failed call raises ``ApiError`` (an ``OSError``) in the program,
its message that of the tool error, starting ``HTTP <status>:`` for an HTTP error status, so
programs can catch a 404. The program sees whole (redacted) response data; its final value is
trimmed with the normal result budget and returned as structured content and JSON text.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import mcp_types

from bridge.calls.context import ApiError, CallContext, current_identity
from bridge.calls.operation import OperationCall
from bridge.calls.runtime import HttpRuntime
from bridge.confirm.asking import single_round
from bridge.contract.catalogue import Catalogue, ToolEntry, WorkflowEntry, stub_entries
from bridge.contract.listing import body, paging_note, shape_line
from bridge.contract.result_shape import DEFAULT_MAX_BYTES
from bridge.contract.stubs import PRELUDE, PRELUDE_NAMES, StubIndex, argument_map, bounded_stubs, function_names
from bridge.identity.scopes import allows, caller_scopes
from bridge.modes.discovery import Discovery, _hints, _summary
from bridge.modes.program_idioms import AVAILABLE_MODULES, prepare, unknown_name_hints
from bridge.modes.program_result import Printed, program_result
from bridge.modes.sandbox import HostCalls, ProgramError, Sandbox
from bridge.modes.stubsource import StubSource
from bridge.tools.errors import ToolError
from bridge.tools.registry import Tool, ToolContext, ToolRegistry
from bridge.tools.validation import ArgumentValidator

if TYPE_CHECKING:
    from bridge.workflows.runner import WorkflowRunner

__all__ = ["RUN_CODE", "RUN_QUERY", "SEARCH", "CodeMode", "code_instructions", "code_registry"]

logger = logging.getLogger("bridge.codemode")

SEARCH = "search_operations"
RUN_QUERY = "run_query"
RUN_CODE = "run_code"
MAX_CODE_CHARS = 100_000
DEFAULT_LIMIT = 10
MAX_LIMIT = 50
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_SEARCH_HINTS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
_QUERY_HINTS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True}


class _Call(Protocol):
    """An operation's call core, or a workflow's run: what a program's function awaits."""

    async def __call__(self, arguments: Mapping[str, Any], context: CallContext) -> Any: ...


@dataclass(frozen=True, slots=True)
class _WorkflowCall:
    """A workflow as a program's function: validated like its tool, run through the same runner."""

    runner: WorkflowRunner
    flow: WorkflowEntry
    validator: ArgumentValidator

    async def __call__(self, arguments: Mapping[str, Any], context: CallContext) -> Any:
        args = self.validator.validate(self.flow.name, arguments, apply_defaults=True)
        return _Data(
            await self.runner.run(self.flow.workflow_id, args, dataclasses.replace(context, deadline=context.deadline))
        )


@dataclass(frozen=True, slots=True)
class _Data:
    data: Any


@dataclass(frozen=True, slots=True)
class _Operation:
    function: str  # its Python name in programs and stubs
    entry: ToolEntry
    tool: Tool
    call: _Call
    names: Mapping[str, str]  # Python name -> argument name

    @property
    def read_only(self) -> bool:
        return bool(_hints(self.tool.annotations)["readOnlyHint"])


def _effect(tool: Tool) -> str:
    """The annotations in the words the stubs use: read-only, writes (idempotent), destructive."""
    hints = _hints(tool.annotations)
    if hints["readOnlyHint"]:
        return "read-only"
    if hints["destructiveHint"]:
        return "destructive"
    return "writes, idempotent" if hints["idempotentHint"] else "writes"


def _shape(op: _Operation) -> dict[str, str]:
    """``returns``: the result's fields a program reads; ``paging``: the arguments (Python names)
    that ask for a page and the result fields that carry the next one (bridge/contract/listing.py)."""
    data = body(op.entry.output_schema, wrapped=op.entry.binding.wrap_output)
    python = {arg: py for py, arg in op.names.items()}
    out = {}
    if (line := shape_line(data)) is not None:
        out["returns"] = line
    if (note := paging_note([python.get(a, a) for a in op.entry.binding.page_args], data)) is not None:
        out["paging"] = note
    return out


def _rank(discovery: Discovery, query: str, limit: int) -> tuple[list[str], int]:
    """Operation names best matching ``query``: discovery's BM25 ranking (bridge/modes/search.py), with
    its scope filter, so both modes find the same operations."""
    found = discovery.search(query, limit=limit)
    return [item["name"] for item in found["operations"]], int(found["matched"])


class CodeMode:
    """The operations of one API as functions for programs, and the three tools' behaviour."""

    def __init__(
        self,
        catalogue: Catalogue,
        registry: ToolRegistry,
        runtime: HttpRuntime,
        stubs: StubSource,
        sandbox: Sandbox,
    ) -> None:
        self.catalogue = catalogue
        self.runtime = runtime
        self.stubs = stubs
        self.sandbox = sandbox
        # Named over the whole catalogue, as api.pyi names them.
        functions = {tool: py for py, tool in function_names(e.name for e in stub_entries(catalogue)).items()}
        self._operations: dict[str, _Operation] = {}
        self._by_tool: dict[str, str] = {}
        for entry in catalogue.tools:
            tool = registry.get(entry.name)
            if tool is None:
                continue  # removed by the package's hooks
            skip = [entry.binding.fields_arg] if entry.binding.fields_arg else []
            function = functions[entry.name]
            self._operations[function] = _Operation(
                function, entry, tool, OperationCall(entry, runtime), argument_map(entry.input_schema, skip)
            )
            self._by_tool[entry.name] = function
        self._add_workflows(catalogue, registry, runtime, functions)
        served = ToolRegistry([op.tool for op in self._operations.values()])
        tags = {e.name: e.tags for e in catalogue.tools if e.tags}
        self.discovery = Discovery(served, tags=tags, shared_arguments=catalogue.shared_arguments)

    def _add_workflows(
        self, catalogue: Catalogue, registry: ToolRegistry, runtime: HttpRuntime, functions: Mapping[str, str]
    ) -> None:
        """Workflows are functions too (typed in the stubs), run by the workflow runner."""
        if not catalogue.workflows:
            return
        from bridge.workflows.runner import WorkflowRunner  # JSONPath and the runner: only when there are workflows

        runner = WorkflowRunner(catalogue, runtime)
        entries = {entry.name: entry for entry in stub_entries(catalogue)}
        for flow in catalogue.workflows:
            tool = registry.get(flow.name)
            if tool is None:
                continue  # not served (a step's tool was removed)
            function = functions[flow.name]
            call = _WorkflowCall(runner, flow, ArgumentValidator({flow.name: flow.input_schema}))
            self._operations[function] = _Operation(
                function, entries[flow.name], tool, call, argument_map(flow.input_schema)
            )
            self._by_tool[flow.name] = function

    def __len__(self) -> int:
        return len(self._operations)

    @property
    def has_writes(self) -> bool:
        return any(not op.read_only for op in self._operations.values())

    def run_code_annotations(self) -> dict[str, bool]:
        hints = [_hints(op.tool.annotations) for op in self._operations.values()]
        return {
            "readOnlyHint": False,
            "destructiveHint": any(h["destructiveHint"] and not h["readOnlyHint"] for h in hints),
            "idempotentHint": False,
            "openWorldHint": True,
        }

    def allowed(self, *, read_only: bool) -> dict[str, _Operation]:
        """The operations a program of this caller may call (its scopes; run_query: reads only)."""
        granted = caller_scopes()
        return {
            name: op
            for name, op in self._operations.items()
            if (op.read_only or not read_only) and allows(op.tool.scopes, granted)
        }

    # ------------------------------------------------------------------------------- search

    async def search(
        self, query: str, *, limit: int, detail: bool, name: str | None, path: str | None = None
    ) -> dict[str, Any]:
        visible = self.allowed(read_only=False)
        if name is not None:
            op = visible.get(name) or visible.get(self._by_tool.get(self.discovery.resolve(name), ""))
            if op is None:
                close = [f for f in self._ranked(name.replace("_", " "), 5)[0] if f in visible]
                hint = f" Did you mean: {', '.join(close)}?" if close else ""
                raise ToolError(f'Unknown operation "{name[:200]}".{hint}')
            (item,) = await self._describe([op])
            index = await self.stubs.index_for([op.function])
            if path:
                return {**item, "path": path, "stub": self._part(index, op.function, path)}
            return {**item, "stub": _bounded(index, [op.function], op.function)}
        names, matched = self._ranked(query, limit)
        ops = [visible[n] for n in names if n in visible][:limit]
        found: dict[str, Any] = {"operations": await self._describe(ops, signatures=not detail), "matched": matched}
        if detail and ops:
            # One text for all: a shape several operations return is written once.
            functions = [op.function for op in ops]
            found["stubs"] = _bounded(await self.stubs.index_for(functions), functions, None)
        return found

    def _part(self, index: StubIndex, function: str, path: str) -> str:
        """The stub of one type ``function`` uses (a name left out of its bounded stub)."""
        reachable = index.closure([function])
        if path not in reachable or path == function:
            types = [n for n in reachable if n != function and n not in PRELUDE_NAMES]
            raise ToolError(
                f'"{path[:200]}" is not a type {function} uses. Its types: {", ".join(types[:40]) or "none"}.'
            )
        return _bounded(index, [path], function)

    def _ranked(self, query: str, limit: int) -> tuple[list[str], int]:
        tools, matched = _rank(self.discovery, query, limit)
        return [self._by_tool[t] for t in tools if t in self._by_tool], matched

    async def _describe(self, ops: Sequence[_Operation], *, signatures: bool = False) -> list[dict[str, Any]]:
        """Name, summary, operation and effect of each; ``signatures``: with its signature, the shape
        of its result and how it pages (left out when the stubs that follow say it all)."""
        index = await self.stubs.index_for([op.function for op in ops]) if signatures else None
        out = []
        for op in ops:
            item: dict[str, Any] = {"name": op.function}
            if index is not None:
                item["signature"] = index.signature(op.function) or f"async def {op.function}(**arguments: Any) -> Any"
                item.update(_shape(op))
            item.update(summary=_summary(op.tool), operation=op.entry.operation, effect=_effect(op.tool))
            out.append(item)
        return out

    # ---------------------------------------------------------------------------------- run

    async def run(self, code: str, ctx: ToolContext, *, read_only: bool) -> mcp_types.CallToolResult:
        if len(code) > MAX_CODE_CHARS:
            raise ProgramError(f"The program is longer than {MAX_CODE_CHARS:,} characters.")
        # Parsing a long program takes a while (about 0.15 s for 100 KB): not on the event loop.
        runnable, refused = await anyio.to_thread.run_sync(prepare, code)
        if refused:
            raise ProgramError("The program cannot run in the sandbox (no API call was made):\n" + "\n".join(refused))
        allowed = self.allowed(read_only=read_only)
        named = list(dict.fromkeys(_NAME.findall(code)))
        used = [n for n in named if n in allowed]
        index = await self.stubs.index_for(used)
        stubs = index.subset(used)
        limits = self.sandbox.limits
        calls = HostCalls(limits.max_calls)
        identity = current_identity() if self.runtime.identities else None
        context = CallContext.from_tool(ctx, identity=identity)
        context.deadline = anyio.current_time() + limits.wall_seconds
        # A long-running operation answers "still running" (an ApiError with a handle) before the
        # program's time is up, rather than being cancelled at the API when the program is stopped.
        context.follow_until = context.deadline - min(1.0, limits.wall_seconds / 10)
        # Each write is confirmed as the program reaches it; a program runs once, so no input rounds.
        context.confirm = single_round(context.confirm)
        functions = {name: self._host_function(allowed[name], context, calls) for name in used}
        try:
            value, printed = await self.sandbox.run(
                runnable,
                stubs=stubs,
                prelude=PRELUDE,
                functions=functions,
                calls=calls,
                redact=self.runtime.credentials.redact,
            )
        except ProgramError as exc:
            # Only writes refused by run_query are explained: a function beyond the caller's scopes is
            # as unknown as one that does not exist (search does not show it either).
            visible = self.allowed(read_only=False)
            hints = self._refusal_hints([n for n in named if n in visible and n not in allowed], read_only)
            hints += unknown_name_hints(str(exc), [n for n in allowed if n not in named], SEARCH)
            if hints:
                raise ProgramError(str(exc) + "\n" + "\n".join(hints)) from None
            raise
        if calls.over_limit:
            raise ProgramError(
                f"The program tried to make more than {calls.limit} API calls (the limit per program); "
                "its result is withheld. Fetch less per program, or use a listing operation's paging."
            )
        return await self._result(value, printed)

    def _refusal_hints(self, refused: Sequence[str], read_only: bool) -> list[str]:
        """Why functions a program names are not its to call: a write in run_query."""
        hints = []
        for name in refused[:5]:
            if read_only and not self._operations[name].read_only:
                hints.append(f"{name}: not read-only, so not callable from {RUN_QUERY}; use {RUN_CODE}.")
        return hints

    def _host_function(self, op: _Operation, context: CallContext, calls: HostCalls) -> Callable[..., Awaitable[Any]]:
        names, call, redact = op.names, op.call, self.runtime.credentials.redact

        async def function(*args: Any, **kwargs: Any) -> Any:
            if args:
                raise OSError(f"{op.function}() takes keyword arguments only.")
            if not calls.admit():
                raise OSError(f"API call limit reached: a program may make at most {calls.limit} calls.")
            arguments = {names.get(key, key): value for key, value in kwargs.items()}
            try:
                response = await calls.track(call(arguments, context))
            except ApiError as exc:
                raise OSError(f"HTTP {exc.status}: {exc}") from None
            except ToolError as exc:
                raise OSError(redact(str(exc))) from None
            except Exception:
                # A bridge bug: its message may quote internals, so the program gets a fixed text.
                logger.exception("%s: a program's call to %s failed unexpectedly", context.surface, op.function)
                raise OSError(f"{op.function}: the call failed unexpectedly (see the server's log).") from None
            return response.data

        return function

    async def _result(self, value: Any, printed: Printed) -> mcp_types.CallToolResult:
        # Bounded, redacted and trimmed in a worker thread: a big value never holds other sessions.
        redact = self.runtime.credentials.redact
        return await anyio.to_thread.run_sync(program_result, value, printed, redact, self.runtime.trim)


STUB_BUDGET = DEFAULT_MAX_BYTES - 2048
"""Characters of stub text one search answer carries (the result budget, less the rest of it)."""


def _bounded(index: StubIndex, names: Sequence[str], function: str | None) -> str:
    ask = f'{SEARCH}(name="{function or "..."}", path="<type>")'
    return bounded_stubs(index, names, STUB_BUDGET, ask)


def code_registry(mode: CodeMode) -> ToolRegistry:
    """The three code-mode tools (two when every operation is read-only)."""
    api = f"the {mode.catalogue.title} API"

    async def search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        name = args.get("name")
        return await mode.search(
            str(args.get("query", "")),
            limit=int(args.get("limit", DEFAULT_LIMIT)),
            detail=bool(args.get("detail", False)),
            name=str(name) if name is not None else None,
            path=str(args["path"]) if args.get("path") else None,
        )

    async def run_query(args: dict[str, Any], ctx: ToolContext) -> mcp_types.CallToolResult:
        return await mode.run(str(args["code"]), ctx, read_only=True)

    async def run_code(args: dict[str, Any], ctx: ToolContext) -> mcp_types.CallToolResult:
        return await mode.run(str(args["code"]), ctx, read_only=False)

    limits = mode.sandbox.limits
    program = (
        "Python in a sandbox: no files, network or `yield`; modules: "
        f"{', '.join(AVAILABLE_MODULES)}. Per program: {limits.max_calls} API calls, {limits.wall_seconds:g} s, "
        f"{limits.memory_bytes // 2**20} MB. API functions are async and take keyword arguments: "
        "`pets = await list_pets(limit=5)`; `asyncio.gather` runs calls together. A failed call raises "
        "ApiError (api_status(error) gives its HTTP status). The last expression is the result. The program "
        "is type-checked against the functions' stubs first."
    )
    code_schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "description": "The program.", "maxLength": MAX_CODE_CHARS}},
        "required": ["code"],
        "additionalProperties": False,
    }
    tools = [
        Tool(
            name=SEARCH,
            internal=True,
            run=search,
            title="Search operations",
            description=(
                f"Find functions of {api} ({len(mode)} operations) by words; returns Python signatures, the "
                "fields of each result, how it pages, one-line summaries and effects. `detail: true` or `name` "
                "gives full stubs instead (docstrings and the TypedDicts of arguments and results)."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Words to look for; empty lists operations."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT},
                    "detail": {"type": "boolean", "default": False, "description": "Include full stubs."},
                    "name": {"type": "string", "description": "One operation's name: its full stub."},
                    "path": {
                        "type": "string",
                        "description": "With name: one type the operation uses (its stub names the ones left out).",
                    },
                },
                "additionalProperties": False,
            },
            annotations=dict(_SEARCH_HINTS),
        ),
        Tool(
            name=RUN_QUERY,
            internal=True,
            run=run_query,
            title="Run a read-only program",
            description=f"Run a Python program that may call only the read-only functions of {api}. {program}",
            input_schema=code_schema,
            annotations=dict(_QUERY_HINTS),
        ),
    ]
    if mode.has_writes:
        tools.append(
            Tool(
                name=RUN_CODE,
                internal=True,
                run=run_code,
                title="Run a program",
                description=(
                    f"Run a Python program that may call every function of {api}, including ones that "
                    f"change or delete data (each one's effect is in {SEARCH}). {program}"
                ),
                input_schema=code_schema,
                annotations=mode.run_code_annotations(),
            )
        )
    return ToolRegistry(tools)


def code_instructions(mode: CodeMode) -> str:
    run = f"{RUN_QUERY} (read-only)" + (f" or {RUN_CODE}" if mode.has_writes else "")
    return (
        f"The {len(mode)} operations of the {mode.catalogue.title} API are async Python functions: find them "
        f"with {SEARCH}, then write one short program that calls them and returns what is needed, and run it "
        f"with {run}. Prefer one program doing several calls over several tool calls."
    )
