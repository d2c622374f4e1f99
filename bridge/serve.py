"""``mcp-bridge serve``: a package folder or a spec file, served over stdio or streamable HTTP."""

from __future__ import annotations

import dataclasses
import gc
import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import anyio
from mcp.server.lowlevel import Server

from bridge.allocator import pin_mmap_threshold
from bridge.binding import Catalogue, ServeMode
from bridge.contract import ResponseContract
from bridge.discovery import discovery_instructions, discovery_registry
from bridge.errors import BridgeError
from bridge.http_tools import HttpRuntime, HttpSettings, tools_from_catalogue
from bridge.package import apply_hooks, load_catalogue
from bridge.server import build_server
from bridge.tools import ToolRegistry
from bridge.transports import ClientAuth, http_app, run_http, run_stdio
from bridge.trim import FIELDS_INSTRUCTIONS, TrimSettings
from bridge.trim import INSTRUCTIONS as TRIM_INSTRUCTIONS
from bridge.validation import DEFAULT_MAX_ARGUMENT_BYTES

logger = logging.getLogger("bridge")


@dataclass(frozen=True, slots=True)
class ServeOptions:
    transport: str = "stdio"
    host: str = "127.0.0.1"
    port: int = 8000
    stateless: bool = False
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    base_url: str | None = None
    server_variables: dict[str, str] = field(default_factory=dict)
    timeout: float | None = None
    validate_responses: bool = False
    mode: ServeMode | None = None  # None: the catalogue's default mode
    output_schemas: bool = True  # False: tools advertise no output schema (results are unchanged)
    trim: TrimSettings | None = field(default_factory=TrimSettings)  # None: results are not trimmed
    spec: str | None = None  # the spec a package was generated from, for validate_responses
    auth: ClientAuth | None = None  # HTTP: bearer authentication of MCP clients
    retries: int = 0
    max_concurrent_calls: int | None = None
    max_queue_wait: float | None = None
    max_calls_per_second: float | None = None
    max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES  # one call's arguments (0: no cap)


def load_target(target: str) -> tuple[Catalogue, Path | None]:
    """A package folder gives its catalogue; a spec file is generated in memory."""
    path = Path(target)
    if path.is_dir():
        return load_catalogue(path), path
    from generator.generate import build_catalogue
    from generator.options import GenerateOptions

    catalogue, issues = build_catalogue(target, GenerateOptions())
    for issue in issues:
        logger.warning("%s", issue)
    return catalogue, None


def without_output_schemas(catalogue: Catalogue) -> Catalogue:
    """``catalogue`` with no tool advertising an output schema (``serve --no-output-schemas``)."""
    tools = tuple(dataclasses.replace(entry, output_schema=None) for entry in catalogue.tools)
    return catalogue.model_copy(update={"tools": tools})


def env_settings(catalogue: Catalogue, environ: Mapping[str, str]) -> tuple[str | None, dict[str, str]]:
    """Base URL and server variables from ``<PREFIX>_BASE_URL`` and ``<PREFIX>_SERVER_<VAR>``."""
    prefix = f"{catalogue.env_prefix}_SERVER_"
    variables = {}
    for server in catalogue.servers:
        for name in server.variables:
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
) -> HttpRuntime:
    environ = os.environ if environ is None else environ
    env_base, env_vars = env_settings(catalogue, environ)
    settings = _with_options(settings or HttpSettings(), options)
    return HttpRuntime.create(
        catalogue,
        base_url=options.base_url or env_base,
        server_variables={**env_vars, **options.server_variables},
        environ=environ,
        settings=settings,
        transport=transport,  # type: ignore[arg-type]
        base_url_env_var=f"{catalogue.env_prefix}_BASE_URL",
        trim=options.trim,
        contract=contract,
    )


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
    from generator.load import load_spec

    return ResponseContract(load_spec(spec, validate=False).document)


def build_registry(catalogue: Catalogue, runtime: HttpRuntime, package_dir: Path | None) -> ToolRegistry:
    registry = ToolRegistry(tools_from_catalogue(catalogue, runtime))
    if package_dir is not None:
        apply_hooks(package_dir, registry, runtime)
    return registry


def server_instructions(catalogue: Catalogue, mode: ServeMode, tool_count: int) -> str:
    """What the model is told once: the API, how results are trimmed, shared argument meanings."""
    lines = [f"Tools for the {catalogue.title} API (version {catalogue.api_version})."]
    if mode == "discovery":
        lines.append(discovery_instructions(catalogue, tool_count))
    lines.append(TRIM_INSTRUCTIONS)
    if any(entry.binding.fields_arg for entry in catalogue.tools):
        lines.append(FIELDS_INSTRUCTIONS)
    if catalogue.shared_arguments:
        lines.append("Arguments that mean the same in every tool that takes them:")
        lines.extend(f"- {name}: {text}" for name, text in catalogue.shared_arguments.items())
    return "\n".join(lines)


def build_bridge_server(
    catalogue: Catalogue,
    registry: ToolRegistry,
    *,
    mode: ServeMode | None = None,
    max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES,
) -> Server:
    """The MCP server for ``registry``: its tools, or (discovery mode) the three discovery tools."""
    from bridge.render_version import bridge_version

    mode = mode or catalogue.mode
    served = discovery_registry(registry, catalogue) if mode == "discovery" else registry
    return build_server(
        served,
        name=catalogue.name,
        version=bridge_version(),
        instructions=server_instructions(catalogue, mode, len(registry)),
        max_argument_bytes=max_argument_bytes,
    )


def serve_target(target: str, options: ServeOptions) -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    pin_mmap_threshold()
    # The catalogue is a hundred thousand long-lived objects: the collector is off while they are
    # made (it would walk them again and again) and they are frozen afterwards, so later
    # collections during tool calls skip them.
    gc.disable()
    try:
        catalogue, package_dir = load_target(target)
        if not options.output_schemas:
            catalogue = without_output_schemas(catalogue)
        runtime = build_runtime(catalogue, options, contract=response_contract(target, options))
        registry = build_registry(catalogue, runtime, package_dir)
    except BridgeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # a bad spec or hooks file: one line, not a traceback
        from generator.issues import GenerationError
        from generator.load import SpecError

        if isinstance(exc, SpecError | GenerationError):
            print(f"error: {exc}", file=sys.stderr)
            return 1
        raise
    finally:
        gc.enable()
    server = build_bridge_server(catalogue, registry, mode=options.mode, max_argument_bytes=options.max_argument_bytes)
    gc.freeze()
    if options.transport == "http":
        app = http_app(
            server,
            host=options.host,
            stateless=options.stateless,
            allowed_hosts=options.allowed_hosts,
            allowed_origins=options.allowed_origins,
            auth=options.auth,
        )
        run_http(app, host=options.host, port=options.port)
    else:
        anyio.run(run_stdio, server)
    return 0
