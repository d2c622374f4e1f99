from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, MCPError

import bridge.secrets.scrub
import bridge.server.handlers
from bridge.modes.discovery import CALL, discovery_registry
from bridge.server.handlers import build_server
from bridge.tools.errors import ToolDefinitionError, ToolError, UpstreamStatusError
from bridge.tools.registry import Tool, ToolContext, ToolRegistry

pytestmark = pytest.mark.anyio

UPSTREAM_UNAVAILABLE = -32010

SEARCH_INPUT = {
    "type": "object",
    "properties": {
        "q": {"type": "string", "minLength": 1},
        "state": {"type": "string", "enum": ["open", "closed"]},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
    },
    "required": ["q"],
    "additionalProperties": False,
}
SEARCH_OUTPUT = {
    "type": "object",
    "properties": {"total": {"type": "integer"}, "items": {"type": "array", "items": {"type": "object"}}},
    "required": ["total", "items"],
}


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@asynccontextmanager
async def connect(registry: ToolRegistry, mode: str = "auto", **kwargs: Any) -> AsyncIterator[Client]:
    server = build_server(registry, name="bridge-test", version="1.2.3", **kwargs)
    with anyio.fail_after(5):
        async with Client(server, mode=mode) as client:
            yield client


def single(run: Any, name: str = "t", **kwargs: Any) -> ToolRegistry:
    return ToolRegistry([Tool(name=name, run=run, description=f"{name} tool", **kwargs)])


def text_of(result: types.CallToolResult) -> str:
    assert len(result.content) == 1 and isinstance(result.content[0], types.TextContent)
    return result.content[0].text


# --- tools/list ---------------------------------------------------------------------------------


async def test_list_tools_sends_every_field(mode: str) -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> None:
        return None

    registry = ToolRegistry(
        [
            Tool(
                name="search_issues",
                run=run,
                title="Search issues",
                description="GET /issues",
                input_schema=SEARCH_INPUT,
                output_schema=SEARCH_OUTPUT,
                annotations={"readOnlyHint": True, "openWorldHint": True},
                meta={"mcp-bridge/operation": {"method": "GET", "path": "/issues"}},
            ),
            Tool(name="bare", run=run),
        ]
    )
    async with connect(registry, mode) as client:
        listed = (await client.list_tools()).tools
    assert listed == [
        types.Tool(
            name="search_issues",
            title="Search issues",
            description="GET /issues",
            input_schema=SEARCH_INPUT,
            output_schema=SEARCH_OUTPUT,
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=True),
            _meta={"mcp-bridge/operation": {"method": "GET", "path": "/issues"}},
        ),
        types.Tool(name="bare", input_schema={"type": "object"}),
    ]


async def test_tool_list_is_built_once_and_rebuilt_when_the_registry_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    wire_data = bridge.server.handlers.wire_data

    def counting(tool: Tool) -> dict[str, Any]:
        built.append(tool.name)
        return wire_data(tool)

    monkeypatch.setattr(bridge.server.handlers, "wire_data", counting)

    async def run(args: dict[str, Any], ctx: ToolContext) -> None:
        return None

    registry = ToolRegistry([Tool(name="a", run=run), Tool(name="b", run=run)])
    async with connect(registry) as client:
        await client.list_tools()
        await client.list_tools()
        assert built == ["a", "b"]
        registry.add(Tool(name="c", run=run))
        assert [t.name for t in (await client.list_tools()).tools] == ["a", "b", "c"]
    assert built == ["a", "b", "a", "b", "c"]


def test_get_tool_input_schema_is_set() -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> None:
        return None

    server = build_server(single(run, input_schema=SEARCH_INPUT), name="s", version="1")
    assert server.get_tool_input_schema is not None
    assert server.get_tool_input_schema("t") == SEARCH_INPUT
    assert server.get_tool_input_schema("nope") is None


async def test_server_info_and_instructions_reach_the_client() -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> None:
        return None

    server = build_server(single(run), name="bridge-test", version="1.2.3", instructions="Use search first.")
    with anyio.fail_after(5):
        async with Client(server, mode="legacy") as client:
            assert client.server_info is not None
            assert (client.server_info.name, client.server_info.version) == ("bridge-test", "1.2.3")
            assert client.instructions == "Use search first."


# --- registration -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "x" * 129, "GET /issues/{id}", "a,b"])
def test_invalid_tool_name_raises_at_registration(name: str) -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> None:
        return None

    with pytest.raises(ToolDefinitionError):
        single(run, name=name)


def test_duplicate_tool_name_raises_at_registration() -> None:
    registry = ToolRegistry()

    @registry.tool("dup")
    async def first(args: dict[str, Any], ctx: ToolContext) -> None:
        return None

    with pytest.raises(ToolDefinitionError):
        registry.tool("dup")(first)


# --- tools/call ---------------------------------------------------------------------------------


async def test_unknown_tool_is_an_invalid_params_error(mode: str) -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> None:
        return None

    async with connect(single(run), mode) as client:
        with pytest.raises(MCPError) as info:
            await client.call_tool("missing", {})
    assert info.value.code == types.INVALID_PARAMS


async def test_invalid_arguments_list_every_field_and_run_is_not_called(mode: str) -> None:
    calls: list[dict[str, Any]] = []

    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        calls.append(args)
        return "ran"

    async with connect(single(run, name="search_issues", input_schema=SEARCH_INPUT), mode) as client:
        result = await client.call_tool("search_issues", {"limit": 500, "state": "x", "zzz": 1})
    assert result.is_error
    assert text_of(result) == (
        'Invalid arguments for tool "search_issues":\n'
        'Unrecognized key: "zzz"\n'
        "limit: Too big: expected number to be <=50\n"
        "q: Invalid input: expected string, received undefined\n"
        'state: Invalid option: expected one of "open"|"closed"'
    )
    assert calls == []


async def test_missing_arguments_are_validated_as_an_empty_object() -> None:
    calls: list[dict[str, Any]] = []

    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        calls.append(args)
        return "ran"

    async with connect(single(run, input_schema=SEARCH_INPUT)) as client:
        result = await client.call_tool("t")
    assert (result.is_error, text_of(result)) == (
        True,
        'Invalid arguments for tool "t":\nq: Invalid input: expected string, received undefined',
    )
    assert calls == []


async def test_defaults_are_applied_before_run(mode: str) -> None:
    calls: list[dict[str, Any]] = []

    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        calls.append(args)
        return "ok"

    async with connect(single(run, input_schema=SEARCH_INPUT), mode) as client:
        result = await client.call_tool("t", {"q": "bug"})
    assert (result.is_error, text_of(result)) == (False, "ok")
    assert calls == [{"q": "bug", "limit": 10}]


async def test_tool_error_becomes_is_error_with_its_message(mode: str) -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> None:
        raise UpstreamStatusError("No issue with id 7. Call search_issues to find ids.", status=404)

    async with connect(single(run), mode) as client:
        result = await client.call_tool("t", {})
    assert result.is_error
    assert text_of(result) == "No issue with id 7. Call search_issues to find ids."


async def test_tool_error_inside_a_task_group_is_unwrapped() -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> None:
        async def fail() -> None:
            raise ToolError("Upstream said no.")

        async with anyio.create_task_group() as tg:
            tg.start_soon(fail)

    async with connect(single(run)) as client:
        result = await client.call_tool("t", {})
    assert (result.is_error, text_of(result)) == (True, "Upstream said no.")


class LookupFailed(Exception):
    """A hand-written tool's own exception type."""


def _group(exc: Exception) -> ExceptionGroup:
    return ExceptionGroup("task group", [exc])


HAND_WRITTEN_ERRORS = [
    ValueError("No user with id 7. Call list_users to see valid ids."),
    RuntimeError("The cache is warming up; try again in a minute."),
    LookupFailed("sku ABC-1 is unknown"),
    KeyError("id"),
    _group(ValueError("inside a task group")),
    _group(_group(LookupFailed("two groups deep"))),
]


@pytest.mark.parametrize("error", HAND_WRITTEN_ERRORS, ids=lambda e: type(e).__name__)
async def test_a_hand_written_tools_exception_becomes_a_tool_error_with_its_message(
    error: Exception, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> None:
        raise error

    leaf: BaseException = error
    while isinstance(leaf, BaseExceptionGroup):
        leaf = leaf.exceptions[0]
    with caplog.at_level(logging.ERROR, logger="bridge"):
        async with connect(single(run, name="boom"), mode) as client:
            result = await client.call_tool("boom", {})
    assert (result.is_error, text_of(result)) == (True, str(leaf))
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []  # a tool error, not a bug


async def test_the_reference_pages_error_example_reaches_the_model() -> None:
    registry = ToolRegistry()

    @registry.tool("get_user", input_schema={"type": "object", "properties": {"id": {"type": "integer"}}})
    async def get_user(args: dict[str, Any], ctx: ToolContext) -> None:
        raise ValueError(f"No user with id {args['id']}. Call list_users to see valid ids.")

    async with connect(registry) as client:
        result = await client.call_tool("get_user", {"id": 7})
    assert (result.is_error, text_of(result)) == (True, "No user with id 7. Call list_users to see valid ids.")


async def test_an_exception_without_a_message_names_the_tool() -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> None:
        raise ValueError()

    async with connect(single(run, name="quiet")) as client:
        result = await client.call_tool("quiet", {})
    assert (result.is_error, text_of(result)) == (True, 'Tool "quiet" failed.')


async def test_a_hand_written_tools_error_message_is_redacted() -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> None:
        raise RuntimeError(
            "GET https://alice:hunter2@api.example/x?access_token=tok-123 failed; key CONFIGURED-SECRET-42 refused"
        )

    def redact(text: str) -> str:  # as Credentials.redact: configured values, then the structural spellings
        return bridge.secrets.scrub.scrub(text.replace("CONFIGURED-SECRET-42", "***"))

    for kwargs in ({}, {"redact": redact}):
        async with connect(single(run), **kwargs) as client:
            result = await client.call_tool("t", {})
        text = text_of(result)
        assert result.is_error and "hunter2" not in text and "tok-123" not in text
    assert "CONFIGURED-SECRET-42" not in text


@pytest.mark.parametrize(("internal", "generic"), [(False, False), (True, True)])
async def test_call_operation_keeps_the_error_rule_of_the_tool_it_calls(internal: bool, generic: bool) -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> None:
        raise LookupFailed("sku ABC-1 is unknown")

    registry = discovery_registry(single(run, name="price", internal=internal))
    async with connect(registry) as client:
        result = await client.call_tool(CALL, {"name": "price", "arguments": {}})
    expected = bridge.server.handlers.UNEXPECTED_ERROR_MESSAGE.format(name=CALL) if generic else "sku ABC-1 is unknown"
    assert (result.is_error, text_of(result)) == (True, expected)


async def test_a_bridge_tools_unexpected_exception_is_generic_and_logged(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> None:
        raise RuntimeError("db password=hunter2 at /etc/secret.conf")

    with caplog.at_level(logging.ERROR, logger="bridge"):
        async with connect(single(run, name="leaky", internal=True), mode) as client:
            result = await client.call_tool("leaky", {})
    assert result.is_error
    assert text_of(result) == bridge.server.handlers.UNEXPECTED_ERROR_MESSAGE.format(name="leaky")
    [record] = [r for r in caplog.records if r.name.startswith("bridge")]
    assert record.exc_info is not None and isinstance(record.exc_info[1], RuntimeError)


async def test_unsupported_return_value_is_an_unexpected_error(caplog: pytest.LogCaptureFixture) -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> object:
        return object()

    with caplog.at_level(logging.ERROR, logger="bridge"):
        async with connect(single(run)) as client:
            result = await client.call_tool("t", {})
    assert (result.is_error, text_of(result)) == (
        True,
        'Tool "t" failed unexpectedly; the error was logged on the server.',
    )


async def test_mcp_error_passes_through_with_its_code(mode: str) -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> None:
        raise MCPError(code=UPSTREAM_UNAVAILABLE, message="Upstream unavailable", data={"retryAfter": 5})

    async with connect(single(run), mode) as client:
        with pytest.raises(MCPError) as info:
            await client.call_tool("t", {})
    assert (info.value.code, info.value.data) == (UPSTREAM_UNAVAILABLE, {"retryAfter": 5})


async def test_invalid_input_schema_fails_only_that_tool(caplog: pytest.LogCaptureFixture) -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        return "ok"

    registry = ToolRegistry(
        [
            Tool(name="broken", run=run, input_schema={"type": "object", "properties": {"f": {"type": "file"}}}),
            Tool(name="fine", run=run),
        ]
    )
    with caplog.at_level(logging.ERROR, logger="bridge"):
        async with connect(registry) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["broken", "fine"]
            broken = await client.call_tool("broken", {})
            fine = await client.call_tool("fine", {})
    assert (broken.is_error, text_of(broken)) == (
        True,
        'Tool "broken" failed unexpectedly; the error was logged on the server.',
    )
    assert (fine.is_error, text_of(fine)) == (False, "ok")


# --- output schema ------------------------------------------------------------------------------


async def test_output_schema_value_is_structured_content_with_text_copy(mode: str) -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        return {"total": 1, "items": [{"id": 1}]}

    async with connect(single(run, output_schema=SEARCH_OUTPUT), mode) as client:
        result = await client.call_tool("t", {})
    assert result == types.CallToolResult(
        content=[types.TextContent(text='{"total":1,"items":[{"id":1}]}')],
        structured_content={"total": 1, "items": [{"id": 1}]},
        _meta=result.meta,
    )


async def test_output_mismatch_is_an_error_result_not_malformed_data(mode: str) -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        return {"total": "many"}

    async with connect(single(run, output_schema=SEARCH_OUTPUT), mode) as client:
        result = await client.call_tool("t", {})
    assert result.is_error and result.structured_content is None
    assert text_of(result) == (
        'Tool "t" returned a value that does not match its output schema: '
        "items: Invalid input: expected array, received undefined; "
        "total: Invalid input: expected number, received string. "
        "This is a fault of the tool or its upstream API, not of the arguments."
    )


# --- context: progress, _meta, cancellation -----------------------------------------------------


async def test_progress_notifications_reach_the_progress_callback(mode: str) -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        for step in (1, 2, 3):
            await ctx.report_progress(step, 3, f"step {step}")
        return "done"

    got: list[tuple[float, float | None, str | None]] = []
    all_seen = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        got.append((progress, total, message))
        if len(got) == 3:
            all_seen.set()

    async with connect(single(run), mode) as client:
        result = await client.call_tool("t", {}, progress_callback=on_progress)
        with anyio.fail_after(5):  # legacy clients run progress callbacks as separate tasks
            await all_seen.wait()
    assert text_of(result) == "done"
    assert got == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_progress_without_a_token_is_a_no_op(mode: str) -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        await ctx.report_progress(1, 2, "half")
        return "done"

    async with connect(single(run), mode) as client:
        assert text_of(await client.call_tool("t", {})) == "done"


async def test_tool_sees_the_request_meta_with_wire_keys(mode: str) -> None:
    seen: list[dict[str, Any]] = []

    async def run(args: dict[str, Any], ctx: ToolContext) -> None:
        seen.append({"tool": ctx.tool_name, **ctx.meta})

    traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    async with connect(single(run), mode) as client:
        await client.call_tool("t", {}, meta={"traceparent": traceparent, "progress_token": "tok-1"})
    [meta] = seen
    assert meta["tool"] == "t"
    assert meta["traceparent"] == traceparent
    assert meta["progressToken"] == "tok-1"
    assert "progress_token" not in meta


async def test_cancelled_call_cancels_run_and_no_result_arrives(mode: str) -> None:
    started = anyio.Event()
    run_cancelled = anyio.Event()
    contexts: list[ToolContext] = []
    results: list[types.CallToolResult] = []

    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        contexts.append(ctx)
        started.set()
        try:
            await anyio.Event().wait()
        except anyio.get_cancelled_exc_class():
            run_cancelled.set()
            raise
        return "never"

    async def quick(args: dict[str, Any], ctx: ToolContext) -> str:
        return "still serving"

    registry = ToolRegistry([Tool(name="wait", run=run), Tool(name="quick", run=quick)])
    async with connect(registry, mode) as client:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    results.append(await client.call_tool("wait", {}))

                tg.start_soon(call)
                await started.wait()
                tg.cancel_scope.cancel()
            await run_cancelled.wait()
            await contexts[0].cancelled.wait()
        after = await client.call_tool("quick", {})
    assert results == []
    assert text_of(after) == "still serving"


async def test_opentelemetry_middleware_is_kept_unless_dropped() -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        return "ok"

    kept = build_server(single(run), name="s", version="1")
    dropped = build_server(single(run), name="s", version="1", opentelemetry=False)
    ours = ["_ListToolsWireCache", "CallResultWire"]
    assert [type(m).__name__ for m in kept.middleware] == ["OpenTelemetryMiddleware", *ours]
    assert [type(m).__name__ for m in dropped.middleware] == ours
    async with connect(single(run), opentelemetry=False) as client:
        assert text_of(await client.call_tool("t", {})) == "ok"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_repeated_tools_list_is_identical_and_follows_registry_changes(mode: str) -> None:
    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        return "ok"

    registry = single(run)
    server = build_server(registry, name="s", version="1")
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        first = await client.list_tools(cache_mode="bypass")
        second = await client.list_tools(cache_mode="bypass")
        assert first.tools == second.tools
        registry.add(Tool(name="added", run=run, description="new"))
        third = await client.list_tools(cache_mode="bypass")
    assert [t.name for t in third.tools] == ["t", "added"]


@pytest.mark.anyio
async def test_a_tool_can_receive_its_arguments_without_schema_defaults() -> None:
    seen: list[dict[str, Any]] = []

    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        seen.append(args)
        return "ok"

    schema = {"type": "object", "properties": {"limit": {"type": "integer", "default": 20, "maximum": 50}}}
    registry = ToolRegistry(
        [
            Tool(name="filled", run=run, input_schema=schema),
            Tool(name="as_sent", run=run, input_schema=schema, apply_defaults=False),
        ]
    )
    async with Client(build_server(registry, name="s", version="1")) as client:
        await client.call_tool("filled", {})
        await client.call_tool("as_sent", {})
        refused = await client.call_tool("as_sent", {"limit": 99})
    assert seen == [{"limit": 20}, {}]
    assert refused.is_error
