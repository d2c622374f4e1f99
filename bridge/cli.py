"""The ``mcp-bridge`` command: generate, serve and inspect.

Exit codes: 0 ok, 1 errors (bad spec, failed generation), 2 usage. Heavy modules are imported
inside the commands so that ``serve`` starts without loading the generator.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

PROGRESS_THRESHOLD = 100  # operations above which `generate` shows a progress bar


def _err(message: str) -> None:
    click.echo(message, err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="mcp-bridge")
def cli() -> None:
    """Turn an OpenAPI description into an MCP server: generate a package, then serve it."""


def _read_config(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise click.UsageError(f"cannot read config {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise click.UsageError(f"config {path} must be a mapping")
    return data


@cli.command()
@click.argument("spec")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Package folder [default: generated/<name>].")
@click.option("--name", help="Package name [default: from the spec's title].")
@click.option(
    "--max-name-length",
    type=click.IntRange(8, 128),
    default=64,
    show_default=True,
    help="Longest tool name; longer names are shortened with a short hash.",
)
@click.option(
    "--description-limit",
    type=click.IntRange(80),
    default=1024,
    show_default=True,
    help="Longest tool description, in characters; longer text is cut with a marker.",
)
@click.option("--include-tags", multiple=True, help="Keep only operations with one of these tags (repeatable).")
@click.option("--exclude-tags", multiple=True, help="Drop operations with one of these tags (repeatable).")
@click.option(
    "--include-operations",
    multiple=True,
    help="Keep only operations matching a glob on operationId or 'METHOD /path' (repeatable).",
)
@click.option(
    "--exclude-operations",
    multiple=True,
    help="Drop operations matching a glob on operationId or 'METHOD /path' (repeatable).",
)
@click.option("--read-only", is_flag=True, help="Keep only operations that do not write (GET, HEAD, OPTIONS).")
@click.option("--strict", is_flag=True, help="Treat warnings (skipped operations) as errors.")
@click.option("--allow-remote-refs", is_flag=True, help="Follow http(s) $refs (refused by default).")
@click.option("--no-models", is_flag=True, help="Do not write models.py (pydantic models of inputs and outputs).")
@click.option(
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="YAML/JSON file with per-operation overrides: {operations: {<operationId or 'METHOD /path'>: "
    "{name, annotations, exclude}}}.",
)
def generate(
    spec: str,
    output: Path | None,
    name: str | None,
    max_name_length: int,
    description_limit: int,
    include_tags: tuple[str, ...],
    exclude_tags: tuple[str, ...],
    include_operations: tuple[str, ...],
    exclude_operations: tuple[str, ...],
    read_only: bool,
    strict: bool,
    allow_remote_refs: bool,
    no_models: bool,
    config_path: Path | None,
) -> None:
    """Read an OpenAPI 2.0/3.0/3.1 SPEC (file or http(s) URL) and write an MCP server package."""
    from generator.generate import generate as run_generate
    from generator.issues import GenerationError, Level
    from generator.load import SpecError
    from generator.options import GenerateOptions

    config = _read_config(config_path)
    options = GenerateOptions(
        name=name,
        max_name_length=max_name_length,
        description_limit=description_limit,
        include_tags=include_tags,
        exclude_tags=exclude_tags,
        include_operations=include_operations,
        exclude_operations=exclude_operations,
        read_only=read_only,
        strict=strict,
        allow_remote_refs=allow_remote_refs,
        overrides=dict(config.get("operations") or {}),
        models=not no_models,
    )
    try:
        with _Steps() as steps:
            result = run_generate(spec, output, options, step=steps.step)
    except SpecError as exc:
        for problem in exc.problems:
            _err(f"error: {problem}")
        sys.exit(1)
    except GenerationError as exc:
        for issue in exc.issues:
            _err(str(issue))
        sys.exit(1)
    for issue in result.issues:
        if issue.level is Level.WARNING:
            _err(str(issue))
    click.echo(f"Wrote {result.out_dir} ({len(result.api.operations)} tools from {spec})")
    if not result.diff.first_write and result.diff.changed:
        click.echo("Changes since the last generation:")
        for line in result.diff.lines():
            click.echo(f"  {line}")


class _Steps:
    """A rich progress bar over the generation steps, shown only for big specs on a terminal."""

    STEPS = ("load", "parse", "render", "write")

    def __init__(self) -> None:
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> _Steps:
        return self

    def step(self, name: str) -> None:
        if name == "parse" and self._progress is None and sys.stderr.isatty():
            from rich.progress import Progress

            self._progress = Progress(transient=True)
            self._progress.start()
            self._task = self._progress.add_task("generating", total=len(self.STEPS))
        if self._progress is not None:
            self._progress.update(self._task, completed=self.STEPS.index(name), description=name)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()


@cli.command()
@click.argument("target")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: address to bind.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="HTTP: port.")
@click.option("--stateless", is_flag=True, help="HTTP: no sessions, so several workers can share a load balancer.")
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    help="HTTP: Host header values to accept besides the bound address (for a reverse proxy).",
)
@click.option("--allowed-origin", "allowed_origins", multiple=True, help="HTTP: browser Origins to accept.")
@click.option("--base-url", help="Upstream base URL [default: $<PREFIX>_BASE_URL, else the spec's first server].")
@click.option(
    "--server-var",
    "server_vars",
    multiple=True,
    metavar="NAME=VALUE",
    help="Value of a server URL variable (must be in the spec's enum when it has one).",
)
@click.option("--timeout", type=click.FloatRange(0.1), default=None, help="Overall deadline of one call, seconds.")
@click.option("--validate-responses", is_flag=True, help="Check upstream responses against the spec; log mismatches.")
def serve(
    target: str,
    transport: str,
    host: str,
    port: int,
    stateless: bool,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    base_url: str | None,
    server_vars: tuple[str, ...],
    timeout: float | None,
    validate_responses: bool,
) -> None:
    """Serve TARGET over MCP: a generated package folder, or a spec file (generated in memory)."""
    from bridge.serve import ServeOptions, serve_target

    variables: dict[str, str] = {}
    for item in server_vars:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.UsageError(f"--server-var takes NAME=VALUE, got {item!r}")
        variables[key] = value
    options = ServeOptions(
        transport=transport,
        host=host,
        port=port,
        stateless=stateless,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        base_url=base_url,
        server_variables=variables,
        timeout=timeout,
        validate_responses=validate_responses,
    )
    sys.exit(serve_target(target, options))


def serve_package_main(package_dir: Path) -> None:
    """Entry point of a generated package's ``server.py``: ``serve`` with that folder as target."""
    sys.argv = [sys.argv[0], "serve", str(package_dir), *sys.argv[1:]]
    main()


def main() -> None:
    cli()
