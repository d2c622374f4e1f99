"""Azure's autorest extensions read as plain OpenAPI: ``x-ms-paths`` and ``x-ms-parameterized-host``.

``x-ms-paths`` holds operations a path key cannot tell apart in ``paths`` (``/file?op=OPEN`` next
to ``/file?op=APPEND``): they join ``paths`` with their keys unchanged, and the path template's
literal query pairs (``bridge.contract.path_template``) are sent as constants. The documents
that use them declare the same pairs as required one-value parameters, which the template
fixing them leaves out of the arguments.

``x-ms-parameterized-host`` (Swagger 2.0) replaces ``host``: its ``hostTemplate`` becomes the
server URL and each of its parameters a server variable, filled by the operator's
configuration (``--server-var``), never by the model, so no argument can move a call to
another host.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bridge.contract.expressions import json_pointer as pointer
from generator.issues import Issue, Level

X_MS_PATHS = "x-ms-paths"
X_MS_PARAMETERIZED_HOST = "x-ms-parameterized-host"


def merge_x_ms_paths(document: dict[str, Any], source: str) -> tuple[dict[str, Any], list[Issue]]:
    """``document`` with its ``x-ms-paths`` entries added to ``paths`` (a copy; the input is unchanged)."""
    extra = document.get(X_MS_PATHS)
    if not isinstance(extra, dict) or not extra:
        return document, []
    issues: list[Issue] = []
    paths = document.get("paths")
    merged: dict[str, Any] = dict(paths) if isinstance(paths, dict) else {}
    for key, item in extra.items():
        if key in merged:
            where = f"{source}: {pointer.join(X_MS_PATHS, key)}"
            issues.append(Issue(Level.WARNING, where, "is also a key of paths; the paths entry is kept"))
            continue
        merged[key] = item
    out = {name: value for name, value in document.items() if name != X_MS_PATHS}
    out["paths"] = merged
    return out, issues


def parameterized_servers(
    document: dict[str, Any],
    schemes: list[str],
    base_path: str,
    resolve: Callable[[str], Any],
    warn: Callable[[tuple[str, ...], str], None],
) -> list[dict[str, Any]] | None:
    """The OpenAPI 3 servers of a Swagger 2.0 ``x-ms-parameterized-host``, or None when it has none.

    ``resolve`` looks a ``$ref`` up in the document; ``warn`` reports a problem at a pointer.
    """
    node = document.get(X_MS_PARAMETERIZED_HOST)
    if node is None:
        return None
    where = (X_MS_PARAMETERIZED_HOST,)
    template = node.get("hostTemplate") if isinstance(node, dict) else None
    if not isinstance(template, str) or not template.strip():
        warn(where, "has no hostTemplate; ignored")
        return None
    assert isinstance(node, dict)
    variables: dict[str, Any] = {}
    params = node.get("parameters")
    for index, entry in enumerate(params if isinstance(params, list) else []):
        param = resolve(entry["$ref"]) if isinstance(entry, dict) and isinstance(entry.get("$ref"), str) else entry
        if not isinstance(param, dict) or not isinstance(param.get("name"), str):
            warn((*where, "parameters", str(index)), "parameter cannot be resolved; skipped")
            continue
        variables[param["name"]] = _variable(param)
    for name in _template_names(template):
        if name not in variables:
            warn(where, f"hostTemplate uses {{{name}}}, which no parameter declares; taken as a server variable")
            variables[name] = {"default": ""}
    path = base_path.rstrip("/")
    if node.get("useSchemePrefix") is False:
        urls = [template + path]
    else:
        urls = [f"{scheme}://{template}{path}" for scheme in schemes]
    used = {name: variables[name] for name in _template_names(template)}
    return [{"url": url, "variables": dict(used)} if used else {"url": url} for url in urls]


def _variable(param: dict[str, Any]) -> dict[str, Any]:
    """A server variable from a Swagger 2.0 parameter; no default ("") means the operator must set it."""
    out: dict[str, Any] = {"default": str(param["default"]) if "default" in param else ""}
    enum = param.get("enum")
    if isinstance(enum, list) and enum:
        out["enum"] = [str(value) for value in enum]
    if isinstance(param.get("description"), str):
        out["description"] = param["description"]
    return out


def _template_names(template: str) -> list[str]:
    names: list[str] = []
    rest = template
    while "{" in rest:
        _, _, rest = rest.partition("{")
        name, found, rest = rest.partition("}")
        if found and name and name not in names:
            names.append(name)
    return names
