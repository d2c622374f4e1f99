"""What ``serve`` says once at start-up: where calls go and which credentials are missing.

Both are quiet mistakes otherwise: a spec's first server is often a placeholder
(``https://your-domain.example.net``), and a credential variable with a typo in its name only
shows up as a tool error on the first call that needs it. Names only, never values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from bridge.contract.catalogue import Catalogue
from bridge.secrets.bound import bound_env_names
from bridge.secrets.credentials import Credentials


@dataclass(frozen=True, slots=True)
class BaseUrlSource:
    url: str
    how: str  # "--base-url", "$NAME", or "spec"


def base_url_line(catalogue: Catalogue, source: BaseUrlSource, redact: Callable[[str], str] = str) -> str:
    """Where calls go; ``redact`` masks the URL's secrets (a bot token in its path, P82)."""
    url = redact(source.url)
    if source.how == "spec":
        return (
            f"upstream: {url} (the spec's first server; set {catalogue.env_prefix}_BASE_URL "
            "or --base-url to call another)"
        )
    return f"upstream: {url} (from {source.how})"


def credential_lines(catalogue: Catalogue, credentials: Credentials) -> list[str]:
    """One line per security scheme the tools use: configured, or not and what that costs.

    A tool can be called when one of its security alternatives is fully configured (or is empty:
    anonymous access) and every required parameter in a credential slot has its scheme's
    credential. An unset scheme is a warning when some tool that uses it cannot be called. An API
    with no credential at all says so: its calls go out unauthenticated.
    """
    used: dict[str, int] = {}
    blocked: dict[str, int] = {}
    for entry in catalogue.tools:
        alternatives = entry.binding.security
        slots = [p for p in entry.binding.params if p.bound is not None and p.bound.scheme]
        names = {use.scheme for alternative in alternatives for use in alternative}
        names |= {p.bound.scheme for p in slots if p.bound is not None and p.bound.scheme}
        callable_ = not alternatives or any(
            all(credentials.configured(use.scheme) for use in alternative) for alternative in alternatives
        )
        callable_ = callable_ and all(
            credentials.configured(p.bound.scheme) for p in slots if p.required and p.bound and p.bound.scheme
        )
        for name in names:
            used[name] = used.get(name, 0) + 1
            if not callable_:
                blocked[name] = blocked.get(name, 0) + 1
    lines = []
    total = len(catalogue.tools)
    for name in sorted(used):
        missing = credentials.missing(name)
        if missing is None:
            lines.append(f'credentials: "{name}" is configured ({used[name]} of {total} tools use it)')
        elif blocked.get(name):
            lines.append(
                f"credentials missing: set {missing}; {blocked[name]} of {total} tools cannot be called "
                "until it (or another credential they accept) is set"
            )
        else:
            lines.append(f"credentials not set: {missing}; the {used[name]} tools that use it accept another")
    if not used and not bound_env_names(catalogue):
        lines.append(
            "credentials: no credential (the spec declares no security scheme and the config none): calls go out "
            "unauthenticated; declare one with --config security_schemes when generating if the API needs it"
        )
    return lines


def startup_lines(catalogue: Catalogue, credentials: Credentials, source: BaseUrlSource) -> list[str]:
    return [base_url_line(catalogue, source, credentials.redact), *credential_lines(catalogue, credentials)]


def base_url_source(catalogue: Catalogue, url: str, *, option: str | None, environ: Mapping[str, str]) -> BaseUrlSource:
    if option:
        return BaseUrlSource(url, "--base-url")
    name = f"{catalogue.env_prefix}_BASE_URL"
    if environ.get(name):
        return BaseUrlSource(url, f"${name}")
    return BaseUrlSource(url, "spec")
