"""The catalogue: everything the runtime needs to serve a generated package, as plain data.

The generator writes it as ``catalogue.json``; the runtime reads it back. Both sides use these
models, so the file format has exactly one definition. Names and schemas are fully resolved by
the generator: the runtime never looks at the OpenAPI document.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.dataclasses import dataclass

CATALOGUE_FORMAT = 1
# How the generator decided the tools' annotations: 0 (absent) from the method alone, 1 from every
# signal (generator/parse/annotations.py). Serving reads a 0 catalogue's names again.
ANNOTATION_RULES = 1
CATALOGUE_FILE = "catalogue.json"
OPERATION_META_KEY = "mcp-bridge/operation"

CA_BUNDLE_SUFFIX = "CA_BUNDLE"
"""``<PREFIX>_CA_BUNDLE``: the PEM file of the CAs an API's TLS certificate must chain to (bridge/secrets/tls.py)."""

ParamLocation = Literal["path", "query", "header", "cookie"]
EnvRole = Literal[
    "value", "token", "username", "password", "client_id", "client_secret", "cert_file", "key_file", "key_password"
]
JsonSchema = dict[str, Any]


# The catalogue's parts are slotted frozen dataclasses rather than models: a thousand-operation
# API has thousands of parameters, and a model instance carries a __dict__ and a fields-set per
# object (about 1 KB each; 7 MB of a GitHub server's memory). Only the root stays a model.
_CONFIG = ConfigDict(extra="forbid")


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class BoundValue:
    """Where a parameter bound by the operator's configuration gets its value: an environment
    variable (a secret, redacted everywhere) or a fixed text. Never from the model."""

    env: str | None = None
    value: str | None = None
    # Set when the parameter is a credential slot (the header, query or cookie an apiKey scheme
    # fills): it is filled from that scheme's credential (``env`` is its variable) on every call,
    # whichever security alternative the call uses; unset and optional, it is left out.
    scheme: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class ParamBinding:
    """One OpenAPI parameter: the tool argument that feeds it and how it goes on the wire."""

    arg: str
    wire: str
    location: ParamLocation
    style: str
    explode: bool
    required: bool = False
    allow_reserved: bool = False
    # Set when the parameter is described with `content` instead of `schema`: the value is
    # serialised in that media type (JSON) and then encoded as a plain string.
    content_type: str | None = None
    # A form-exploded query or cookie object sends each member as a name of its own
    # (bridge/request/wire_names.py): the member names it may send (none unless listed), or any name when
    # `free_members` (the spec allows free keys) except another parameter's or a `reserved` one
    # (credential slots), compared case-insensitively.
    members: tuple[str, ...] = ()
    free_members: bool = False
    reserved: tuple[str, ...] = ()
    # Set by `bind:` in the generator's config: the value comes from there, and `arg` is "".
    bound: BoundValue | None = None


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class BodyField:
    """A flattened request-body property: argument name and property name in the body."""

    arg: str
    wire: str
    # Set by `bind:` (a top-level body property): the value comes from there, and `arg` is "".
    bound: BoundValue | None = None
    required: bool = False  # a bound property the body schema requires


BodyKind = Literal["json", "form", "multipart", "text", "binary"]
FormStyle = Literal["form", "spaceDelimited", "pipeDelimited", "deepObject"]


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class PartEncoding:
    """How one property of a form or multipart body goes on the wire (OpenAPI Encoding Object).

    Only properties whose encoding differs from the runtime's defaults are listed (see
    :mod:`bridge.request.forms`).
    """

    name: str
    style: FormStyle = "form"
    explode: bool = True
    # Multipart: the part's Content-Type (the first concrete type the spec lists).
    content_type: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class BodyBinding:
    """The request body: its media type and which arguments make it up.

    Exactly one of ``arg`` (the whole body is one argument) and ``fields`` (an object body
    flattened into the arguments) is used.
    """

    media_type: str
    required: bool = False
    arg: str | None = None
    fields: tuple[BodyField, ...] = ()
    # Multipart/form properties that carry files (format binary/byte): base64 or data: URI.
    file_fields: tuple[str, ...] = ()
    # Properties that must be JSON-encoded inside a form or multipart body.
    json_fields: tuple[str, ...] = ()
    # How the body is serialised when the media type alone does not say (a `*/*` body with an
    # object schema is JSON); None: decided from the media type (bridge/request/bodies.py).
    kind: BodyKind | None = None
    # The Content-Type sent when the declared media type is a wildcard; None: the declared one.
    content_type: str | None = None
    # Form/multipart properties with a non-default encoding.
    encoding: tuple[PartEncoding, ...] = ()
    # Top-level properties the operator bound (`bind:`): never arguments, set into the body object
    # (replacing anything the model sent under that name) whenever a body is sent.
    bound_fields: tuple[BodyField, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class SchemeUse:
    scheme: str
    scopes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class OutputPolicy:
    """Per-operation result shaping (``x-mcp-output`` or config): keep only ``fields`` (dotted
    paths), and limits that replace the server's defaults for this tool."""

    fields: tuple[str, ...] = ()
    max_items: int | None = None
    max_string: int | None = None
    max_bytes: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class HttpBinding:
    """How one tool call becomes one HTTP request, and how its response becomes a result."""

    method: str
    path: str
    params: tuple[ParamBinding, ...] = ()
    body: BodyBinding | None = None
    # Alternatives (any one suffices); an empty alternative means anonymous access is allowed.
    # An empty tuple means the operation needs no credentials at all.
    security: tuple[tuple[SchemeUse, ...], ...] = ()
    # The output schema wraps a non-object JSON body as {"result": body}.
    wrap_output: bool = False
    # Response media types the operation declares for its success responses, for Accept.
    accept: tuple[str, ...] = ()
    # Result shaping for this operation (bridge/results/trim.py); None: the server's defaults.
    output: OutputPolicy | None = None
    # The argument that selects result fields (never sent upstream); None: the tool has none.
    fields_arg: str | None = None
    # Arguments that page through results, named in truncation notes.
    page_args: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class EnvVar:
    """An environment variable that supplies one part of a credential."""

    role: EnvRole
    name: str


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class SecurityScheme:
    type: Literal["apiKey", "http", "oauth2", "openIdConnect", "mutualTLS"]
    description: str | None = None
    location: Literal["header", "query", "cookie"] | None = None  # apiKey
    param_name: str | None = None  # apiKey
    http_scheme: str | None = None  # http: bearer, basic, ...
    token_url: str | None = None  # oauth2 client credentials
    scopes: tuple[str, ...] = ()
    env: tuple[EnvVar, ...] = ()
    supported: bool = True


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class StaticHeader:
    """A header the operator's configuration adds to every request."""

    name: str
    value: BoundValue


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class ServerVariable:
    default: str
    enum: tuple[str, ...] = ()
    description: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class ServerSpec:
    url: str
    description: str | None = None
    variables: dict[str, ServerVariable] = Field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class ToolAnnotationsSpec:
    readOnlyHint: bool  # wire names
    destructiveHint: bool
    idempotentHint: bool
    openWorldHint: bool


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class OperationLink:
    """Another operation the bridge calls about a long-running one (its cancel operation).

    ``arguments`` maps each argument of the linked tool to an OpenAPI runtime expression
    (``$response.body#/id``, ``$response.header.X-Job``, ``$request.path.name``, ...) read from
    the call that started the operation, or to a constant (bridge/contract/expressions/links.py).
    """

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


FinalStateVia = Literal["azure-async-operation", "location", "original-uri", "operation-location"]


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class LongRunning:
    """An operation that answers ``202 Accepted`` and a status URL to poll (bridge/calls/longrunning/).

    Set from a 202 response with a ``Location`` or ``Operation-Location`` header, from
    ``x-ms-long-running-operation``, or from ``x-mcp-async`` / the config's ``async``. The
    defaults recognise the common status bodies (``status``/``state``/``provisioningState``,
    Google's ``done``); ``state`` (a JSON pointer), the value lists and ``result`` (a pointer to
    the result inside the final status body) say more when an API differs.
    """

    status_headers: tuple[str, ...] = ()  # the headers naming the status URL; () is the default set
    state: str | None = None
    running: tuple[str, ...] = ()
    succeeded: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    result: str | None = None
    cancel: OperationLink | None = None
    # Azure's x-ms-long-running-operation: a 200 or 201 that names a status URL or a provisioningState
    # still running is followed too, and the final answer comes from where final-state-via says
    # ("original-uri": GET the request's URL again; "location": GET the first answer's Location;
    # "azure-async-operation" / "operation-location": the status itself). None: not Azure's rules.
    final_state_via: FinalStateVia | None = None


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class ToolEntry:
    name: str
    title: str | None = None
    description: str
    input_schema: JsonSchema
    # What tools/list shows when input_schema is over the generator's bound: deeper parts as plain
    # objects (bridge/contract/schema_bound.py). Arguments are always checked against input_schema.
    advertised_input_schema: JsonSchema | None = None
    output_schema: JsonSchema | None = None
    annotations: ToolAnnotationsSpec
    binding: HttpBinding
    tags: tuple[str, ...] = ()  # the operation's tags (discovery search)
    # OpenAPI `deprecated: true`: search ranks the operation below its replacements (bridge/modes/search.py).
    deprecated: bool = False
    # The OAuth scopes a caller needs, set in --config (alternatives); None: from the operation's
    # OAuth2 / OpenID Connect security requirements (bridge/identity/scopes.py).
    scopes: tuple[tuple[str, ...], ...] | None = None
    # Set when the operation answers 202 and a status URL (bridge/calls/longrunning/).
    long_running: LongRunning | None = None

    @property
    def operation(self) -> str:
        return f"{self.binding.method} {self.binding.path}"


# --- workflows (Arazzo 1.0) ---------------------------------------------------------------------
# Values below (`value`, `payload`) are JSON as the Arazzo document wrote them: a string that starts
# with a runtime expression root ($inputs, $steps, ...) is one expression, and `{$...}` inside other
# strings are embedded ones (bridge/contract/expressions/arazzo.py). The generator has parsed and checked
# every one of them; the runtime parses them again when it starts, and refuses to start on a bad one.


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class WorkflowCriterion:
    condition: str
    context: str | None = None  # the expression regex and jsonpath conditions apply to
    type: Literal["simple", "regex", "jsonpath"] = "simple"


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class WorkflowAction:
    """An ``onSuccess`` / ``onFailure`` action, reusable references resolved."""

    name: str
    type: Literal["end", "goto", "retry"]
    step: str | None = None  # a stepId of the same workflow (goto; retry: run it, then retry)
    workflow: str | None = None  # a workflow id of this catalogue (goto; retry: run it, then retry)
    retry_after: float | None = None  # seconds (retry)
    retry_limit: int | None = None  # retries at most (retry; None: one)
    criteria: tuple[WorkflowCriterion, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class StepInput:
    """A value a step gives: an operation argument, a nested workflow's input, or a credential."""

    name: str  # argument name, input name, or security scheme name (credential)
    value: Any = None
    kind: Literal["argument", "input", "credential"] = "argument"


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class PayloadReplacement:
    target: str  # a JSON pointer into the payload
    value: Any = None


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class StepBody:
    payload: Any = None
    content_type: str | None = None
    replacements: tuple[PayloadReplacement, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class WorkflowStep:
    """One step: an operation of this catalogue (``tool``) or another workflow (``workflow``)."""

    step_id: str
    tool: str | None = None
    workflow: str | None = None
    inputs: tuple[StepInput, ...] = ()
    body: StepBody | None = None
    success: tuple[WorkflowCriterion, ...] = ()  # empty: any status below 400 is a success
    on_success: tuple[WorkflowAction, ...] = ()
    on_failure: tuple[WorkflowAction, ...] = ()
    outputs: dict[str, str] = Field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class WorkflowEntry:
    """One Arazzo workflow, served as one tool (bridge/workflows/tools.py)."""

    name: str  # the tool name
    workflow_id: str
    source: str  # the Arazzo document's file name
    title: str | None = None
    description: str
    input_schema: JsonSchema
    output_schema: JsonSchema | None = None
    annotations: ToolAnnotationsSpec
    steps: tuple[WorkflowStep, ...]
    outputs: dict[str, str] = Field(default_factory=dict)
    depends_on: tuple[str, ...] = ()  # workflow ids run first

    @property
    def operation(self) -> str:
        return f"workflow {self.workflow_id}"


ServeMode = Literal["tools", "discovery", "code"]


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class IconSpec:
    """One icon of the server (MCP ``Icon``): an https or ``data:`` image URL (bridge/server/info.py)."""

    src: str
    mime_type: str | None = None
    sizes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class ServerInfoSpec:
    """What ``initialize`` says about the server besides its name (bridge/server/info.py).

    ``description`` is the first paragraph of the spec's ``info.description`` as plain text;
    ``instructions`` and ``title``, set in the generator's config, replace it and the API's title.
    """

    description: str | None = None
    instructions: str | None = None
    title: str | None = None
    icons: tuple[IconSpec, ...] = ()


class Catalogue(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    format: int = CATALOGUE_FORMAT
    name: str
    title: str
    api_version: str
    env_prefix: str
    servers: tuple[ServerSpec, ...] = ()
    security_schemes: dict[str, SecurityScheme] = Field(default_factory=dict)
    tools: tuple[ToolEntry, ...] = ()
    # How `serve` presents the tools unless told otherwise: one MCP tool per operation, or the
    # three discovery tools (bridge/modes/discovery.py), or code mode (bridge/modes/codemode.py).
    mode: ServeMode = "tools"
    # Descriptions of arguments that mean the same in many tools, said once (in the server's
    # instructions) instead of in every tool: argument name -> description.
    shared_arguments: dict[str, str] = Field(default_factory=dict)
    # Headers the operator set in --config (`headers:`), sent on every request; no argument can set
    # or override them. A value from the environment is a secret.
    headers: tuple[StaticHeader, ...] = ()
    # Instructions, title and icons for `initialize` (info.description, x-logo, the config's `server`).
    server: ServerInfoSpec | None = None
    # Arazzo workflows, one tool each, whose steps call the tools above (absent when there are none).
    workflows: tuple[WorkflowEntry, ...] = ()
    annotation_rules: int = 0  # ANNOTATION_RULES when generated: see there


def stub_entries(catalogue: Catalogue) -> tuple[ToolEntry, ...]:
    """The entries api.pyi and code mode type as functions: every tool, then every workflow.

    A workflow is given as a tool entry whose binding names it (``WORKFLOW <id>``), which is all
    the stub renderer reads of a binding; the order is the same everywhere, so function names match.
    """
    workflows = tuple(
        ToolEntry(
            name=flow.name,
            title=flow.title,
            description=flow.description,
            input_schema=flow.input_schema,
            output_schema=flow.output_schema,
            annotations=flow.annotations,
            binding=HttpBinding(method="WORKFLOW", path=flow.workflow_id),
        )
        for flow in catalogue.workflows
    )
    return catalogue.tools + workflows
