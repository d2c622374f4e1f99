"""A credential is never a model's argument (SECURITY.md P11), whichever catalogue asks for one.

The generator leaves such parameters and body properties out of the tools; this is the check
every surface passes (tools, discovery's ``call_operation``, code mode, workflows, resources all
build their requests through :func:`bridge.request.build.build_request`), so a package made by an
older generator or a hand-edited catalogue cannot send one either. The rule is
:func:`bridge.contract.wire_rules.credential_name`; a value that cannot hold text (a
number, a boolean) passes, as the generator keeps numeric parameters of such names.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from bridge.contract.wire_rules import credential_name, value_may_be_credential
from bridge.tools.errors import InvalidArgumentsError

__all__ = ["refuse_body_credentials", "refuse_credential"]


def refuse_credential(location: str, wire: str, arg: str, value: Any, description: str | None = None) -> None:
    """Raise when the model gave ``value`` for ``wire`` (in ``location``), a credential's name;
    ``description`` (the argument's, from the input schema) tells a bare ``key`` that is a cache's
    or a map's from Google's API key, as the generator did.

    Raises:
        InvalidArgumentsError: the value would be sent as a credential.
    """
    if not value_may_be_credential(value):
        return
    reason = credential_name(location, wire, description)
    if reason is None:
        return
    where = "a top-level body property" if location == "body" else f"the {location} parameter"
    raise InvalidArgumentsError(
        f"Argument {json.dumps(arg)} would be sent as {where} {json.dumps(wire)}, which carries a credential "
        f"({reason}). The bridge never sends a credential a caller supplies: the operator configures credentials. "
        "Leave it out."
    )


def refuse_body_credentials(value: Any, arg: str, bound: Iterable[str] = ()) -> None:
    """Raise when a body object given whole (``arg``) has a credential's name at its top level;
    ``bound`` properties are the operator's (they replace whatever the model put there).

    Raises:
        InvalidArgumentsError: a top-level property would be sent as a credential.
    """
    if not isinstance(value, Mapping):
        return
    skip = set(bound)
    for name, item in value.items():
        if isinstance(name, str) and name not in skip:
            refuse_credential("body", name, f"{arg}.{name}", item)
