"""``mcp-bridge inspect``: a package's or spec's tools with their annotations and token costs."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from bridge.cli import err as _err


@click.command()
@click.argument("target")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option(
    "--mode",
    type=click.Choice(["tools", "discovery", "code"]),
    default=None,
    help="Inspect the tool list of this mode [default: the package's].",
)
@click.option(
    "--largest", type=click.IntRange(0), default=10, show_default=True, help="How many largest tools to list."
)
@click.option(
    "--tiktoken-dir",
    "tiktoken_dirs",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder holding the npm package `tiktoken` (or its node_modules) to count exactly offline (repeatable).",
)
def inspect(target: str, as_json: bool, mode: str | None, largest: int, tiktoken_dirs: tuple[Path, ...]) -> None:
    """Show TARGET's tools (package folder or spec) with annotations and the tokens each costs the model."""
    from bridge.cli.costs import inspect_target, print_report, report_json

    try:
        report = inspect_target(target, mode=mode, npm_dirs=tiktoken_dirs)
    except Exception as exc:
        from bridge.tools.errors import BridgeError
        from generator.issues import GenerationError
        from generator.load.reading import SpecError

        if isinstance(exc, BridgeError | SpecError | GenerationError):
            _err(f"error: {exc}")
            sys.exit(1)
        raise
    if as_json:
        click.echo(report_json(report))
    else:
        print_report(report, largest=largest)
