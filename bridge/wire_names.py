"""One owner per query or cookie name (SECURITY.md P15).

A form-exploded object parameter sends each member as a name of its own (``{"a": 1}`` →
``a=1``), so an unchecked member could add ``admin=true``, a second ``limit`` placed before the
real one (upstreams that read the first value skip its ``maximum``), or a credential's name.
Every name a parameter puts on the wire must be its own: its wire name (``name[...]`` for
deepObject), or a member its binding allows (``ParamBinding.members``, or any with
``free_members``) that no other declared parameter, literal query pair or credential slot
(``ParamBinding.reserved``) is called and no other object parameter already sent. A binding
that lists no members (any non-object parameter) sends none. Names compare case-insensitively
(some servers read them so). The generator's schemas say the same (``generator.param_rules``);
this is the check for any binding, hand-built ones included.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from urllib.parse import quote, unquote

from bridge.catalogue import ParamBinding
from bridge.errors import InvalidArgumentsError

__all__ = ["WireNames"]


class WireNames:
    """The names one request's query or cookie pairs may use; :meth:`claim` checks each parameter's."""

    __slots__ = ("_declared_cache", "_literal", "_location", "_owners", "_params")

    def __init__(self, params: Sequence[ParamBinding], location: str, literal: Iterable[str] = ()) -> None:
        # Built on the first member name only: most calls send none, and this runs on every call.
        self._params, self._location, self._literal = params, location, literal
        self._declared_cache: set[str] | None = None
        self._owners: dict[str, str] = {}

    @property
    def _declared(self) -> set[str]:
        if self._declared_cache is None:
            declared = {name.lower() for name in self._literal}
            declared.update(p.wire.lower() for p in self._params if p.location == self._location)
            self._declared_cache = declared
        return self._declared_cache

    def claim(self, param: ParamBinding, pairs: Sequence[tuple[str, str]]) -> None:
        """Check the (encoded) ``pairs`` ``param`` produced.

        Raises:
            InvalidArgumentsError: a member name belongs to something else or is not declared.
        """
        own = param.wire if param.location == "cookie" else quote(param.wire, safe="")
        for encoded, _ in pairs:
            if encoded == own:
                continue
            name = unquote(encoded)
            lowered = name.lower()
            if encoded.startswith(own + "["):  # deepObject: its own, unless a declared name spells it
                if lowered in self._declared:
                    raise self._refused(param, name)
                continue
            owner = self._owners.setdefault(lowered, param.wire)
            if (
                lowered in self._declared
                or owner != param.wire
                or (not param.free_members and name not in param.members)
                or any(lowered == reserved.lower() for reserved in param.reserved)
            ):
                raise self._refused(param, name)

    @staticmethod
    def _refused(param: ParamBinding, name: str) -> InvalidArgumentsError:
        where = "query parameter" if param.location == "query" else "cookie"
        return InvalidArgumentsError(
            f'Argument "{param.arg}" cannot have the member {json.dumps(name)}: each member is sent as a '
            f"{where} of its own, and that name is not one of its declared members or belongs to another "
            "parameter or a credential. Use only the documented members."
        )
