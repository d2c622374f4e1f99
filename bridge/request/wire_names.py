"""One owner per query or cookie name (SECURITY.md P15).

A form-exploded object parameter sends each member as a name of its own (``{"a": 1}`` →
``a=1``), so an unchecked member could add ``admin=true``, a second ``limit`` placed before the
real one (upstreams that read the first value skip its ``maximum``), or a credential's name.
Every name a parameter puts on the wire must be its own: its wire name (``name[...]`` for
deepObject), or a member its binding allows (``ParamBinding.members``, or any with
``free_members``) that no other declared parameter, literal query pair or credential slot
(``ParamBinding.reserved``) is called and no other object parameter already sent. A binding
that lists no members (any non-object parameter) sends none. Names compare as servers may read
them (:func:`read_as`): case-insensitively, cut at a NUL (C strings), without surrounding blanks
or control characters, without trailing brackets (PHP reads ``api_key[]`` and ``api_key[0]`` as
``api_key``), with spaces and dots as underscores (PHP again), compatibility characters folded
(``ａｐｉ_ｋｅｙ``): a free key that a server could read as a credential slot or another
parameter is refused, not sent beside it; so is a member named like a credential
(:func:`~bridge.contract.wire_rules.credential_name`). The generator's schemas say the same for exact names
(``generator.parse.param_rules``); this is the check for any binding, hand-built ones included.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from urllib.parse import quote, unquote

from bridge.contract.catalogue import ParamBinding
from bridge.contract.wire_rules import credential_name
from bridge.tools.errors import InvalidArgumentsError

__all__ = ["WireNames", "read_as"]

_BRACKETS = re.compile(r"(?:\[[^\]]*\])+$")
_BLANK = r"[\s\x00-\x1f\x7f-\x9f\u200b-\u200f\u2060\ufeff]+"  # whitespace, controls, invisible format characters
_EDGES = re.compile(f"^{_BLANK}|{_BLANK}$")


def read_as(name: str) -> str:
    """What a lenient server may take a query or cookie name for (see the module docstring)."""
    name = unicodedata.normalize("NFKC", _EDGES.sub("", name)).split("\0", 1)[0]
    previous = None
    while previous != name:  # "api_key [] " -> "api_key"
        previous = name
        name = _BRACKETS.sub("", _EDGES.sub("", name))
    return name.replace(" ", "_").replace(".", "_").casefold()


class WireNames:
    """The names one request's query or cookie pairs may use; :meth:`claim` checks each parameter's."""

    __slots__ = ("_declared_cache", "_literal", "_location", "_owners", "_params", "_spelled_cache")

    def __init__(self, params: Sequence[ParamBinding], location: str, literal: Iterable[str] = ()) -> None:
        # Built on the first member name only: most calls send none, and this runs on every call.
        self._params, self._location, self._literal = params, location, literal
        self._declared_cache: set[str] | None = None
        self._spelled_cache: set[str] | None = None
        self._owners: dict[str, str] = {}

    @property
    def _declared(self) -> set[str]:
        """The declared names (literal pairs' too) as a server may read them."""
        if self._declared_cache is None:
            self._declared_cache = {read_as(name) for name in self._spelled}
        return self._declared_cache

    @property
    def _spelled(self) -> set[str]:
        """The declared names as they are spelled, lower-cased (what a deepObject key may not spell)."""
        if self._spelled_cache is None:
            spelled = {name.lower() for name in self._literal}
            spelled.update(p.wire.lower() for p in self._params if p.location == self._location)
            self._spelled_cache = spelled
        return self._spelled_cache

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
            if encoded.startswith(own + "["):  # deepObject: its own, unless a declared name spells it
                if name.lower() in self._spelled:
                    raise self._refused(param, name)
                continue
            read = read_as(name)
            owner = self._owners.setdefault(read, param.wire)
            if (
                read in self._declared
                or owner != param.wire
                or (not param.free_members and name not in param.members)
                or any(read == read_as(reserved) for reserved in param.reserved)
                or credential_name(self._location, name) is not None
                or credential_name(self._location, read) is not None
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
