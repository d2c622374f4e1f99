"""Discovery mode: three tools in front of every operation, for APIs too big to list.

``search_operations`` ranks operations for the query (:class:`bridge.modes.search.SearchIndex`: BM25 over
name, summary, path, tags and the description's first sentence; deprecated ones last) and returns
names, one-line summaries and annotations; ``describe_operation``
gives one operation's input schema, output schema and annotations; ``call_operation`` runs one
with arguments validated exactly as the operation's own tool would validate them
(:class:`~bridge.tools.validation.ArgumentValidator` over the same schemas), and returns that tool's
result with the operation and its annotations in ``_meta``. Every operation is reachable in two
calls after a search (describe, call), or one when the arguments are known.

The search index is built off the event loop, in a thread started with the server (:meth:`Discovery.warm`),
never during start-up: Microsoft Graph's 11,422 operations take seconds to index, and a server
must answer ``initialize`` first. A search that comes before it is ready waits for it in a worker
thread, the event loop free.

The three tools' annotations are honest: searching and describing only read the catalogue;
``call_operation`` is as read-only, destructive, idempotent and open-world as the operations
behind it taken together (with one writing operation, it is not read-only).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import logging
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types

from bridge.contract.catalogue import OPERATION_META_KEY, Catalogue
from bridge.contract.result_shape import DEFAULT_MAX_BYTES
from bridge.contract.schema_bound import Note, bounded_schema, compact_size, names_hint, schema_at
from bridge.identity.scopes import allows, caller_scopes
from bridge.modes.search import SearchEntry, SearchIndex, returns_list
from bridge.tools.errors import ToolError
from bridge.tools.invoke import invoke
from bridge.tools.registry import Tool, ToolContext, ToolRegistry
from bridge.tools.validation import ArgumentValidator

logger = logging.getLogger("bridge.search")

# What building the index imports (bridge/modes/search.py): looked for before the index is built in a thread.
SEARCH_MODULES = ("numpy", "rank_bm25")

__all__ = [
    "CALL",
    "DESCRIBE",
    "SEARCH",
    "Discovery",
    "discovery_instructions",
    "discovery_registry",
]

SEARCH = "search_operations"
DESCRIBE = "describe_operation"
CALL = "call_operation"
ANNOTATIONS_META_KEY = "mcp-bridge/annotations"
DEFAULT_LIMIT = 10
MAX_LIMIT = 50
SUMMARY_CHARS = 120
DESCRIBE_BUDGET = DEFAULT_MAX_BYTES - 1024
"""Bytes of schema one describe_operation answer carries (the result budget, less the rest)."""


def _note(tool: str, prefix: str) -> Note:
    def note(path: str) -> str:
        full = ".".join(p for p in (prefix, path) if p)
        return f'fields not listed: {DESCRIBE}(name="{tool}", path="{full}") shows them'

    return note


def _output_note(path: str) -> str:
    return "fields not listed here"


_READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
_HINT_DEFAULTS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}


def _summary(tool: Tool) -> str:
    text = tool.title or tool.description.split("\n", 1)[0]
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1].rstrip() + "…"


def _spelt_operation(text: str) -> str:
    return " ".join(text[:2000].split()).casefold()


def _hints(annotations: Mapping[str, Any] | None) -> dict[str, bool]:
    given = dict(annotations or {})
    return {key: bool(given.get(key, default)) for key, default in _HINT_DEFAULTS.items()}


@dataclass(frozen=True, slots=True)
class _Doc:
    tool: Tool
    operation: str | None


class Discovery:
    """Search, describe and call over the tools of ``registry`` (the tools the catalogue makes,
    plus any the package's hooks added)."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        tags: Mapping[str, Sequence[str]] | None = None,
        shared_arguments: Mapping[str, str] | None = None,
        deprecated: Collection[str] | None = None,
    ) -> None:
        self._registry = registry
        # No size cap here: call_operation's own arguments (these ones included) were capped by the server.
        self._validator = ArgumentValidator(registry, max_argument_bytes=0)
        self._shared = dict(shared_arguments or {})
        self._tags = dict(tags or {})
        self._deprecated = frozenset(deprecated or ())  # one lookup per tool: linear build
        self._docs: list[_Doc] = []
        for tool in registry:
            operation = (tool.meta or {}).get(OPERATION_META_KEY)
            self._docs.append(_Doc(tool, operation if isinstance(operation, str) else None))
        self._by_name = {doc.tool.name: doc for doc in self._docs}
        # "GET /pets/{petId}" names an operation as well as its tool name does (case and spacing aside).
        self._by_operation = {_spelt_operation(doc.operation): doc.tool.name for doc in self._docs if doc.operation}
        self._index: SearchIndex | None = None
        self._building = threading.Lock()
        self._warming: threading.Thread | None = None

    def __len__(self) -> int:
        return len(self._docs)

    # -------------------------------------------------------------------------- the index

    def index(self) -> SearchIndex:
        """The search index, built on first use (once, whichever thread asks first)."""
        with self._building:
            if self._index is None:
                self._index = SearchIndex(
                    SearchEntry(
                        name=doc.tool.name,
                        operation=doc.operation,
                        summary=doc.tool.title or "",
                        description=doc.tool.description,
                        tags=tuple(self._tags.get(doc.tool.name, ())),
                        deprecated=doc.tool.name in self._deprecated,
                        returns_list=returns_list(doc.tool.output_schema),
                        read_only=_hints(doc.tool.annotations)["readOnlyHint"],
                        destructive=_hints(doc.tool.annotations)["destructiveHint"],
                    )
                    for doc in self._docs
                )
            return self._index

    def warm(self) -> None:
        """Start building the index in a daemon thread (once), so the first search finds it ready.

        The search library is looked for here, in the caller's thread: a missing one stops start-up
        with the one-line extras message (bridge/cli/extras.py), not a traceback in the thread.
        """
        if self._warming is None and self._index is None:
            for module in SEARCH_MODULES:
                if importlib.util.find_spec(module) is None:
                    raise ModuleNotFoundError(f"No module named {module!r}", name=module)
            self._warming = threading.Thread(target=self._build_quietly, name="search-index", daemon=True)
            self._warming.start()

    def _build_quietly(self) -> None:
        """The warming thread's work: an error here is raised again, where it can be answered, by the
        first search that builds the index itself."""
        try:
            self.index()
        except Exception:
            logger.debug("building the search index ahead of the first search failed", exc_info=True)

    async def ready(self) -> None:
        """Wait, in a worker thread, until the index is built (at once when it is)."""
        if self._index is None:
            await anyio.to_thread.run_sync(self.index)

    # ------------------------------------------------------------------------------- search

    def search(self, query: str, *, limit: int = DEFAULT_LIMIT, offset: int = 0) -> dict[str, Any]:
        granted = caller_scopes()

        def allowed(name: str) -> bool:
            return allows(self._by_name[name].tool.scopes, granted)

        names = self.index().rank(query, len(self._docs), allowed if granted is not None else None)
        ranked = [self._by_name[name] for name in names]
        page = ranked[offset : offset + limit]
        result: dict[str, Any] = {
            "operations": [
                {
                    "name": doc.tool.name,
                    "summary": _summary(doc.tool),
                    **({"operation": doc.operation} if doc.operation else {}),
                    "annotations": _hints(doc.tool.annotations),
                }
                for doc in page
            ],
            "matched": len(ranked),
        }
        if offset + limit < len(ranked):
            result["next_offset"] = offset + limit
        return result

    # ----------------------------------------------------------------------------- describe

    def resolve(self, name: str) -> str:
        """The tool name ``name`` means: itself, or the tool of the operation ``METHOD /path`` it spells."""
        if name in self._by_name:
            return name
        return self._by_operation.get(_spelt_operation(name), name)

    def _tool(self, name: str) -> Tool:
        name = self.resolve(name)
        tool = self._registry.get(name)
        if tool is not None and tool.scopes and not allows(tool.scopes, caller_scopes()):
            tool = None  # beyond the caller's scopes: answered as an unknown name, as search hides it
        if tool is None:
            close = [item["name"] for item in self.search(name.replace("_", " "), limit=5)["operations"]]
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise ToolError(f'Unknown operation "{name[:200]}".{hint} Use {SEARCH} to find operations.')
        return tool

    def _input_schema(self, tool: Tool) -> dict[str, Any]:
        schema = dict(tool.input_schema)
        properties = schema.get("properties")
        if isinstance(properties, dict) and self._shared:
            schema["properties"] = {
                name: (
                    {**prop, "description": self._shared[name]}
                    if isinstance(prop, dict) and name in self._shared and "description" not in prop
                    else prop
                )
                for name, prop in properties.items()
            }
        return schema

    def describe(self, name: str, path: str | None = None) -> dict[str, Any]:
        """The operation's schemas within the result budget; ``path`` (dotted argument and field
        names) shows one part of its arguments, for the parts a big schema leaves out."""
        tool = self._tool(name)
        full = self._input_schema(tool)
        if path:
            part, possible = schema_at(full, path)
            if part is None:
                raise ToolError(
                    f'"{path[:200]}" names no part of the arguments of {tool.name}. '
                    f"Names possible there: {names_hint(possible) or 'none'}."
                )
            shown = bounded_schema(part, DESCRIBE_BUDGET, _note(tool.name, path))
            return {"name": tool.name, "path": path, "schema": part if shown is None else shown}
        meta = tool.meta or {}
        out: dict[str, Any] = {"name": tool.name}
        if tool.title:
            out["title"] = tool.title
        if isinstance(meta.get(OPERATION_META_KEY), str):
            out["operation"] = meta[OPERATION_META_KEY]
        out["description"] = tool.description
        out["annotations"] = _hints(tool.annotations)
        output = dict(tool.output_schema) if tool.output_schema is not None else None
        if output is not None:
            output = bounded_schema(output, DESCRIBE_BUDGET // 4, _output_note) or output
        room = DESCRIBE_BUDGET - compact_size(out) - (compact_size(output) if output is not None else 0)
        out["inputSchema"] = bounded_schema(full, max(room, 1024), _note(tool.name, "")) or full
        if output is not None:
            out["outputSchema"] = output
        return out

    # --------------------------------------------------------------------------------- call

    async def call(self, name: str, arguments: Mapping[str, Any] | None, ctx: ToolContext) -> mcp_types.CallToolResult:
        tool = self._tool(name)
        inner = dataclasses.replace(ctx, tool_name=tool.name)  # cancellation, progress, confirmation go along
        result = await invoke(tool, self._validator, arguments, inner)
        meta: dict[str, Any] = dict(result.meta or {})
        operation = (tool.meta or {}).get(OPERATION_META_KEY)
        if isinstance(operation, str):
            meta[OPERATION_META_KEY] = operation
        meta[ANNOTATIONS_META_KEY] = _hints(tool.annotations)
        return result.model_copy(update={"meta": meta})

    def call_annotations(self) -> dict[str, bool]:
        """What ``call_operation`` may do: the operations' hints taken together."""
        hints = [_hints(doc.tool.annotations) for doc in self._docs]
        read_only = all(h["readOnlyHint"] for h in hints)
        return {
            "readOnlyHint": read_only,
            "destructiveHint": (not read_only) and any(h["destructiveHint"] and not h["readOnlyHint"] for h in hints),
            "idempotentHint": all(h["idempotentHint"] for h in hints),
            "openWorldHint": any(h["openWorldHint"] for h in hints),
        }


def _tags(catalogue: Catalogue | None) -> dict[str, tuple[str, ...]]:
    if catalogue is None:
        return {}
    return {entry.name: entry.tags for entry in catalogue.tools if entry.tags}


def discovery_registry(registry: ToolRegistry, catalogue: Catalogue | None = None) -> ToolRegistry:
    """A registry with the three discovery tools over ``registry``'s tools."""
    discovery = Discovery(
        registry,
        tags=_tags(catalogue),
        shared_arguments=catalogue.shared_arguments if catalogue is not None else None,
        deprecated={entry.name for entry in catalogue.tools if entry.deprecated} if catalogue is not None else None,
    )
    discovery.warm()
    api = f"the {catalogue.title} API" if catalogue is not None else "this server"
    count = len(discovery)

    async def search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        await discovery.ready()
        return discovery.search(
            str(args.get("query", "")),
            limit=int(args.get("limit", DEFAULT_LIMIT)),
            offset=int(args.get("offset", 0)),
        )

    async def describe(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        path = args.get("path")
        return discovery.describe(str(args["name"]), str(path) if path else None)

    async def call(args: dict[str, Any], ctx: ToolContext) -> mcp_types.CallToolResult:
        arguments = args.get("arguments")
        return await discovery.call(str(args["name"]), arguments if isinstance(arguments, dict) else {}, ctx)

    name_schema = {"type": "string", "description": f"An operation name from {SEARCH}, or its `METHOD /path`."}
    return ToolRegistry(
        [
            Tool(
                name=SEARCH,
                internal=True,
                run=search,
                title="Search operations",
                description=(
                    f"Find operations of {api} ({count} in all) by words in their name, summary, tags, path "
                    "and description. Returns the best matches: name, one-line summary, annotations. "
                    f"Then {DESCRIBE} shows an operation's arguments and {CALL} runs it."
                ),
                input_schema={
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "Words to look for; empty lists every operation."},
                        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT},
                        "offset": {"type": "integer", "minimum": 0, "default": 0},
                    },
                    "required": ["query"],
                    "additionalProperties": False,
                },
                annotations=dict(_READ_ONLY),
            ),
            Tool(
                name=DESCRIBE,
                internal=True,
                run=describe,
                title="Describe an operation",
                description=(
                    "The input schema (the arguments to pass to call_operation), output schema and "
                    "annotations of one operation. A big schema lists its deeper parts as plain objects; "
                    '`path` (dotted names, e.g. "body.recipients") shows one of them.'
                ),
                input_schema={
                    "type": "object",
                    "properties": {
                        "name": name_schema,
                        "path": {"type": "string", "description": "Dotted argument and field names: one part."},
                    },
                    "required": ["name"],
                    "additionalProperties": False,
                },
                annotations=dict(_READ_ONLY),
            ),
            Tool(
                name=CALL,
                internal=True,
                run=call,
                title="Call an operation",
                description=(
                    f"Run one operation of {api} with its arguments (as {DESCRIBE} shows them); returns its "
                    "result. Some operations change or delete data: check the annotations first."
                ),
                input_schema={
                    "type": "object",
                    "properties": {
                        "name": name_schema,
                        "arguments": {"type": "object", "description": "The operation's arguments."},
                    },
                    "required": ["name"],
                    "additionalProperties": False,
                },
                annotations=discovery.call_annotations(),
            ),
        ]
    )


def discovery_instructions(catalogue: Catalogue | None, count: int) -> str:
    api = f"the {catalogue.title} API" if catalogue is not None else "this server"
    return (
        f"The {count} operations of {api} are reached through three tools: {SEARCH} finds them, "
        f"{DESCRIBE} shows one's arguments and result, {CALL} runs one."
    )
