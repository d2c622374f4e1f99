"""Loading a generated package: its catalogue, and the user's hooks."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import logging
from pathlib import Path

from pydantic import ValidationError

from bridge.calls.runtime import HttpRuntime
from bridge.contract.catalogue import (
    ANNOTATION_RULES,
    CATALOGUE_FILE,
    CATALOGUE_FORMAT,
    Catalogue,
    ToolAnnotationsSpec,
    ToolEntry,
)
from bridge.contract.vocabulary.verbs import said_by
from bridge.tools.errors import PackageError
from bridge.tools.registry import ToolRegistry

HOOKS_FILE = "hooks.py"
_LISTED = 5
logger = logging.getLogger("bridge.serving")


def load_catalogue(package_dir: Path) -> Catalogue:
    path = package_dir / CATALOGUE_FILE
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PackageError(
            f"{path}: cannot read the catalogue ({exc.strerror}); is this a generated package?"
        ) from None
    try:
        # json.loads, then validation of the Python data: the schema dicts are then kept as
        # json made them, where validating the JSON text directly held about 8 MB more on GitHub.
        catalogue = Catalogue.model_validate(json.loads(raw))
    except ValueError as exc:
        if not isinstance(exc, ValidationError):
            raise PackageError(f"{path}: not JSON ({exc}) (regenerate the package)") from None
        first = exc.errors()[0]  # ValidationError is a ValueError
        where = "/".join(str(p) for p in first["loc"])
        raise PackageError(f"{path}: /{where}: {first['msg']} (regenerate the package)") from None
    if catalogue.format != CATALOGUE_FORMAT:
        raise PackageError(f"{path}: catalogue format {catalogue.format}, this runtime reads {CATALOGUE_FORMAT}")
    if catalogue.annotation_rules < ANNOTATION_RULES:
        catalogue = _reread_annotations(catalogue, path)
    return catalogue


def _reread(entry: ToolEntry) -> ToolAnnotationsSpec:
    """A tool's annotations with what its names say (bridge/contract/vocabulary/verbs.py) laid over them,
    the safe way only: a tool named as a write is not read-only, one named as destroying is destructive."""
    hints = entry.annotations
    action = entry.input_schema.get("properties", {}).get("Action", {})
    fixed = action.get("enum") if isinstance(action, dict) else None
    actions = (
        [("Action", fixed[0])] if isinstance(fixed, list) and len(fixed) == 1 and isinstance(fixed[0], str) else []
    )
    method, path = entry.binding.method, entry.binding.path
    found = said_by(method, operation_id=entry.name, actions=actions, path=path, summary=entry.title)
    writes = any(said.writes for said in found)
    return dataclasses.replace(
        hints,
        readOnlyHint=hints.readOnlyHint and not writes,
        destructiveHint=hints.destructiveHint or any(said.destroys for said in found),
        idempotentHint=hints.idempotentHint and not (hints.readOnlyHint and writes),
    )


def _reread_annotations(catalogue: Catalogue, path: Path) -> Catalogue:
    """A package generated before annotations read the operations' names (its catalogue says
    ``annotation_rules`` 0): its tools' names are read again, so ``GET /?Action=TerminateInstances``
    is not served read-only; one warning names the tools changed. Regenerating settles it."""
    tools = []
    changed = []
    for entry in catalogue.tools:
        hints = _reread(entry)
        if hints != entry.annotations:
            changed.append(entry.name)
            entry = dataclasses.replace(entry, annotations=hints)
        tools.append(entry)
    if changed:
        named = ", ".join(changed[:_LISTED]) + (f" and {len(changed) - _LISTED} more" if len(changed) > _LISTED else "")
        logger.warning(
            "%s: generated before annotations read operation names; %d tool(s) named as writes are served "
            "as such (%s); regenerate the package to see and settle them",
            path,
            len(changed),
            named,
        )
    return catalogue.model_copy(update={"tools": tuple(tools)})


def apply_hooks(package_dir: Path, registry: ToolRegistry, runtime: HttpRuntime) -> None:
    """Run ``register(registry, runtime)`` from the package's hooks.py, when it has one."""
    path = package_dir / HOOKS_FILE
    if not path.is_file():
        return
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"mcp_bridge_hooks_{digest}", path)
    if spec is None or spec.loader is None:
        raise PackageError(f"{path}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    register = getattr(module, "register", None)
    if register is None:
        return
    if not callable(register):
        raise PackageError(f"{path}: `register` must be a function (registry, runtime) -> None")
    register(registry, runtime)
