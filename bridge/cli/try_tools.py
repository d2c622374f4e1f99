"""``mcp-bridge list`` and ``mcp-bridge call``: a package's tools, and one call, from the command line.

For people checking a package before they give it to an agent. Both build the very server ``serve``
builds (same runtime, credentials from the same environment variables, same call core) and talk to
it with the official MCP client in memory, so what they print is what a model would get.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import click
from mcp import Client
from mcp import types as mcp_types
from mcp.server.lowlevel import Server

from bridge.cli import err
from bridge.serving.assemble import ServeOptions, build_bridge_server, build_registry, build_runtime, load_target
from bridge.tools.errors import BridgeError

_MODE = click.option(
    "--mode",
    type=click.Choice(["tools", "discovery", "code"]),
    default=None,
    help="Serve the package as this mode [default: the package's own].",
)
_BASE_URL = click.option("--base-url", help="Send calls here instead of the spec's server (<PREFIX>_BASE_URL too).")


def _server(target: str, mode: str | None, base_url: str | None) -> Server[Any]:
    """The server ``serve TARGET`` would run, or a one-line error."""
    options = ServeOptions(base_url=base_url, mode=mode)  # type: ignore[arg-type]  # click checked the choice
    try:
        catalogue, package_dir = load_target(target)
        runtime = build_runtime(catalogue, options)
        registry = build_registry(catalogue, runtime, package_dir)
        return build_bridge_server(
            catalogue,
            registry,
            mode=options.mode,
            redact=runtime.credentials.redact,
            runtime=runtime,
            package_dir=package_dir,
            options=options,
        )
    except BridgeError as exc:
        raise click.ClickException(str(exc)) from None
    except Exception as exc:
        from generator.issues import GenerationError
        from generator.load.reading import SpecError

        if isinstance(exc, SpecError | GenerationError):
            raise click.ClickException(str(exc)) from None
        raise


def _argument_summary(schema: dict[str, Any]) -> str:
    """``name: type`` for each argument, required ones first and marked with ``*``."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    words = []
    for name in sorted(properties, key=lambda n: (n not in required, n)):
        spec = properties[name] if isinstance(properties[name], dict) else {}
        kind = spec.get("type", "any")
        kind = "|".join(str(k) for k in kind) if isinstance(kind, list) else str(kind)
        words.append(f"{name}{'*' if name in required else ''}: {kind}")
    return ", ".join(words) or "(no arguments)"


def _kind(tool: mcp_types.Tool) -> str:
    hints = tool.annotations
    if hints is None:
        return "?"
    if hints.read_only_hint:
        return "read-only"
    return "destructive" if hints.destructive_hint else "writes"


async def _list(server: Server[Any]) -> list[mcp_types.Tool]:
    async with Client(server, mode="legacy") as client:
        return (await client.list_tools()).tools


async def _call(server: Server[Any], tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
    async with Client(server, mode="legacy") as client:
        return await client.call_tool(tool, arguments)


@click.command("list")
@click.argument("target")
@_MODE
@_BASE_URL
@click.option("--json", "as_json", is_flag=True, help="Print the tools/list answer as JSON.")
def list_tools(target: str, mode: str | None, base_url: str | None, as_json: bool) -> None:
    """List TARGET's tools (a package folder or a spec) with their arguments (* = required)."""
    tools = anyio.run(_list, _server(target, mode, base_url))
    if as_json:
        click.echo(json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools], indent=1))
        return
    for tool in tools:
        click.echo(f"{tool.name}  [{_kind(tool)}]")
        click.echo(f"    {_argument_summary(tool.input_schema)}")
    err(f"{len(tools)} tool(s)")


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--args") from None
    if not isinstance(value, dict):
        raise click.BadParameter("must be a JSON object of argument names to values", param_hint="--args")
    return value


@click.command("call")
@click.argument("target")
@click.argument("tool")
@click.option("--args", "args_json", default="{}", show_default=True, help="The arguments, as a JSON object.")
@_MODE
@_BASE_URL
def call_tool(target: str, tool: str, args_json: str, mode: str | None, base_url: str | None) -> None:
    """Call TOOL of TARGET once, through the same call core as ``serve``, and print the result as JSON.

    Exit status 1 when the result is a tool error (its text is still printed).
    """
    arguments = _arguments(args_json)
    result = anyio.run(_call, _server(target, mode, base_url), tool, arguments)
    shown: dict[str, Any] = {"isError": bool(result.is_error)}
    if result.structured_content is not None:
        shown["structuredContent"] = result.structured_content
    shown["content"] = [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content]
    click.echo(json.dumps(shown, indent=1, ensure_ascii=False))
    if result.is_error:
        sys.exit(1)
