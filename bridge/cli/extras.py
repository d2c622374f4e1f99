"""Optional dependencies: a missing one stops the command with one line naming what to install.

An extra the user asked for (``--otel``, ``--metrics-port``, ``--limits-redis``,
``--validate-responses``) is checked before anything starts (:func:`require`); one the user did
not ask for is not needed (``OTEL_*`` variables, which Kubernetes sets for every pod, only turn
telemetry on when the ``otel`` extra is installed: :func:`installed`). What a slim install leaves
out (bridge/contract/runtime_requirements.py: the generator's libraries, code mode's sandbox,
discovery's search, workflows' JSONPath) is found when the command imports it: :func:`main`
turns that ``ModuleNotFoundError`` into the same one line (:func:`missing`), never a traceback.
"""

from __future__ import annotations

import importlib.util

import click

from bridge.contract.version import install_hint

__all__ = ["MissingDependency", "installed", "missing", "require"]

EXTRAS: dict[str, tuple[str, str]] = {
    # top-level module: (the extra that installs it, what needs it)
    "opentelemetry": ("otel", "OpenTelemetry telemetry (--otel)"),
    "prometheus_client": ("prometheus", "Prometheus metrics (--metrics-port, --metrics-path)"),
    "redis": ("redis", "shared limits (--limits-redis)"),
    "openapi_core": ("validate", "--validate-responses"),
    "werkzeug": ("validate", "--validate-responses"),  # openapi-core's own dependency
    "tiktoken": ("tokens", "exact token counts"),
}
SLIM_LEAVES_OUT: dict[str, tuple[str, str]] = {
    # top-level module: (its distribution, what needs it), all of them mcp-bridge's own dependencies
    "yaml": ("pyyaml", "the generator (generate, inspect, serve SPEC)"),
    "jinja2": ("jinja2", "the generator (generate, inspect, serve SPEC)"),
    "rich": ("rich", "the generator (generate, inspect, serve SPEC)"),
    "openapi_spec_validator": ("openapi-spec-validator", "the generator (generate, inspect, serve SPEC)"),
    "jsonschema_path": ("openapi-spec-validator", "the generator (generate, inspect, serve SPEC)"),
    "openapi_schema_validator": ("openapi-spec-validator", "the generator (generate, inspect, serve SPEC)"),
    "pydantic_monty": ("pydantic-monty", "code mode (--mode code)"),
    "rank_bm25": ("rank-bm25", "discovery and code mode's search"),
    "numpy": ("rank-bm25", "discovery and code mode's search"),
    "jsonpath": ("python-jsonpath", "workflows and overlays (RFC 9535 JSONPath)"),
}


class MissingDependency(click.ClickException):
    """One line on stderr (``Error: ...``), exit status 1."""


def missing(module: str) -> MissingDependency | None:
    """The error for ``module`` (a dotted name) not being installed; None when it is not one the bridge
    may lack by design (then a missing module is a bug, and its traceback is kept)."""
    top = module.split(".")[0]
    if top in EXTRAS:
        extra, what = EXTRAS[top]
        return MissingDependency(f"{what} needs the {extra!r} extra, which is not installed: {install_hint(extra)}")
    if top in SLIM_LEAVES_OUT:
        package, what = SLIM_LEAVES_OUT[top]
        return MissingDependency(
            f"{what} needs {package}, which this install leaves out (a slim, serve-only install): "
            f"{install_hint()} with its dependencies"
        )
    return None


def installed(module: str) -> bool:
    """Whether ``module`` (dotted) can be imported, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a missing parent package raises rather than answer None
        return False


def require(*modules: str) -> None:
    """Stop with one line when one of ``modules`` (an extra the user asked for) is not installed."""
    for module in modules:
        if not installed(module):
            error = missing(module)
            raise error if error is not None else MissingDependency(f"{module} is not installed")
