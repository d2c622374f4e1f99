"""The intermediate model: what the OpenAPI document says, as plain data.

Parsing fills it in once (names resolved, schemas converted, overrides looked up) and nothing
changes it afterwards. It holds no runtime binding and no final tool schema: shaping
(:mod:`generator.shape.api`) computes those from it, and :mod:`generator.emit.catalogue` alone builds the
catalogue the runtime reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bridge.contract.catalogue import (
    BodyField,
    BodyKind,
    BoundValue,
    JsonSchema,
    LongRunning,
    OutputPolicy,
    ParamLocation,
    PartEncoding,
    SchemeUse,
    SecurityScheme,
    ServerInfoSpec,
    ServerSpec,
    StaticHeader,
    ToolAnnotationsSpec,
)
from generator.issues import Issue


@dataclass(frozen=True, slots=True)
class Param:
    wire_name: str
    arg_name: str  # "" when the config binds the parameter: no argument feeds it
    location: ParamLocation
    required: bool
    schema: JsonSchema
    style: str
    explode: bool
    description: str | None = None
    allow_reserved: bool = False
    content_type: str | None = None
    deprecated: bool = False
    members: tuple[str, ...] = ()  # see bridge.contract.catalogue.ParamBinding
    free_members: bool = False
    reserved: tuple[str, ...] = ()
    bound: BoundValue | None = None


@dataclass(frozen=True, slots=True)
class Body:
    media_type: str
    required: bool
    schema: JsonSchema
    kind: BodyKind
    arg: str | None  # None when the object's properties are flattened into the arguments
    fields: tuple[BodyField, ...] = ()
    file_fields: tuple[str, ...] = ()
    json_fields: tuple[str, ...] = ()
    encoding: tuple[PartEncoding, ...] = ()
    description: str | None = None
    other_media_types: tuple[str, ...] = ()
    bound_fields: tuple[BodyField, ...] = ()  # top-level properties the config binds (`bind:`)


@dataclass(frozen=True, slots=True)
class Response:
    status: str  # "200", "2XX", "default"
    media_type: str | None
    schema: JsonSchema | None
    description: str | None = None


@dataclass(frozen=True, slots=True)
class Operation:
    tool_name: str
    operation_id: str | None
    method: str  # upper case
    path: str
    summary: str | None
    description: str | None
    tags: tuple[str, ...]
    deprecated: bool
    params: tuple[Param, ...]
    body: Body | None
    responses: tuple[Response, ...]
    # Every argument (parameters and body) as converted: an object schema carrying the $defs it
    # needs. The tool's inputSchema is shaped from it.
    arguments: JsonSchema
    # The lowest success response's JSON body as converted, an object; None when some success
    # response has no JSON body. The tool's outputSchema is shaped from it.
    result: JsonSchema | None
    wrap_result: bool  # `result` wraps a non-object body as {"result": body}
    accept: tuple[str, ...]  # the success media types, JSON ones first
    security: tuple[tuple[SchemeUse, ...], ...]
    annotations: ToolAnnotationsSpec
    output_policy: OutputPolicy | None = None  # x-mcp-output, then the config's `output`
    scopes: tuple[tuple[str, ...], ...] | None = None  # --config `scopes:` (caller scope alternatives)
    long_running: LongRunning | None = None  # 202 and a status URL (generator/parse/longrunning.py)
    extensions: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"


@dataclass(frozen=True, slots=True)
class Api:
    name: str  # package name (folder under generated/)
    title: str
    version: str
    description: str | None
    env_prefix: str
    servers: tuple[ServerSpec, ...]
    security_schemes: dict[str, SecurityScheme]
    operations: tuple[Operation, ...]
    issues: tuple[Issue, ...] = ()
    excluded: tuple[str, ...] = ()  # labels of operations left out on purpose (filters, x-mcp exclude)
    server: ServerInfoSpec | None = None  # initialize's instructions, title, icons (generator/parse/server_info.py)
    headers: tuple[StaticHeader, ...] = ()  # the config's `headers:`, sent on every request
