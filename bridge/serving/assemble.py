"""``mcp-bridge serve``: a package folder or a spec file, served over stdio or streamable HTTP."""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from mcp.server.lowlevel import Server

from bridge.calls.http_tools import tools_from_catalogue
from bridge.calls.longrunning.follow import FollowSettings
from bridge.calls.longrunning.status_tool import STATUS_TOOL, status_tool
from bridge.calls.longrunning.tracker import INSTRUCTIONS as LONG_RUNNING_INSTRUCTIONS
from bridge.calls.runtime import HttpRuntime
from bridge.confirm.asking import Confirmations
from bridge.confirm.policy import INSTRUCTIONS as CONFIRM_INSTRUCTIONS
from bridge.confirm.policy import ConfirmSettings
from bridge.contract.catalogue import Catalogue, IconSpec, ServeMode, stub_entries
from bridge.contract.version import install_hint
from bridge.identity.auth_options import ExchangeOptions
from bridge.identity.client_auth import ClientAuth, ClientTokenVerifier
from bridge.identity.scopes import call_requirement as scopes_call_requirement
from bridge.identity.token_exchange import ExchangeSettings, TokenExchanger
from bridge.modes.discovery import CALL as DISCOVERY_CALL
from bridge.modes.discovery import discovery_instructions, discovery_registry
from bridge.modes.sandbox import Sandbox, SandboxLimits
from bridge.ops.settings import OpsSettings
from bridge.results.response_check import ResponseContract
from bridge.results.trim import FIELDS_INSTRUCTIONS, TrimSettings
from bridge.results.trim import INSTRUCTIONS as TRIM_INSTRUCTIONS
from bridge.secrets.scrub import scrub
from bridge.server.handlers import build_server
from bridge.server.info import server_identity
from bridge.server.sessions import DEFAULT_MAX_PER_CLIENT, DEFAULT_MAX_SESSIONS
from bridge.server.tasks import TaskRunner
from bridge.server.transports import ASGIApp, http_app
from bridge.serving.package import apply_hooks, load_catalogue
from bridge.serving.startup import base_url_source, startup_lines
from bridge.tools.argument_size import DEFAULT_MAX_ARGUMENT_BYTES
from bridge.tools.errors import BridgeError
from bridge.tools.registry import ToolRegistry
from bridge.upstream.http_settings import HttpSettings
from bridge.upstream.limits import DEFAULT_CALLS_PER_USER, CallerLimits

if TYPE_CHECKING:
    from bridge.modes.codemode import CodeMode

logger = logging.getLogger("bridge")


@dataclass(frozen=True, slots=True)
class ServeOptions:
    transport: str = "stdio"
    host: str = "127.0.0.1"
    port: int = 8000
    stateless: bool = False
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    forwarded_allow_ips: tuple[str, ...] = ()  # reverse proxies whose X-Forwarded-* are trusted
    base_url: str | None = None
    server_variables: dict[str, str] = field(default_factory=dict)
    server: int | None = None  # which of the spec's servers (from 1) when no base URL is set
    timeout: float | None = None
    validate_responses: bool = False
    mode: ServeMode | None = None  # None: the catalogue's default mode
    output_schemas: bool = True  # False: tools advertise no output schema (results are unchanged)
    trim: TrimSettings | None = field(default_factory=TrimSettings)  # None: results are not trimmed
    spec: str | None = None  # the spec a package was generated from, for validate_responses
    # A spec target: Overlay documents applied to it in memory, and Arazzo documents served as tools.
    overlays: tuple[str, ...] = ()
    workflows: tuple[str, ...] = ()
    auth: ClientAuth | None = None  # HTTP: bearer authentication of MCP clients
    max_sessions: int = DEFAULT_MAX_SESSIONS  # HTTP, stateful: open sessions at most
    max_sessions_per_client: int = DEFAULT_MAX_PER_CLIENT
    exchange: ExchangeOptions | None = None  # HTTP with auth: per-user upstream tokens (RFC 8693)
    max_calls_per_user: int = DEFAULT_CALLS_PER_USER
    max_user_calls_per_second: float = 0.0
    retries: int = 0
    max_concurrent_calls: int | None = None
    max_queue_wait: float | None = None
    max_calls_per_second: float | None = None
    max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES  # one call's arguments (0: no cap)
    sandbox: SandboxLimits = field(default_factory=SandboxLimits)  # code mode: per-program limits
    long_running: FollowSettings = field(default_factory=FollowSettings)  # --async-wait, --async-deadline
    confirm: ConfirmSettings = field(default_factory=ConfirmSettings)  # --confirm, --confirm-fallback
    resources: bool = False  # --resources: GET operations as MCP resources and templates
    icons: tuple[IconSpec, ...] = ()  # --icon: replaces the package's icons
    ops: OpsSettings = field(default_factory=OpsSettings)  # logs, telemetry, drain, workers, shared limits
    cache: bool = True  # a spec TARGET: its catalogue from/to the cache (bridge/serving/spec_cache.py)


def load_target(
    target: str, *, overlays: tuple[str, ...] = (), workflows: tuple[str, ...] = (), use_cache: bool = True
) -> tuple[Catalogue, Path | None]:
    """A package folder gives its catalogue; a spec file is generated in memory (with ``overlays``
    applied and ``workflows`` made tools), or read from the catalogue cache (``use_cache``)."""
    path = Path(target)
    if path.is_dir():
        if overlays or workflows:
            raise BridgeError(
                "--overlay and --workflows apply to a spec; a package has them already (generate it with them)"
            )
        return load_catalogue(path), path
    from bridge.serving.spec_target import load_spec_target

    return load_spec_target(target, overlays=overlays, workflows=workflows, use_cache=use_cache), None


def without_output_schemas(catalogue: Catalogue) -> Catalogue:
    """``catalogue`` with no tool advertising an output schema (``serve --no-output-schemas``)."""
    tools = tuple(dataclasses.replace(entry, output_schema=None) for entry in catalogue.tools)
    return catalogue.model_copy(update={"tools": tools})


def env_settings(
    catalogue: Catalogue, environ: Mapping[str, str], server: int | None = None
) -> tuple[str | None, dict[str, str]]:
    """Base URL and server variables from ``<PREFIX>_BASE_URL`` and ``<PREFIX>_SERVER_<VAR>``: the
    variables of the chosen server (``server``, from 1; the first when None) only, so a variable
    another server defines never stops the start."""
    prefix = f"{catalogue.env_prefix}_SERVER_"
    variables = {}
    number = server or 1
    for server_spec in catalogue.servers[number - 1 : number]:
        for name in server_spec.variables:
            value = environ.get(prefix + name.upper())
            if value is not None:
                variables[name] = value
    return environ.get(f"{catalogue.env_prefix}_BASE_URL"), variables


def build_runtime(
    catalogue: Catalogue,
    options: ServeOptions,
    *,
    environ: Mapping[str, str] | None = None,
    settings: HttpSettings | None = None,
    transport: object = None,
    contract: ResponseContract | None = None,
    exchange_transport: httpx.AsyncBaseTransport | None = None,
) -> HttpRuntime:
    environ = os.environ if environ is None else environ
    env_base, env_vars = env_settings(catalogue, environ, options.server)
    settings = _with_options(settings or HttpSettings(), options)
    runtime = HttpRuntime.create(
        catalogue,
        base_url=options.base_url or env_base,
        server_variables={**env_vars, **options.server_variables},
        server=options.server,
        environ=environ,
        settings=settings,
        transport=transport,  # type: ignore[arg-type]
        base_url_env_var=f"{catalogue.env_prefix}_BASE_URL",
        trim=options.trim,
        contract=contract,
    )
    runtime = dataclasses.replace(runtime, confirm=options.confirm)
    if runtime.operations is not None:
        runtime.operations.settings = options.long_running
    if options.auth is None:
        return runtime
    exchanger = None
    if options.exchange is not None:
        exchange = options.exchange
        exchanger = TokenExchanger(
            ExchangeSettings(
                token_url=exchange.token_url,
                client_id=exchange.client_id,
                client_secret=exchange.client_secret,
                audience=exchange.audience or str(runtime.base_url),
                transport=exchange_transport,
            ),
            remember=runtime.credentials.remember_exchanged,
            held=runtime.credentials.held,
        )
    limits = CallerLimits(options.max_calls_per_user, options.max_user_calls_per_second)
    return dataclasses.replace(runtime, identities=True, exchanger=exchanger, caller_limits=limits)


def _with_options(settings: HttpSettings, options: ServeOptions) -> HttpSettings:
    settings = replace(settings, retries=options.retries)
    if options.max_concurrent_calls is not None:
        settings = replace(settings, max_concurrent_calls=options.max_concurrent_calls)
    if options.max_queue_wait is not None:
        settings = replace(settings, max_queue_wait=options.max_queue_wait)
    if options.max_calls_per_second is not None:
        settings = replace(settings, max_calls_per_second=options.max_calls_per_second)
    if options.timeout is not None:
        settings = replace(settings, deadline=options.timeout)
    return settings


def response_contract(target: str, options: ServeOptions) -> ResponseContract | None:
    """The spec check of ``--validate-responses``: the served spec, or ``--spec`` for a package."""
    if not options.validate_responses:
        return None
    spec = target if not Path(target).is_dir() else options.spec
    if spec is None:
        raise BridgeError("--validate-responses needs the spec the package was made from: pass --spec PATH")
    try:
        import openapi_core  # noqa: F401  # an extra: say what to install rather than fail later
    except ImportError:
        raise BridgeError(f"--validate-responses needs openapi-core: {install_hint('validate')}") from None
    from generator.load.spec import load_spec

    return ResponseContract(load_spec(spec, validate=False).document)


def build_registry(catalogue: Catalogue, runtime: HttpRuntime, package_dir: Path | None) -> ToolRegistry:
    """The operations' tools, changed by the package's hooks, then the workflows' tools (whose steps
    call operations through the call core, so a hook's change to a tool does not reach them; a
    workflow whose step tool a hook removed is not served)."""
    registry = ToolRegistry(tools_from_catalogue(catalogue, runtime))
    if package_dir is not None:
        apply_hooks(package_dir, registry, runtime)
    if catalogue.workflows:
        from bridge.workflows.tools import workflow_tools

        for tool in workflow_tools(catalogue, runtime, registry)[0]:
            registry.add(tool)
    return registry


def server_instructions(
    catalogue: Catalogue,
    mode: ServeMode,
    tool_count: int,
    *,
    code: CodeMode | None = None,
    about: str | None = None,
    confirm: bool = False,
) -> str:
    """What the model is told once: the API (``about``: the spec's description, plain and bounded, or
    the package config's instructions), how results are trimmed, shared argument meanings."""
    lines = [f"Tools for the {catalogue.title} API (version {catalogue.api_version})."]
    if about:
        lines.append(about)
    if mode == "discovery":
        lines.append(discovery_instructions(catalogue, tool_count))
    if code is not None:
        from bridge.modes.codemode import code_instructions

        lines.append(code_instructions(code))
    lines.append(TRIM_INSTRUCTIONS)
    if code is None and any(entry.binding.fields_arg for entry in catalogue.tools):
        lines.append(FIELDS_INSTRUCTIONS)
    if any(entry.long_running is not None for entry in catalogue.tools):
        lines.append(LONG_RUNNING_INSTRUCTIONS)
    if confirm:
        lines.append(CONFIRM_INSTRUCTIONS)
    if catalogue.shared_arguments:
        lines.append("Arguments that mean the same in every tool that takes them:")
        lines.extend(f"- {name}: {text}" for name, text in catalogue.shared_arguments.items())
    return "\n".join(lines)


def build_bridge_server(
    catalogue: Catalogue,
    registry: ToolRegistry,
    *,
    mode: ServeMode | None = None,
    redact: Callable[[str], str] | None = None,
    max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES,
    runtime: HttpRuntime | None = None,
    package_dir: Path | None = None,
    sandbox: SandboxLimits | None = None,
    options: ServeOptions | None = None,
) -> Server:
    """The MCP server for ``registry``: its tools, the three discovery tools, or code mode's.

    Code mode needs the ``runtime`` its programs call through, and takes its stubs from
    ``package_dir``'s api.pyi when there is one; its sandbox's workers stop with the server.

    ``redact`` (the runtime's ``Credentials.redact``) scrubs tool error messages, hand-written
    tools' included; without it only the structural credential spellings are scrubbed.
    ``max_argument_bytes`` caps one call's arguments (0: no cap).

    ``options`` brings what ``serve`` adds on top: ``--confirm``, ``--resources``, ``--icon``;
    long-running operations get MCP tasks in tools mode and the status tool in every mode.
    """
    from bridge.contract.version import bridge_version

    options = options or ServeOptions()
    redact = redact or scrub
    mode = mode or catalogue.mode
    code: CodeMode | None = None
    if mode == "code":
        if runtime is None:
            raise BridgeError("code mode needs the HTTP runtime its programs call through")
        # Code mode's modules (stubs, search, the sandbox's client) load only when it serves:
        # about 2 MB of a tools-mode server's peak RSS otherwise.
        from bridge.modes.codemode import CodeMode, code_registry
        from bridge.modes.stubsource import stub_source

        code = CodeMode(
            catalogue,
            registry,
            runtime,
            stub_source(package_dir, stub_entries(catalogue)),
            Sandbox(sandbox or options.sandbox),
        )
        served = code_registry(code)
    else:
        served = discovery_registry(registry, catalogue) if mode == "discovery" else registry
    if runtime is not None and runtime.operations is not None and STATUS_TOOL not in served:
        served.add(status_tool(runtime.operations, runtime))  # listed only when the API has long-running operations
    identity = server_identity(catalogue, icons=options.icons)
    confirm = options.confirm.level != "none"
    if runtime is not None and runtime.confirm != options.confirm:
        # The call core decides from the runtime's settings: two answers to "is this asked?" would leave a gap.
        raise BridgeError("the HTTP runtime was built without this server's --confirm settings (build_runtime)")
    confirmations = Confirmations(options.confirm, api=catalogue.title, redact=redact) if confirm else None
    operations = runtime.operations if runtime is not None else None
    tasks = None
    if operations is not None and mode == "tools":
        # --stateless with no user tokens: no caller can be told from another, so none gets tasks.
        auth = options.auth
        users = auth is not None and (auth.jwks_url is not None or auth.introspection_url is not None)
        tasks = TaskRunner(operations.settings.deadline, anonymous_callers=options.stateless and not users)
    server = build_server(
        served,
        name=catalogue.name,
        version=bridge_version(),
        instructions=server_instructions(
            catalogue, mode, len(registry), code=code, about=identity.about, confirm=confirm
        ),
        redact=redact,
        max_argument_bytes=max_argument_bytes,
        title=identity.title,
        icons=identity.sdk_icons(),
        confirmations=confirmations,
        tasks=tasks,
        opentelemetry=False,  # the SDK's per-message spans: --otel traces puts bridge.ops.observe in their place
    )
    if options.resources:
        if runtime is None:
            raise BridgeError("--resources needs the HTTP runtime resources are read through")
        from bridge.resources import install_resources

        install_resources(server, catalogue, registry, runtime, confirmations)
    if code is not None or tasks is not None:
        server.lifespan = SandboxLifespan(code.sandbox if code is not None else None, tasks)
    return server


class SandboxLifespan:
    """A server lifespan: the task group MCP tasks run in, and the sandbox's workers, stopped when
    the last connection ends."""

    def __init__(self, sandbox: Sandbox | None, tasks: TaskRunner | None = None) -> None:
        self.sandbox = sandbox
        self.tasks = tasks
        self._open = 0

    def __call__(self, server: Server) -> AbstractAsyncContextManager[dict[str, Any]]:
        return self._lifespan()

    @asynccontextmanager
    async def _lifespan(self) -> AsyncIterator[dict[str, Any]]:
        self._open += 1
        try:
            async with self.tasks.running() if self.tasks is not None else nullcontext():
                yield {}
        finally:
            self._open -= 1
            if self._open == 0 and self.sandbox is not None:
                await self.sandbox.aclose()


def report_startup(
    catalogue: Catalogue, runtime: HttpRuntime, options: ServeOptions, environ: Mapping[str, str]
) -> None:
    """Say once on stderr where calls go and which credential variables are missing (names only)."""
    source = base_url_source(catalogue, str(runtime.base_url), option=options.base_url, environ=environ)
    for line in startup_lines(catalogue, runtime.credentials, source):
        if line.startswith("credentials missing"):
            logger.warning("%s", line)
        else:
            logger.info("%s", line)


def build_http_app(
    server: Server, registry: ToolRegistry, options: ServeOptions, *, verifier: ClientTokenVerifier | None = None
) -> ASGIApp:
    """The HTTP app; with authentication, the tools' scopes are advertised and enforced per call."""
    auth = options.auth
    call_requirement = None
    if auth is not None:
        scopes_by_tool = {tool.name: tool.scopes for tool in registry}
        every_scope = {scope for need in scopes_by_tool.values() for alternative in need for scope in alternative}
        auth = dataclasses.replace(auth, scopes_supported=tuple(sorted(every_scope | set(auth.scopes_supported))))
        call_requirement = scopes_call_requirement(scopes_by_tool, {DISCOVERY_CALL: "name"})
    return http_app(
        server,
        host=options.host,
        stateless=options.stateless,
        allowed_hosts=options.allowed_hosts,
        allowed_origins=options.allowed_origins,
        auth=auth,
        max_sessions=options.max_sessions,
        max_sessions_per_client=options.max_sessions_per_client,
        call_requirement=call_requirement,
        verifier=verifier,
    )
