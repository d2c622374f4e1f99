"""Resource URIs of an API: a scheme named for the package, the operation's path, RFC 6570 ``{var}`` slots.

``GET /jobs`` of package ``jobs`` is ``jobs:///jobs``; ``GET /jobs/{jobId}`` is the template
``jobs:///jobs/{jobId}`` (simple string expansion: a value is percent-encoded, so it can never
add a segment). Reading a URI matches it against the templates segment by segment; each slot's
text is percent-decoded and typed as the parameter's schema says (``42`` for an integer) before
the arguments are validated like any call's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from bridge.contract.catalogue import ToolEntry

__all__ = ["Template", "scheme_for", "template_for"]

_SLOT = re.compile(r"\{([^{}/]+)\}")
_SCHEME_CHARS = re.compile(r"[^a-z0-9+.\-]+")
MAX_URI = 2048


def scheme_for(package: str) -> str:
    """A URI scheme (RFC 3986: a letter, then letters, digits, ``+ - .``) named for ``package``."""
    scheme = _SCHEME_CHARS.sub("-", package.lower()).strip("-.+")
    return scheme if scheme[:1].isalpha() else f"api-{scheme}".rstrip("-")


@dataclass(frozen=True, slots=True)
class Template:
    """One GET operation as a resource (no slots) or a resource template."""

    entry: ToolEntry
    uri: str  # the URI, or the RFC 6570 template
    slots: tuple[tuple[str, str], ...]  # (wire name in the template, argument name)
    pattern: re.Pattern[str]

    @property
    def is_template(self) -> bool:
        return bool(self.slots)

    def match(self, uri: str) -> dict[str, Any] | None:
        """The arguments ``uri`` stands for, typed by the schema; None when it is not this template's."""
        if len(uri) > MAX_URI:
            return None
        found = self.pattern.fullmatch(uri)
        if found is None:
            return None
        properties = self.entry.input_schema.get("properties", {})
        arguments: dict[str, Any] = {}
        for index, (_, arg) in enumerate(self.slots):
            try:
                text = unquote(found.group(f"s{index}"), errors="strict")
            except UnicodeDecodeError:
                return None
            arguments[arg] = _typed(text, properties.get(arg) if isinstance(properties, Mapping) else None)
        return arguments


def template_for(entry: ToolEntry, scheme: str) -> Template | None:
    """``entry`` as a resource or template, or None when it cannot be one.

    A resource: a GET without required arguments and without path slots. A template: a GET whose
    required arguments are exactly its path parameters. Read-only (the catalogue's annotations: a
    GET named as a write, ``GET /?Action=TerminateInstances``, is no resource), not long-running,
    no query in the path.
    """
    binding = entry.binding
    if binding.method != "GET" or not entry.annotations.readOnlyHint:
        return None
    if entry.long_running is not None or any(c in binding.path for c in "?#"):
        return None
    required = set(entry.input_schema.get("required", ()))
    by_wire = {p.wire: p for p in binding.params if p.location == "path"}
    slots: list[tuple[str, str]] = []
    pattern = [re.escape(f"{scheme}://")]
    position = 0
    for index, match in enumerate(_SLOT.finditer(binding.path)):
        param = by_wire.get(match.group(1))
        if param is None or param.bound is not None or not param.arg:
            return None  # a bound slot is the operator's to fill, not the reader's
        pattern.append(re.escape(binding.path[position : match.start()]))
        pattern.append(f"(?P<s{index}>[^/?#]+)")
        slots.append((param.wire, param.arg))
        position = match.end()
    pattern.append(re.escape(binding.path[position:]))
    if required != {arg for _, arg in slots}:
        return None
    return Template(entry, f"{scheme}://{binding.path}", tuple(slots), re.compile("".join(pattern)))


def _typed(text: str, schema: Any) -> Any:
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    try:
        if kind == "integer" and re.fullmatch(r"-?\d{1,30}", text):
            return int(text)
        if kind == "number" and re.fullmatch(r"-?\d{1,30}(\.\d{1,30})?([eE][-+]?\d{1,3})?", text):
            return float(text)
    except ValueError:
        return text
    if kind == "boolean" and text in ("true", "false"):
        return text == "true"
    return text
