"""The ``mcp-bridge`` command: generate, serve, inspect, install into a client, and list or call tools.

Exit codes: 0 ok, 1 errors (bad spec, failed generation), 2 usage. Each command lives in a module
of its own, imported only when that command runs (click's lazy-group pattern), so ``mcp-bridge
serve PACKAGE`` never loads the generator or its libraries.

Public face (docs/library.md, "What you may import"): :func:`main` (the console script) and
:func:`serve_package_main` (every generated ``server.py`` calls it).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import click

from bridge.contract.version import DISTRIBUTION

__all__ = ["main", "serve_package_main"]

COMMANDS = {
    "generate": "bridge.cli.generate:generate",
    "serve": "bridge.cli.serve:serve",
    "inspect": "bridge.cli.inspect:inspect",
    "install": "bridge.cli.install:install",
    "list": "bridge.cli.try_tools:list_tools",
    "demo": "bridge.cli.demo:demo",
    "call": "bridge.cli.try_tools:call_tool",
}


def err(message: str) -> None:
    click.echo(message, err=True)


class _LazyGroup(click.Group):
    """A group whose commands are imported when they are asked for, not when the group is."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, _, attribute = target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name=DISTRIBUTION, prog_name="mcp-bridge")
def cli() -> None:
    """Turn an OpenAPI description into an MCP server: generate a package, then serve it."""


def serve_package_main(package_dir: Path) -> None:
    """Entry point of a generated package's ``server.py``: ``serve`` with that folder as target."""
    sys.argv = [sys.argv[0], "serve", str(package_dir), *sys.argv[1:]]
    main()


def main() -> None:
    try:
        cli()
    except ModuleNotFoundError as exc:  # an optional or slim-install dependency: one line, not a traceback
        from bridge.cli.extras import missing

        error = missing(exc.name or "")
        if error is None:
            raise
        error.show()
        sys.exit(error.exit_code)
