"""The catalogue's ``server``: the spec's description and ``x-logo``, and the config's ``server`` overrides."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge.contract.catalogue import IconSpec, ServerInfoSpec
from bridge.contract.icons import IconError, icon_from_url
from bridge.contract.plain_text import DESCRIPTION_LIMIT, TITLE_LIMIT, first_paragraph, plain_text
from generator.issues import Issue, Level

__all__ = ["server_spec"]

CONFIG_KEYS = ("instructions", "title", "icons")
INSTRUCTIONS_LIMIT = 2000


def server_spec(
    info: Mapping[str, Any], config: Mapping[str, Any], issues: list[Issue], where: str = "info"
) -> ServerInfoSpec | None:
    """What ``initialize`` will say; None when the spec and the config say nothing.

    The description is stored as it will be shown (plain, first paragraph, bounded), so the
    catalogue can be reviewed; ``x-logo.url`` must be an https or data: raster image.
    """
    description = first_paragraph(_string(info.get("description")), DESCRIPTION_LIMIT)
    icons: list[IconSpec] = []
    logo = info.get("x-logo")
    if isinstance(logo, Mapping) and logo.get("url") is not None:
        try:
            icons.append(icon_from_url(str(logo.get("url")), operator=False))
        except IconError as exc:
            issues.append(Issue(Level.WARNING, f"{where}/x-logo", f"not used as the server's icon: {exc}"))
    for key in config:
        if key not in CONFIG_KEYS:
            issues.append(Issue(Level.WARNING, "config: server", f"{key!r} is not understood; ignored"))
    instructions = _string(config.get("instructions"))
    title = _string(config.get("title"))
    configured = config.get("icons")
    if configured is not None:
        icons = _config_icons(configured, issues)
    spec = ServerInfoSpec(
        description=description,
        instructions=plain_text(instructions, INSTRUCTIONS_LIMIT) if instructions else None,
        title=plain_text(title, TITLE_LIMIT) if title else None,
        icons=tuple(icons),
    )
    return spec if spec != ServerInfoSpec() else None


def _config_icons(value: Any, issues: list[Issue]) -> list[IconSpec]:
    items = value if isinstance(value, list) else [value]
    icons = []
    for item in items:
        src = item.get("src") if isinstance(item, Mapping) else item
        try:
            icon = icon_from_url(str(src), operator=True)
        except IconError as exc:
            issues.append(Issue(Level.WARNING, "config: server.icons", f"{str(src)[:80]!r} left out: {exc}"))
            continue
        sizes = item.get("sizes") if isinstance(item, Mapping) else None
        if isinstance(sizes, list) and all(isinstance(s, str) for s in sizes):
            icon = IconSpec(src=icon.src, mime_type=icon.mime_type, sizes=tuple(sizes))
        icons.append(icon)
    return icons


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None
