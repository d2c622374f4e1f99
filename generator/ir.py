"""The intermediate model between the OpenAPI document and the rendered package: plain data.

Every name and schema is resolved here, so templates only print values and tests can inspect
the model directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bridge.catalogue import (
    BoundValue,
    HttpBinding,
    JsonSchema,
    ParamLocation,
    SecurityScheme,
    ServerSpec,
    ToolAnnotationsSpec,
)
from generator.issues import Issue


@dataclass(frozen=True, slots=True)
class Param:
    wire_name: str
    arg_name: str
    location: ParamLocation
    required: bool
    schema: JsonSchema
    style: str
    explode: bool
    description: str | None = None
    allow_reserved: bool = False
    content_type: str | None = None
    deprecated: bool = False
    members: tuple[str, ...] = ()  # see bridge.catalogue.ParamBinding
    free_members: bool = False
    reserved: tuple[str, ...] = ()
    bound: BoundValue | None = None


@dataclass(frozen=True, slots=True)
class Body:
    media_type: str
    required: bool
    schema: JsonSchema
    arg_name: str | None  # None when the object's properties are flattened into the arguments
    description: str | None = None
    other_media_types: tuple[str, ...] = ()


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
    title: str | None
    tool_description: str
    input_schema: JsonSchema
    output_schema: JsonSchema | None
    annotations: ToolAnnotationsSpec
    binding: HttpBinding
    extensions: dict[str, Any] = field(default_factory=dict)
    scopes: tuple[tuple[str, ...], ...] | None = None  # --config `scopes:` (caller scope alternatives)

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
