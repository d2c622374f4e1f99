"""The server's identity for ``initialize``: title, the paragraph that opens the instructions, icons.

Spec text is untrusted here as everywhere: the description becomes one bounded paragraph of plain
text (:mod:`.text`), icons are ``https:``/``data:`` images only (:mod:`.icons`). A package's
config (the catalogue's ``server``) and ``serve --icon`` override what the spec says.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import mcp_types

from bridge.contract.catalogue import Catalogue, IconSpec
from bridge.contract.icons import IconError, icon_from_url
from bridge.contract.plain_text import DESCRIPTION_LIMIT, TITLE_LIMIT, first_paragraph, plain_text

__all__ = ["ServerIdentity", "server_identity"]

logger = logging.getLogger("bridge.server_info.identity")

INSTRUCTIONS_LIMIT = 2000
"""Characters of instructions a package's config may set."""


@dataclass(frozen=True, slots=True)
class ServerIdentity:
    """The title, the paragraph about the API that opens the instructions, and the icons."""

    title: str
    about: str | None
    icons: tuple[IconSpec, ...] = ()

    def sdk_icons(self) -> list[mcp_types.Icon] | None:
        if not self.icons:
            return None
        return [mcp_types.Icon(src=i.src, mime_type=i.mime_type, sizes=list(i.sizes) or None) for i in self.icons]


def server_identity(catalogue: Catalogue, *, icons: tuple[IconSpec, ...] = ()) -> ServerIdentity:
    """``catalogue``'s identity; ``icons`` (``serve --icon``) replace the package's."""
    spec = catalogue.server
    title = plain_text((spec.title if spec and spec.title else None) or catalogue.title, TITLE_LIMIT)
    if spec is not None and spec.instructions:
        about: str | None = plain_text(spec.instructions, INSTRUCTIONS_LIMIT) or None
    else:
        about = first_paragraph(spec.description if spec else None, DESCRIPTION_LIMIT)
    chosen = icons or (spec.icons if spec else ())
    return ServerIdentity(title=title or catalogue.name, about=about, icons=tuple(_usable(chosen)))


def _usable(icons: tuple[IconSpec, ...]) -> list[IconSpec]:
    """The icons that pass the checks again (a catalogue can be edited by hand)."""
    kept = []
    for icon in icons[:8]:
        try:
            checked = icon_from_url(icon.src, operator=True, mime_type=icon.mime_type)
        except IconError as exc:
            logger.warning("icon left out: %s", exc)
            continue
        kept.append(IconSpec(src=checked.src, mime_type=checked.mime_type, sizes=icon.sizes[:8]))
    return kept
