"""Options of one generation run, with their named defaults."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEFAULT_MAX_NAME_LENGTH = 64
MAX_NAME_LENGTH_LIMIT = 128
DEFAULT_DESCRIPTION_LIMIT = 1024
DEFAULT_FETCH_TIMEOUT = 30.0
DEFAULT_MAX_SPEC_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class GenerateOptions:
    name: str | None = None  # package name; default from the spec title
    max_name_length: int = DEFAULT_MAX_NAME_LENGTH
    description_limit: int = DEFAULT_DESCRIPTION_LIMIT
    include_tags: tuple[str, ...] = ()
    exclude_tags: tuple[str, ...] = ()
    include_operations: tuple[str, ...] = ()  # globs on operationId or "METHOD /path"
    exclude_operations: tuple[str, ...] = ()
    read_only: bool = False
    strict: bool = False
    allow_remote_refs: bool = False
    # Per-operation overrides from a config file, keyed by operationId or "METHOD /path":
    # {"name": ..., "annotations": {...}, "exclude": bool}
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    models: bool = True  # write pydantic models with datamodel-code-generator
