"""JSON pointers (RFC 6901) into a loaded document."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote


class PointerError(LookupError):
    pass


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def join(*tokens: str | int) -> str:
    return "".join("/" + escape(str(t)) for t in tokens)


def split(pointer: str) -> list[str]:
    """``/a/b~1c`` -> ``["a", "b/c"]``; also accepts a local ref ``#/a/b`` (percent-decoded)."""
    if pointer.startswith("#"):
        pointer = unquote(pointer[1:])
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PointerError(f"not a JSON pointer: {pointer!r}")
    return [unescape(t) for t in pointer[1:].split("/")]


def resolve(document: Any, pointer: str) -> Any:
    node = document
    for token in split(pointer):
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise PointerError(f"{pointer} does not resolve")
    return node
