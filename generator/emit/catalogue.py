"""The one builder of the catalogue: the parsed model and its shaping → what the runtime serves.

Bindings, tool entries and the catalogue itself are made here and nowhere else in the generator
(tests/generator/test_model_ownership.py checks it), so each catalogue field has exactly one
source: a fact of :mod:`generator.parse.ir` or a product of :mod:`generator.shape.api`.
"""

from __future__ import annotations

from bridge.contract.catalogue import (
    ANNOTATION_RULES,
    BodyBinding,
    Catalogue,
    HttpBinding,
    ParamBinding,
    ServeMode,
    ToolEntry,
)
from bridge.contract.media_types import infer_kind
from generator.parse.ir import Api, Body, Operation, Param
from generator.shape.api import Shaped, ToolShape


def assemble_catalogue(api: Api, shaped: Shaped, *, mode: ServeMode = "tools") -> Catalogue:
    return Catalogue(
        name=api.name,
        title=api.title,
        api_version=api.version,
        env_prefix=api.env_prefix,
        servers=api.servers,
        security_schemes=api.security_schemes,
        tools=tuple(tool_entry(op, shape) for op, shape in zip(api.operations, shaped.tools, strict=True)),
        mode=mode,
        shared_arguments=shaped.shared_arguments,
        server=api.server,
        headers=api.headers,
        annotation_rules=ANNOTATION_RULES,
    )


def tool_entry(op: Operation, shape: ToolShape) -> ToolEntry:
    return ToolEntry(
        name=op.tool_name,
        title=op.summary,
        description=shape.description,
        input_schema=shape.input_schema,
        advertised_input_schema=shape.advertised_input_schema,
        output_schema=shape.output_schema,
        annotations=op.annotations,
        binding=http_binding(op, shape),
        tags=op.tags,
        deprecated=op.deprecated,
        scopes=op.scopes,
        long_running=op.long_running,
    )


def http_binding(op: Operation, shape: ToolShape | None = None) -> HttpBinding:
    """How a call of ``op`` goes on the wire; without ``shape``, only the request half (no
    ``fields`` or paging arguments), which is what request-building tests need."""
    return HttpBinding(
        method=op.method,
        path=op.path,
        params=tuple(_param_binding(param) for param in op.params),
        body=_body_binding(op.body) if op.body is not None else None,
        security=op.security,
        wrap_output=op.wrap_result,
        accept=op.accept,
        output=op.output_policy,
        fields_arg=shape.fields_arg if shape is not None else None,
        page_args=shape.page_args if shape is not None else (),
    )


def _param_binding(param: Param) -> ParamBinding:
    return ParamBinding(
        arg=param.arg_name,
        wire=param.wire_name,
        location=param.location,
        style=param.style,
        explode=param.explode,
        required=param.required,
        allow_reserved=param.allow_reserved,
        content_type=param.content_type,
        members=param.members,
        free_members=param.free_members,
        reserved=param.reserved,
        bound=param.bound,
    )


def _body_binding(body: Body) -> BodyBinding:
    return BodyBinding(
        media_type=body.media_type,
        required=body.required,
        arg=body.arg,
        fields=body.fields,
        file_fields=body.file_fields,
        json_fields=body.json_fields,
        # Recorded only when the media type does not say it, so catalogues stay as they were.
        kind=body.kind if body.kind != infer_kind(body.media_type) else None,
        encoding=body.encoding,
        bound_fields=body.bound_fields,
    )
