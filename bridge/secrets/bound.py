"""Values of parameters the operator bound (``bind:`` in the generator's config), never the model's.

A fixed value is in the catalogue. An environment variable is read once by
:class:`~bridge.secrets.credentials.Credentials` (which also redacts it: it is a secret, a chat API's
``token``) and looked up here at call time; when it is not set the call fails like a call whose
credential is not configured, naming the variable and never a value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bridge.contract.catalogue import BoundValue, Catalogue, ParamBinding
from bridge.tools.errors import CredentialsError

__all__ = ["bound_env_names", "bound_value", "missing_message", "resolve"]


def bound_env_names(catalogue: Catalogue) -> list[str]:
    """Environment variables the catalogue's bound parameters, body properties and static headers
    read, in first-use order."""
    names: dict[str, None] = {}
    for entry in catalogue.tools:
        for p in entry.binding.params:
            if p.bound is not None and p.bound.env:
                names[p.bound.env] = None
        body = entry.binding.body
        for f in body.bound_fields if body is not None else ():
            if f.bound is not None and f.bound.env:
                names[f.bound.env] = None
    for header in catalogue.headers:
        if header.value.env:
            names[header.value.env] = None
    return list(names)


def missing_message(names: Iterable[str]) -> str:
    listed = " and ".join(names)
    return (
        "This operation needs a credential that is not configured. "
        f"The user must set {listed} in the environment of the MCP server and restart it. "
        "Retrying will not help until then."
    )


def bound_value(param: ParamBinding, environ: Mapping[str, str]) -> str | None:
    """The value of a bound ``param`` (``param.bound`` is set); None for an optional credential
    slot whose variable is not set (the parameter is left out).

    Raises:
        CredentialsError: its environment variable is not set (and it is required, or the operator
            bound it).
    """
    bound = param.bound
    assert bound is not None
    return resolve(bound, environ, required=param.required)


def resolve(
    bound: BoundValue, environ: Mapping[str, str], *, required: bool, optional_skip: bool = False
) -> str | None:
    """The value ``bound`` names: fixed, or read from ``environ``. An unset variable fails the call,
    except for an optional credential slot (or, with ``optional_skip``, any optional one: a bound
    body property), which is then left out (None)."""
    if bound.env is None:
        return bound.value or ""
    value = environ.get(bound.env)
    if not value:
        if not required and (optional_skip or bound.scheme is not None):
            return None
        raise CredentialsError(missing_message([bound.env]))
    return value
