"""Which source descriptions a workflow may use, and finding its steps' operations and workflows there.

A package is generated from one spec, so a workflow may call operations of that spec only: a
source description of type ``openapi`` is the package's spec when its URL is the spec's file
(relative URLs are resolved against the Arazzo document's folder), or when it is the document's
only OpenAPI source (an Arazzo file written against the vendor's published URL is then used
with a local copy). Any other source is refused, with the workflows that use it. A source of
type ``arazzo`` is one of the documents given with ``--workflows``, matched by file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

from bridge.contract.catalogue import Catalogue, ToolEntry
from bridge.contract.expressions import json_pointer as pointer
from bridge.contract.expressions.arazzo import ExpressionError, parse_expression, parse_template
from generator.parse.ir import Api, Operation
from generator.workflows.document import ArazzoDocument

__all__ = ["Known", "Sources", "Target"]


@dataclass(frozen=True, slots=True)
class Target:
    """What a step calls: operation ``index`` of the package, or workflow ``workflow`` (an id)."""

    index: int | None = None
    workflow: str | None = None
    note: str | None = None  # a warning worth giving, the step still resolves


@dataclass(slots=True)
class Known:
    """The package's operations and tools, looked up by operationId and by route."""

    api: Api
    catalogue: Catalogue
    spec_source: str
    by_id: dict[str, int] = field(default_factory=dict)
    by_route: dict[tuple[str, str], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for index, op in enumerate(self.api.operations):
            if op.operation_id:
                self.by_id.setdefault(op.operation_id, index)
            self.by_route[(op.method.upper(), op.path)] = index

    def operation(self, index: int) -> Operation:
        return self.api.operations[index]

    def entry(self, index: int) -> ToolEntry:
        return self.catalogue.tools[index]


def _local_path(url: str, folder: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme in ("http", "https"):
        return None
    if parts.scheme == "file":
        return os.path.realpath(url2pathname(parts.path))
    if parts.scheme:
        return None
    return os.path.realpath(os.path.join(folder, url2pathname(parts.path)))


class Sources:
    """The source descriptions of one Arazzo document, mapped to the package's spec or documents."""

    def __init__(self, doc: ArazzoDocument, spec_source: str, documents: dict[str, ArazzoDocument]) -> None:
        self.doc = doc
        spec = os.path.realpath(spec_source) if "://" not in spec_source else spec_source
        listed = [s for s in doc.document.get("sourceDescriptions", []) if isinstance(s, dict)]
        openapi = [s for s in listed if s.get("type", "openapi") == "openapi"]
        self.spec_names: set[str] = set()
        self.arazzo: dict[str, ArazzoDocument] = {}
        self.refused: dict[str, str] = {}  # name -> why it cannot be used
        for source in listed:
            name, url = str(source.get("name")), str(source.get("url"))
            if source.get("type") == "arazzo":
                path = _local_path(url, str(doc.folder))
                found = documents.get(path or "")
                if found is not None:
                    self.arazzo[name] = found
                else:
                    self.refused[name] = (
                        f"source '{name}' is the Arazzo document {url!r}, which is not given with --workflows"
                    )
                continue
            path = _local_path(url, str(doc.folder))
            if path == spec or url == spec or len(openapi) == 1:
                self.spec_names.add(name)
            else:
                self.refused[name] = (
                    f"source '{name}' ({url}) is not the spec this package is generated from "
                    f"({os.path.basename(spec_source)}); a workflow may call only operations generated into the package"
                )

    def _source(self, name: str) -> str | None:
        """Why source ``name`` cannot be used (None: it is the spec)."""
        if name in self.spec_names:
            return None
        if name in self.refused:
            return self.refused[name]
        if name in self.arazzo:
            return f"source '{name}' is an Arazzo document, not an OpenAPI description"
        return f"source '{name}' is not among the document's sourceDescriptions"

    def operation_id(self, value: str, known: Known) -> Target | str:
        """The operation ``value`` (``opId`` or ``$sourceDescriptions.<name>.<opId>``), else why not."""
        op_id = value
        if value.startswith("$"):
            try:
                expression = parse_expression(value)
            except ExpressionError as exc:
                return str(exc)
            if expression.root != "sourceDescriptions":
                return f"{value[:80]!r} is not an operationId or $sourceDescriptions.<name>.<operationId>"
            why = self._source(expression.parts[0])
            if why is not None:
                return why
            op_id = expression.parts[1]
        elif len(self.spec_names) + len(self.refused) > 1 and len(self.spec_names) != 1:
            return (
                "with several OpenAPI sources, an operationId must be written $sourceDescriptions.<name>.<operationId>"
            )
        index = known.by_id.get(op_id)
        if index is None:
            return f"no operation of this package has operationId '{op_id[:100]}' (not in the spec, or filtered out)"
        return Target(index=index)

    def operation_path(self, value: str, known: Known) -> Target | str:
        """The operation ``{$sourceDescriptions.<name>.url}#/paths/~1pets/get``, else why not."""
        head, sep, fragment = value.partition("#")
        try:
            template = parse_template(head)
        except ExpressionError as exc:
            return str(exc)
        expression = template.single
        if not sep or expression is None or expression.root != "sourceDescriptions":
            return "an operationPath is '{$sourceDescriptions.<name>.url}#/paths/<escaped path>/<method>'"
        why = self._source(expression.parts[0])
        if why is not None:
            return why
        try:
            tokens = pointer.split("#" + fragment)
        except pointer.PointerError as exc:
            return str(exc)
        if len(tokens) not in (2, 3) or tokens[0] != "paths":
            return f"#{fragment[:100]} does not point to an operation (#/paths/<path>/<method>)"
        path = tokens[1]
        if len(tokens) == 3:
            index = known.by_route.get((tokens[2].upper(), path))
            if index is None:
                return f"{tokens[2].upper()} {path} is not an operation of this package"
            return Target(index=index)
        methods = [(method, i) for (method, p), i in known.by_route.items() if p == path]
        if len(methods) != 1:
            return f"#{fragment[:100]} points to a path item, not to one of its operations (add /get, /post, ...)"
        method, index = methods[0]
        return Target(
            index=index, note=f"operationPath points to the path item {path}; its one operation {method} is used"
        )

    def workflow_id(self, value: str, local: set[str]) -> Target | str:
        """The workflow ``value`` (an id of this document or ``$sourceDescriptions.<name>.<id>``)."""
        if not value.startswith("$"):
            return Target(workflow=value) if value in local else f"no workflow '{value[:100]}' in {self.doc.name}"
        try:
            expression = parse_expression(value)
        except ExpressionError as exc:
            return str(exc)
        if expression.root != "sourceDescriptions":
            return f"{value[:80]!r} is not a workflowId or $sourceDescriptions.<name>.<workflowId>"
        name, member = expression.parts
        other = self.arazzo.get(name)
        if other is None:
            return self.refused.get(name) or f"source '{name}' is not an Arazzo document given with --workflows"
        ids = {w.get("workflowId") for w in other.document.get("workflows", []) if isinstance(w, dict)}
        if member not in ids:
            return f"no workflow '{member[:100]}' in {other.name}"
        return Target(workflow=member)


def component(doc: ArazzoDocument, kind: str, name: str) -> Any:
    """``components.<kind>.<name>`` of ``doc`` (None when absent)."""
    components = doc.document.get("components")
    group = components.get(kind) if isinstance(components, dict) else None
    return group.get(name) if isinstance(group, dict) else None
