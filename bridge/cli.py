"""The ``mcp-bridge`` command: generate, serve and inspect.

Exit codes: 0 ok, 1 errors (bad spec, failed generation), 2 usage. Heavy modules are imported
inside the commands so that ``serve`` starts without loading the generator.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from bridge.limits import DEFAULT_CALLS_PER_USER
from bridge.sandbox import DEFAULT_MAX_CALLS, DEFAULT_MEMORY_BYTES, DEFAULT_WALL_SECONDS, SandboxLimits
from bridge.sessions import DEFAULT_MAX_PER_CLIENT, DEFAULT_MAX_SESSIONS
from bridge.trim import DEFAULT_MAX_BYTES, DEFAULT_MAX_ITEMS, DEFAULT_MAX_STRING, DEFAULT_OUTPUT_DEPTH
from generator.options import DEFAULT_PROPERTY_DESCRIPTION_LIMIT, DEFAULT_TOOL_DESCRIPTION_LIMIT

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
@click.option("--no-models", is_flag=True, help="Do not write models/ (pydantic models of inputs and outputs).")
@click.option(
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="YAML/JSON file with per-operation overrides: {operations: {<operationId or 'METHOD /path'>: "
    "{name, annotations, exclude, output: {fields, max_items, max_string, max_bytes}, bind}}}, and "
    "bind: {<parameter>: env:VAR or a fixed value} for every operation.",
)
@click.option(
    "--mode",
    type=click.Choice(["tools", "discovery", "code"]),
    default="tools",
    show_default=True,
    help="How `serve` presents the API by default: one tool per operation, three discovery tools, or code "
    "mode (programs against the typed functions of api.pyi).",
)
@click.option("--no-output-schemas", is_flag=True, help="Give no tool an output schema (nor a `fields` argument).")
@click.option("--no-compact", is_flag=True, help="Keep schemas and descriptions as converted (no compaction).")
@click.option(
    "--tool-description-limit",
    type=click.IntRange(40),
    default=DEFAULT_TOOL_DESCRIPTION_LIMIT,
    show_default=True,
    help="Compaction: longest tool description (first paragraph), in characters.",
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
    mode: str,
    no_output_schemas: bool,
    no_compact: bool,
    tool_description_limit: int,
    property_description_limit: int,
    output_depth: int,
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
        bindings=dict(config.get("bind") or {}),
        models=not no_models,
        mode="discovery" if mode == "discovery" else ("code" if mode == "code" else "tools"),
        output_schemas=not no_output_schemas,
        compact=not no_compact,
        tool_description_limit=tool_description_limit,
        property_description_limit=property_description_limit,
        output_depth=output_depth,
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
    if result.catalogue is not None and options.mode == "tools":
        _discovery_hint(result.catalogue, result.out_dir)
    if not result.diff.first_write and result.diff.changed:
        click.echo("Changes since the last generation:")
        for line in result.diff.lines():
            click.echo(f"  {line}")


def _discovery_hint(catalogue: Any, out_dir: Path) -> None:
    """Suggest discovery mode when the tool list alone would cost the model too many tokens."""
    from bridge.inspect import model_visible_tokens
    from bridge.tokens import load_counter
    from generator.options import DISCOVERY_HINT_TOKENS

    counter = load_counter()
    tokens = model_visible_tokens(catalogue, counter)
    if tokens > DISCOVERY_HINT_TOKENS:
        about = "" if counter.exact else "about "
        click.echo(
            f"Hint: the tool list costs {about}{tokens:,} tokens before the first call (over "
            f"{DISCOVERY_HINT_TOKENS:,}). Consider `mcp-bridge serve {out_dir} --mode discovery` (three tools: "
            "search, describe, call), or generate with --mode discovery to make it the default."
        )


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
@click.option(
    "--mode",
    type=click.Choice(["tools", "discovery", "code"]),
    default=None,
    help="One tool per operation, three discovery tools (search, describe, call), or code mode (search, "
    "run_query, run_code: sandboxed Python programs) [default: the package's].",
)
@click.option(
    "--program-timeout",
    type=click.FloatRange(0.1),
    default=DEFAULT_WALL_SECONDS,
    show_default=True,
    help="Code mode: wall-clock seconds one program may run (API calls included).",
)
@click.option(
    "--program-memory",
    type=click.IntRange(1),
    default=DEFAULT_MEMORY_BYTES // (1024 * 1024),
    show_default=True,
    help="Code mode: heap one program may use, MiB.",
)
@click.option(
    "--program-max-calls",
    type=click.IntRange(1),
    default=DEFAULT_MAX_CALLS,
    show_default=True,
    help="Code mode: API calls one program may make.",
)
@click.option(
    "--max-result-bytes",
    type=click.IntRange(1024),
    default=DEFAULT_MAX_BYTES,
    show_default=True,
    help="Byte budget of one result; larger results are cut with a `_truncated` note (stdio lines choke at 64 KB).",
)
@click.option(
    "--max-result-items",
    type=click.IntRange(1),
    default=DEFAULT_MAX_ITEMS,
    show_default=True,
    help="Longest array kept in a result; longer ones keep their first items.",
)
@click.option(
    "--max-result-string",
    type=click.IntRange(256),
    default=DEFAULT_MAX_STRING,
    show_default=True,
    help="Longest string kept in a result, in characters.",
)
@click.option("--no-trim", is_flag=True, help="Return results whole (only the `fields` argument applies).")
@click.option(
    "--max-argument-bytes",
    type=click.IntRange(0),
    default=16 * 1024 * 1024,  # bridge.validation.DEFAULT_MAX_ARGUMENT_BYTES (not imported: --help stays light)
    show_default=True,
    help="Largest arguments of one call (UTF-8 JSON, all together); larger calls get a tool error naming the "
    "biggest argument. 0: no cap. HTTP bodies are also capped at 4 MiB.",
)
@click.option("--no-output-schemas", is_flag=True, help="Advertise no output schemas (saves tokens and bytes).")
@click.option("--spec", "spec_path", help="The spec a package was generated from (for --validate-responses).")
@click.option(
    "--retries",
    type=click.IntRange(0, 10),
    default=0,
    show_default=True,
    help="Retry failed upstream calls: connection failures for any method; 429/502/503/504 and read "
    "errors only for GET, HEAD, OPTIONS, PUT, DELETE; never POST or PATCH.",
)
@click.option(
    "--max-concurrent-calls",
    type=click.IntRange(1),
    default=None,
    help="Upstream calls in flight at once [default: 32]; more wait, then fail with a tool error.",
)
@click.option(
    "--max-queue-wait",
    type=click.FloatRange(0),
    default=None,
    help="Seconds a call waits for a free slot [default: 1].",
)
@click.option(
    "--max-calls-per-second", type=click.FloatRange(0), default=None, help="Per-operation rate limit [default: off]."
)
@click.option(
    "--auth-token-env",
    metavar="NAME",
    help="HTTP: clients may send this static bearer token, read from environment variable NAME.",
)
@click.option(
    "--auth-resource-url", help="HTTP: this server's URL, the tokens' audience [default: from --host/--port]."
)
@click.option(
    "--auth-issuer", "--auth-jwt-issuer", "auth_issuer", help="HTTP: the authorization server's issuer (iss)."
)
@click.option("--auth-jwks-url", metavar="URL", help="HTTP: accept JWT access tokens signed by a key of this JWKS.")
@click.option(
    "--auth-introspection-url", metavar="URL", help="HTTP: accept opaque tokens this RFC 7662 endpoint calls active."
)
@click.option("--auth-client-id-env", metavar="NAME", help="HTTP: the bridge's own OAuth client id (variable NAME).")
@click.option("--auth-client-secret-env", metavar="NAME", help="HTTP: the bridge's own client secret (variable NAME).")
@click.option("--auth-issuer-url", help="HTTP: authorization server named in the protected-resource metadata.")
@click.option("--auth-required-scope", "auth_scopes", multiple=True, help="HTTP: a scope every token must carry.")
@click.option(
    "--token-exchange-url",
    metavar="URL",
    help="HTTP with --auth-*: call OAuth-protected operations as the caller, with a token exchanged here (RFC 8693).",
)
@click.option(
    "--token-exchange-audience",
    metavar="URI",
    help="The audience/resource asked for in token exchange [default: the upstream base URL].",
)
@click.option(
    "--max-calls-per-user",
    type=click.IntRange(1),
    default=DEFAULT_CALLS_PER_USER,
    show_default=True,
    help="HTTP with --auth-*: upstream calls one user may have in flight at once.",
)
@click.option(
    "--max-user-calls-per-second",
    type=click.FloatRange(0),
    default=0.0,
    help="HTTP with --auth-*: calls per second one user may make [default: off].",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(1),
    default=DEFAULT_MAX_SESSIONS,
    show_default=True,
    help="HTTP: open sessions at most; at the limit the least recently used idle session is closed.",
)
@click.option(
    "--max-sessions-per-client",
    type=click.IntRange(1),
    default=DEFAULT_MAX_PER_CLIENT,
    show_default=True,
    help="HTTP: sessions one client (token identity, else peer address) may hold.",
)
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
    mode: str | None,
    program_timeout: float,
    program_memory: int,
    program_max_calls: int,
    max_result_bytes: int,
    max_result_items: int,
    max_result_string: int,
    no_trim: bool,
    max_argument_bytes: int,
    no_output_schemas: bool,
    spec_path: str | None,
    retries: int,
    max_concurrent_calls: int | None,
    max_queue_wait: float | None,
    max_calls_per_second: float | None,
    auth_token_env: str | None,
    auth_resource_url: str | None,
    auth_issuer: str | None,
    auth_jwks_url: str | None,
    auth_introspection_url: str | None,
    auth_client_id_env: str | None,
    auth_client_secret_env: str | None,
    auth_issuer_url: str | None,
    auth_scopes: tuple[str, ...],
    token_exchange_url: str | None,
    token_exchange_audience: str | None,
    max_calls_per_user: int,
    max_user_calls_per_second: float,
    max_sessions: int,
    max_sessions_per_client: int,
) -> None:
    """Serve TARGET over MCP: a generated package folder, or a spec file (generated in memory)."""
    import os

    from bridge.client_auth import AuthOptions, client_auth_from_options, exchange_from_options

    auth_options = AuthOptions(
        token_env=auth_token_env,
        resource_url=auth_resource_url,
        issuer=auth_issuer,
        jwks_url=auth_jwks_url,
        introspection_url=auth_introspection_url,
        client_id_env=auth_client_id_env,
        client_secret_env=auth_client_secret_env,
        issuer_url=auth_issuer_url,
        required_scopes=auth_scopes,
    )
    try:
        auth = client_auth_from_options(auth_options, os.environ, transport=transport, host=host, port=port)
        exchange = exchange_from_options(
            token_exchange_url, token_exchange_audience, auth, auth_client_id_env, auth_client_secret_env, os.environ
        )
    except ValueError as exc:
        _err(f"error: {exc}")  # one line: a server that would fail open never starts
        sys.exit(2)
    from bridge.tuning import prepare_serving_process

    prepare_serving_process()  # before the runtime (and httpx) is imported
    from bridge.serve import ServeOptions, serve_target
    from bridge.trim import TrimSettings

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
        mode="discovery" if mode == "discovery" else ("tools" if mode == "tools" else ("code" if mode else None)),
        sandbox=SandboxLimits(
            wall_seconds=program_timeout, memory_bytes=program_memory * 1024 * 1024, max_calls=program_max_calls
        ),
        trim=None
        if no_trim
        else TrimSettings(max_bytes=max_result_bytes, max_items=max_result_items, max_string=max_result_string),
        output_schemas=not no_output_schemas,
        max_argument_bytes=max_argument_bytes,
        spec=spec_path,
        auth=auth,
        max_sessions=max_sessions,
        max_sessions_per_client=max_sessions_per_client,
        exchange=exchange,
        max_calls_per_user=max_calls_per_user,
        max_user_calls_per_second=max_user_calls_per_second,
        retries=retries,
        max_concurrent_calls=max_concurrent_calls,
        max_queue_wait=max_queue_wait,
        max_calls_per_second=max_calls_per_second,
    )
    sys.exit(serve_target(target, options))


@cli.command()
@click.argument("target")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option(
    "--mode",
    type=click.Choice(["tools", "discovery"]),
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
    from bridge.inspect import inspect_target, print_report, report_json

    try:
        report = inspect_target(target, mode=mode, npm_dirs=tiktoken_dirs)
    except Exception as exc:
        from bridge.errors import BridgeError
        from generator.issues import GenerationError
        from generator.load import SpecError

        if isinstance(exc, BridgeError | SpecError | GenerationError):
            _err(f"error: {exc}")
            sys.exit(1)
        raise
    if as_json:
        click.echo(report_json(report))
    else:
        print_report(report, largest=largest)


def serve_package_main(package_dir: Path) -> None:
    """Entry point of a generated package's ``server.py``: ``serve`` with that folder as target."""
    sys.argv = [sys.argv[0], "serve", str(package_dir), *sys.argv[1:]]
    main()


def main() -> None:
    cli()
