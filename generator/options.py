"""Options of one generation run, with their named defaults."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from bridge.contract.result_shape import DEFAULT_OUTPUT_DEPTH
from bridge.contract.schema_bound import DEFAULT_INPUT_SCHEMA_BYTES

DEFAULT_MAX_NAME_LENGTH = 64
MAX_NAME_LENGTH_LIMIT = 128
DEFAULT_DESCRIPTION_LIMIT = 1024  # the tool description's limit without compaction
DEFAULT_FETCH_TIMEOUT = 30.0
DEFAULT_MAX_SPEC_BYTES = 64 * 1024 * 1024
# Compaction (generator/shape/compact.py)
DEFAULT_TOOL_DESCRIPTION_LIMIT = 250
DEFAULT_PROPERTY_DESCRIPTION_LIMIT = 100
DEFAULT_BOILERPLATE_REPEATS = 20
DEFAULT_SHARE_MIN_CHARS = 200
DEFAULT_SHARED_ARGUMENT_TOOLS = 20
# Above this many model-visible tokens (name + description + inputSchema of every tool), `generate`
# suggests discovery mode.
DISCOVERY_HINT_TOKENS = 30_000

Mode = Literal["tools", "discovery", "code"]


@dataclass(frozen=True, slots=True)
class GenerateOptions:
    name: str | None = None  # package name; default from the spec title
    max_name_length: int = DEFAULT_MAX_NAME_LENGTH
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
    # `bind:` of the config file: parameter wire name -> "env:NAME" or a fixed value, for every
    # operation with that parameter (generator/parse/bindings.py); per-operation `bind` overrides it.
    bindings: dict[str, Any] = field(default_factory=dict)
    # `server:` of the config file: instructions, title and icons for `initialize` (generator/parse/server_info.py).
    server: dict[str, Any] = field(default_factory=dict)
    # `security_schemes:` of the config: schemes the spec left out (OpenAPI Security Scheme
    # Objects, by name), handled exactly like the spec's; `security:` replaces the document's
    # default requirement (per operation: `operations: {<id>: {security: [...]}}`).
    security_schemes: dict[str, Any] = field(default_factory=dict)
    security: list[Any] | None = None
    # `headers:` of the config: header name -> "env:NAME" or a fixed value, sent on every request.
    headers: dict[str, Any] = field(default_factory=dict)
    # Lean definitions (generator/shape/compact.py); False keeps schemas and descriptions as converted.
    compact: bool = True
    # Longest tool description; None: DEFAULT_TOOL_DESCRIPTION_LIMIT compacted, else DEFAULT_DESCRIPTION_LIMIT.
    tool_description_limit: int | None = None
    property_description_limit: int = DEFAULT_PROPERTY_DESCRIPTION_LIMIT
    boilerplate_repeats: int = DEFAULT_BOILERPLATE_REPEATS  # 0: keep repeated sentences
    share_min_chars: int = DEFAULT_SHARE_MIN_CHARS  # 0: never move repeated sub-schemas to $defs
    # An argument described identically in at least this many tools is described once, in the
    # server's instructions (0: never).
    shared_argument_tools: int = DEFAULT_SHARED_ARGUMENT_TOOLS
    output_schemas: bool = True  # False: no outputSchema (and no `fields` argument) on any tool
    output_depth: int = DEFAULT_OUTPUT_DEPTH  # object levels the output schema spells out
    output_descriptions: bool = False  # keep descriptions in output schemas
    # Largest input schema a tool shows (compact JSON bytes; deeper parts become plain objects,
    # bridge/contract/schema_bound.py); 0: no bound. Arguments are still checked against the whole schema.
    max_input_schema_bytes: int = DEFAULT_INPUT_SCHEMA_BYTES
    mode: Mode = "tools"  # how `serve` presents the tools by default (recorded in the catalogue)
    allow_empty: bool = False  # write a package with no tool (a warning, not an error)
    env_prefix: str | None = None  # prefix of the environment variables; default from the package name
    # Overlay documents applied, in order, to the spec before anything reads it (generator/load/overlays/).
    overlays: tuple[str, ...] = ()
    # Arazzo documents whose workflows become tools (generator/workflows/).
    workflows: tuple[str, ...] = ()
    # Write over a package of another API (`generate --replace`); without it such a folder is refused.
    replace: bool = False


def tool_description_limit_of(options: GenerateOptions) -> int:
    if options.tool_description_limit is not None:
        return options.tool_description_limit
    return DEFAULT_TOOL_DESCRIPTION_LIMIT if options.compact else DEFAULT_DESCRIPTION_LIMIT
