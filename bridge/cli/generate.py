"""``mcp-bridge generate``: a spec to a reviewable package (the only command that loads the generator)."""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from bridge.cli import err as _err
from bridge.cli.help_topics import GENERATE_TOPICS, TopicCommand
from bridge.cli.shared_options import mode_option, overlay_option, workflows_option
from bridge.contract.schema_bound import DEFAULT_INPUT_SCHEMA_BYTES
from bridge.results.trim import DEFAULT_OUTPUT_DEPTH
from generator.options import (
    DEFAULT_DESCRIPTION_LIMIT,
    DEFAULT_PROPERTY_DESCRIPTION_LIMIT,
    DEFAULT_TOOL_DESCRIPTION_LIMIT,
)


def _read_config(path: Path | None) -> dict[str, Any]:
    """The ``--config`` mapping, checked against generator/load/config.schema.json: each problem one line, exit 2."""
    if path is None:
        return {}
    from generator.load.config import ConfigError, read_config

    try:
        return read_config(path)
    except ConfigError as exc:
        for problem in exc.problems:
            _err(f"error: {problem}")
        sys.exit(2)


def _mapping(config: dict[str, Any], *keys: str) -> dict[str, Any]:
    for key in keys:
        if key in config:
            value = config[key]
            if not isinstance(value, dict):
                raise click.UsageError(f"config `{key}` must be a mapping")
            return dict(value)
    return {}


def _security(config: dict[str, Any]) -> list[Any] | None:
    value = config.get("security")
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise click.UsageError("config `security` must be a list of requirements such as [{bearer: []}]")
    return list(value)


@click.command(cls=TopicCommand, topics=GENERATE_TOPICS)
@click.argument("spec")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Package folder [default: generated/<name>].")
@click.option("--name", help="Package name [default: the -o folder's name, else from the spec's title].")
@click.option(
    "--env-prefix",
    callback=lambda _ctx, _param, value: _env_prefix(value),
    help="Prefix of the package's environment variables (<PREFIX>_BASE_URL, ...) [default: from the package name].",
)
@click.option("--allow-empty", is_flag=True, help="Write the package even when no tool is left (a warning).")
@click.option(
    "--replace",
    is_flag=True,
    help="Write over the -o folder even when it holds the package of another API (refused without it); "
    "names and variables then come from this spec, not from the old package.",
)
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
    default=None,
    help="Deprecated: the old name of --tool-description-limit (the smaller of the two wins).",
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
# Deprecated: packages have no models/ since api.pyi became their typed layer; accepted so old scripts run.
@click.option("--no-models", is_flag=True, hidden=True)
@click.option(
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="YAML/JSON file with per-operation overrides: {operations: {<operationId or 'METHOD /path'>: "
    "{name, annotations, exclude, output: {fields, max_items, max_string, max_bytes}, bind, security, async}}}; "
    "bind: {<parameter or body property>: env:VAR or a fixed value} for every operation; security_schemes: "
    "{<name>: <OpenAPI security scheme>} and security: [{<name>: []}] for schemes the spec left out; "
    "headers: {<header>: env:VAR or a fixed value} sent on every request; server: {instructions, title, "
    "icons} for initialize; overlays: / workflows: [files].",
)
@overlay_option
@workflows_option
@mode_option(
    default="tools",
    help="How `serve` presents the API by default: one tool per operation, three discovery tools, or code "
    "mode (programs against the typed functions of api.pyi).",
)
@click.option("--no-output-schemas", is_flag=True, help="Give no tool an output schema (nor a `fields` argument).")
@click.option("--no-compact", is_flag=True, help="Keep schemas and descriptions as converted (no compaction).")
@click.option(
    "--tool-description-limit",
    type=click.IntRange(40),
    default=None,
    help=f"Longest tool description, in characters; longer text is cut at a sentence or word "
    f"[default: {DEFAULT_TOOL_DESCRIPTION_LIMIT}; {DEFAULT_DESCRIPTION_LIMIT} with --no-compact].",
)
@click.option(
    "--property-description-limit",
    type=click.IntRange(0),
    default=DEFAULT_PROPERTY_DESCRIPTION_LIMIT,
    show_default=True,
    help="Compaction: longest argument/property description, in characters.",
)
@click.option(
    "--output-depth",
    type=click.IntRange(0),
    default=DEFAULT_OUTPUT_DEPTH,
    show_default=True,
    help="Object levels an output schema spells out; deeper objects are given by their type only.",
)
@click.option(
    "--max-input-schema-bytes",
    type=click.IntRange(0),
    default=DEFAULT_INPUT_SCHEMA_BYTES,
    show_default=True,
    help="Largest input schema a tool shows (compact JSON); deeper parts become plain objects, and arguments "
    "are still checked against the whole schema. 0: no bound.",
)
def generate(
    spec: str,
    output: Path | None,
    name: str | None,
    env_prefix: str | None,
    allow_empty: bool,
    replace: bool,
    max_name_length: int,
    description_limit: int | None,
    include_tags: tuple[str, ...],
    exclude_tags: tuple[str, ...],
    include_operations: tuple[str, ...],
    exclude_operations: tuple[str, ...],
    read_only: bool,
    strict: bool,
    allow_remote_refs: bool,
    no_models: bool,
    config_path: Path | None,
    overlays: tuple[str, ...],
    workflows: tuple[str, ...],
    mode: str,
    no_output_schemas: bool,
    no_compact: bool,
    tool_description_limit: int | None,
    property_description_limit: int,
    output_depth: int,
    max_input_schema_bytes: int,
) -> None:
    """Read an OpenAPI 2.0/3.0/3.1 SPEC (file or http(s) URL) and write an MCP server package."""
    from generator.emit.render import RunCommand
    from generator.generate import generate as run_generate
    from generator.issues import GenerationError, Level
    from generator.load.reading import SpecError
    from generator.options import GenerateOptions

    if no_models:
        _err("warning: --no-models is deprecated and does nothing: packages have no models/ (api.pyi is typed)")
    config = _read_config(config_path)
    name, env_prefix = _names(output, name, env_prefix, fresh=replace)
    if description_limit is not None:
        _err("warning: --description-limit is deprecated; use --tool-description-limit")
        limits = [limit for limit in (description_limit, tool_description_limit) if limit is not None]
        tool_description_limit = min(limits)
    options = GenerateOptions(
        name=name,
        env_prefix=env_prefix,
        allow_empty=allow_empty,
        max_name_length=max_name_length,
        include_tags=include_tags,
        exclude_tags=exclude_tags,
        include_operations=include_operations,
        exclude_operations=exclude_operations,
        read_only=read_only,
        strict=strict,
        allow_remote_refs=allow_remote_refs,
        overlays=(*_config_paths(config, "overlays", config_path), *overlays),
        workflows=(*_config_paths(config, "workflows", config_path), *workflows),
        overrides=dict(config.get("operations") or {}),
        bindings=dict(config.get("bind") or {}),
        server=dict(server) if isinstance(server := config.get("server"), dict) else {},
        security_schemes=_mapping(config, "security_schemes", "securitySchemes"),
        security=_security(config),
        headers=_mapping(config, "headers"),
        mode="discovery" if mode == "discovery" else ("code" if mode == "code" else "tools"),
        output_schemas=not no_output_schemas,
        compact=not no_compact,
        tool_description_limit=tool_description_limit,
        property_description_limit=property_description_limit,
        output_depth=output_depth,
        max_input_schema_bytes=max_input_schema_bytes,
        replace=replace,
    )
    try:
        with _Steps() as steps, _interruptible() as interrupted, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # third-party warnings name library files; issues say what matters
            step = interrupted.checked(steps.step)
            result = run_generate(spec, output, options, step=step, run=RunCommand(_program(), absolute=True))
    except SpecError as exc:
        for problem in exc.problems:
            _err(f"error: {problem}")
        sys.exit(1)
    except GenerationError as exc:
        for issue in exc.issues:
            _err(str(issue))
        sys.exit(1)
    except OSError as exc:  # the write step's WriteError, or an unreadable config/spec path
        _err(f"error: {' '.join(str(exc).split())}")
        sys.exit(1)
    except KeyboardInterrupt:
        _err(f"error: stopped by {interrupted.name or 'SIGINT'}; nothing more was generated")
        sys.exit(128 + (interrupted.signal or 2))
    for issue in result.issues:
        if issue.level in (Level.WARNING, Level.NOTE):
            _err(str(issue))
    flows = len(result.catalogue.workflows) if result.catalogue is not None else 0
    made = f"{len(result.api.operations)} tools" + (f" and {flows} workflow tools" if flows else "")
    click.echo(f"Wrote {result.out_dir} ({made} from {spec})")
    if result.catalogue is not None and options.mode == "tools":
        _discovery_hint(result.catalogue, result.out_dir)
    if not result.diff.first_write and result.diff.changed:
        click.echo("Changes since the last generation:")
        for line in result.diff.lines():
            click.echo(f"  {line}")


def _config_paths(config: dict[str, Any], key: str, config_path: Path | None) -> tuple[str, ...]:
    """``overlays:`` / ``workflows:`` of the config: file paths, relative to the config's folder."""
    value = config.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise click.UsageError(f"config {config_path}: `{key}:` must be a list of file paths")
    base = config_path.parent if config_path is not None else Path()
    return tuple(str(base / item) for item in value)


def _names(
    output: Path | None, name: str | None, env_prefix: str | None, *, fresh: bool = False
) -> tuple[str | None, str | None]:
    """The package name and variable prefix: the options when given; regenerating a package, what
    its manifest records (no variable is renamed under a user's feet); else, with -o, the folder's
    name (the package README names variables after it); else None (from the spec's title). ``fresh``
    (``--replace``): the manifest is not read, the old package is of another API."""
    if output is None or (name is not None and env_prefix is not None):
        return name, env_prefix
    from generator.emit.write import recorded_names
    from generator.parse.api import package_name

    recorded_name, recorded_prefix = (None, None) if fresh else recorded_names(output)
    if name is None:
        name = recorded_name or package_name(output.absolute().name)
    if env_prefix is None and recorded_prefix is not None and name == recorded_name:
        env_prefix = recorded_prefix
    return name, env_prefix


def _env_prefix(value: str | None) -> str | None:
    import re

    if value is not None and not re.fullmatch(r"[A-Z_][A-Z0-9_]*", value):
        raise click.BadParameter(f"{value!r} is not an environment variable prefix (A-Z, 0-9, _)")
    return value


def _program() -> tuple[str, ...]:
    """How a client starts this mcp-bridge: one that will still exist (never a uvx cache folder)."""
    from bridge.cli.client_files import stable_program

    return stable_program()


class _Interrupted:
    """Which signal stopped the run (SIGTERM is turned into KeyboardInterrupt so cleanup runs)."""

    name: str | None = None
    signal: int | None = None

    def checked(self, step: Callable[[str], None]) -> Callable[[str], None]:
        """``step`` that raises again at each step once a signal came: a library may have eaten the first."""

        def check(name: str) -> None:
            if self.signal is not None:
                raise KeyboardInterrupt
            step(name)

        return check


@contextlib.contextmanager
def _interruptible() -> Iterator[_Interrupted]:
    import signal
    import threading

    state = _Interrupted()
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield state
        return

    def on_signal(signum: int, _frame: object) -> None:
        state.name, state.signal = signal.Signals(signum).name, signum
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield state
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _discovery_hint(catalogue: Any, out_dir: Path) -> None:
    """Suggest discovery mode when the tool list alone would cost the model too many tokens.

    The count is the one the package README's client configs and ``mcp-bridge install`` give and
    decide by (bridge/contract/clients/start_mode.py: characters / 4), so the three never differ;
    ``mcp-bridge inspect`` counts exactly and prints this estimate beside it.
    """
    from bridge.contract.clients.start_mode import start_mode

    _, reason = start_mode(catalogue)
    if reason is not None:
        click.echo(
            f"Hint: {reason}. The README's client configs and `mcp-bridge install` start it with "
            f"`mcp-bridge serve {out_dir} --mode discovery`; generate with --mode discovery to make it the "
            "package's default; `mcp-bridge inspect` counts the tokens exactly."
        )


class _Steps:
    """A rich progress bar over the generation steps, shown only when stderr is a terminal."""

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
