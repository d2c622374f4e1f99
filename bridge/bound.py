"""Values of parameters the operator bound (``bind:`` in the generator's config), never the model's.

A fixed value is in the catalogue. An environment variable is read once by
:class:`~bridge.credentials.Credentials` (which also redacts it: it is a secret, a chat API's
``token``) and looked up here at call time; when it is not set the call fails like a call whose
credential is not configured, naming the variable and never a value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bridge.catalogue import Catalogue, ParamBinding
from bridge.errors import CredentialsError

__all__ = ["bound_env_names", "bound_value", "missing_message"]


def bound_env_names(catalogue: Catalogue) -> list[str]:
    """Environment variables the catalogue's bound parameters read, in first-use order."""
    return list(
        dict.fromkeys(p.bound.env for entry in catalogue.tools for p in entry.binding.params if p.bound and p.bound.env)
    )


def missing_message(names: Iterable[str]) -> str:
    listed = " and ".join(names)
    return (
        "This operation needs a credential that is not configured. "
        f"The user must set {listed} in the environment of the MCP server and restart it. "
        "Retrying will not help until then."
    )


def bound_value(param: ParamBinding, environ: Mapping[str, str]) -> str:
    """The value of a bound ``param`` (``param.bound`` is set).

    Raises:
        CredentialsError: its environment variable is not set.
    """
    bound = param.bound
    assert bound is not None
    if bound.env is None:
        return bound.value or ""
    value = environ.get(bound.env)
    if not value:
        raise CredentialsError(missing_message([bound.env]))
    return value
