"""``mcp-bridge serve``: a package or a spec over stdio or streamable HTTP.

Imports nothing of the generator unless the target is a spec (``bridge.serving.assemble.load_target``).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from bridge.calls.longrunning import DEFAULT_DEADLINE, DEFAULT_WAIT
from bridge.cli import err as _err
from bridge.cli.help_topics import SERVE_TOPICS, TopicCommand
from bridge.cli.ops_options import ops_options, ops_settings, with_env_vars
from bridge.cli.shared_options import mode_option, overlay_option, workflows_option
from bridge.confirm.policy import DEFAULT_TIMEOUT as DEFAULT_CONFIRM_TIMEOUT
from bridge.modes.sandbox import DEFAULT_MAX_CALLS, DEFAULT_MEMORY_BYTES, DEFAULT_WALL_SECONDS, SandboxLimits
from bridge.results.trim import DEFAULT_MAX_BYTES, DEFAULT_MAX_ITEMS, DEFAULT_MAX_STRING
from bridge.server.sessions import DEFAULT_MAX_PER_CLIENT, DEFAULT_MAX_SESSIONS
from bridge.tools.argument_size import DEFAULT_MAX_ARGUMENT_BYTES
from bridge.upstream.limits import DEFAULT_CALLS_PER_USER


def forwarded_networks(value: str) -> tuple[str, ...]:
    """``--forwarded-allow-ips``: each entry an IP address or network (or ``*``), else a usage error."""
    import ipaddress

    entries = tuple(item.strip() for item in value.split(",") if item.strip())
    for entry in entries:
        try:
            if entry != "*":
                ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise click.UsageError(f"--forwarded-allow-ips: {entry!r} is not an IP address or network") from None
    return entries


@with_env_vars
@click.command(
    cls=TopicCommand,
    topics=SERVE_TOPICS,
    epilog="Every option can also be set by an environment variable, MCP_BRIDGE_<OPTION> (shown beside it; "
    "MCP_BRIDGE_TARGET for TARGET); the command line wins.",
)
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
@click.option(
    "--forwarded-allow-ips",
    default="",
    metavar="ADDRESSES",
    help="HTTP: comma-separated addresses or networks of the reverse proxies whose X-Forwarded-For and "
    "X-Forwarded-Proto are trusted [default: none, so a client cannot pick its own address].",
)
@click.option("--base-url", help="Upstream base URL [default: $<PREFIX>_BASE_URL, else the spec's first server].")
@click.option(
    "--server",
    "server_number",
    type=click.IntRange(1),
    default=None,
    metavar="N",
    help="Call the spec's server number N (from 1; see the package README) [default: the first].",
)
@click.option(
    "--server-var",
    "server_vars",
    multiple=True,
    metavar="NAME=VALUE",
    help="Value of a variable of the chosen server's URL (must be in the spec's enum when it has one).",
)
@click.option("--timeout", type=click.FloatRange(0.1), default=None, help="Whole-call deadline, seconds [default: 60].")
@click.option("--validate-responses", is_flag=True, help="Check upstream responses against the spec; log mismatches.")
@mode_option(
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
    default=DEFAULT_MAX_ARGUMENT_BYTES,
    show_default=True,
    help="Largest arguments of one call (UTF-8 JSON, all together); larger calls get a tool error naming the "
    "biggest argument. 0: no cap. HTTP bodies are also capped at 4 MiB.",
)
@click.option("--no-output-schemas", is_flag=True, help="Advertise no output schemas (saves tokens and bytes).")
@click.option(
    "--confirm",
    type=click.Choice(["none", "destructive", "writes"]),
    default="none",
    show_default=True,
    help="Ask the user (MCP elicitation) before calls: destructive ones, or every one that is not read-only. "
    "Declined: a tool error, nothing sent.",
)
@click.option(
    "--confirm-fallback",
    type=click.Choice(["refuse", "proceed"]),
    default="refuse",
    show_default=True,
    help="With --confirm, for clients that cannot be asked: refuse the call (a tool error), or send it unasked.",
)
@click.option(
    "--confirm-timeout",
    type=click.FloatRange(1),
    default=DEFAULT_CONFIRM_TIMEOUT,
    show_default=True,
    help="Seconds the user has to answer a confirmation; no answer counts as cancel.",
)
@click.option(
    "--resources", "resources", is_flag=True, help="Also offer GET operations as MCP resources and resource templates."
)
@click.option(
    "--icon",
    "icons",
    multiple=True,
    metavar="URL|FILE",
    help="The server's icon in initialize: an https or data: URL, or an image file (replaces the package's).",
)
@click.option(
    "--async-wait",
    type=click.FloatRange(0),
    default=DEFAULT_WAIT,
    show_default=True,
    help="Long-running operations: seconds a call without MCP tasks waits before answering with a handle "
    "to check again (get_operation_status).",
)
@click.option(
    "--async-deadline",
    type=click.FloatRange(1),
    default=DEFAULT_DEADLINE,
    show_default=True,
    help="Long-running operations: the longest the bridge follows one (an MCP task, or status checks).",
)
@click.option("--spec", "spec_path", help="The spec a package was generated from (for --validate-responses).")
@overlay_option
@workflows_option
@click.option(
    "--no-cache",
    "no_cache",
    is_flag=True,
    help="A spec TARGET: generate its catalogue at every start instead of reading it from the user's cache folder "
    "($XDG_CACHE_HOME/mcp-bridge).",
)
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
@ops_options
def serve(
    target: str,
    transport: str,
    host: str,
    port: int,
    stateless: bool,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    forwarded_allow_ips: str,
    base_url: str | None,
    server_number: int | None,
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
    confirm: str,
    confirm_fallback: str,
    confirm_timeout: float,
    resources: bool,
    icons: tuple[str, ...],
    async_wait: float,
    async_deadline: float,
    spec_path: str | None,
    overlays: tuple[str, ...],
    workflows: tuple[str, ...],
    no_cache: bool,
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
    **ops_values: Any,
) -> None:
    """Serve TARGET over MCP: a generated package folder, or a spec file (generated in memory)."""
    import os

    from bridge.serving.tuning import prepare_serving_process

    prepare_serving_process()  # first: before anything imports httpx
    ops = ops_settings(ops_values, transport=transport)
    from bridge.identity.auth_options import AuthOptions, client_auth_from_options, exchange_from_options

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
    from bridge.calls.longrunning.follow import FollowSettings
    from bridge.confirm.policy import ConfirmSettings
    from bridge.contract.icons import IconError, icon_from_option
    from bridge.serving.assemble import ServeOptions
    from bridge.serving.process import serve_target

    try:
        icon_specs = tuple(icon_from_option(icon) for icon in icons)
    except IconError as exc:
        _err(f"error: --icon: {exc}")
        sys.exit(2)
    from bridge.results.trim import TrimSettings

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
        forwarded_allow_ips=forwarded_networks(forwarded_allow_ips),
        base_url=base_url,
        server_variables=variables,
        server=server_number,
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
        overlays=overlays,
        workflows=workflows,
        cache=not no_cache,
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
        confirm=ConfirmSettings(
            level="writes" if confirm == "writes" else ("destructive" if confirm == "destructive" else "none"),
            fallback="proceed" if confirm_fallback == "proceed" else "refuse",
            timeout=confirm_timeout,
        ),
        resources=resources,
        icons=icon_specs,
        long_running=FollowSettings(wait=async_wait, deadline=max(async_deadline, async_wait)),
        ops=ops,
    )
    sys.exit(serve_target(target, options))
