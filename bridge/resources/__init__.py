"""GET operations as MCP resources and resource templates (``serve --resources``).

``resources/list`` and ``resources/templates/list`` are paginated (``PAGE`` per page, an opaque
cursor) and show only what the caller's scopes allow; ``resources/read`` matches the URI
(:mod:`bridge.resources.uris`) and calls the operation through the call core: argument
validation, the operator's or the caller's exchanged credentials, limits, the audit line, then
the output check, trimming and redaction of a tool result, and ``serve --confirm`` (a GET marked
destructive is asked like any covered call; on 2026-07-28 the read answers ``input_required``).
A resource outside the caller's scopes is answered exactly like one that does not exist.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import anyio
import mcp_types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from bridge.calls.context import ApiError, CallContext, current_identity
from bridge.calls.operation import OperationCall
from bridge.calls.runtime import HttpRuntime
from bridge.confirm.asking import Confirmations, InputRequired
from bridge.contract.catalogue import OPERATION_META_KEY, Catalogue
from bridge.identity.scopes import allows, caller_scopes
from bridge.resources.uris import MAX_URI, Template, scheme_for, template_for
from bridge.results.trim import OFF_LOOP_BYTES
from bridge.secrets.excerpt import excerpt
from bridge.secrets.held import call_scope
from bridge.server.callers import caller_of
from bridge.server.cursor import page_start
from bridge.tools.errors import InvalidArgumentsError, ToolError
from bridge.tools.registry import ToolRegistry
from bridge.tools.validation import ArgumentValidator

__all__ = ["PAGE", "RESOURCE_CALL_FAILED", "Resources", "install_resources"]

PAGE = 100
RESOURCE_CALL_FAILED = -32010
"""JSON-RPC error of a ``resources/read`` whose API call failed (the bridge's band, -32003..-32019)."""


class Resources:
    """The resources and templates of one API, and the three handlers."""

    def __init__(
        self,
        catalogue: Catalogue,
        registry: ToolRegistry,
        runtime: HttpRuntime,
        confirmations: Confirmations | None = None,
    ) -> None:
        self.runtime = runtime
        self._confirmations = confirmations
        self.scheme = scheme_for(catalogue.name)
        self._templates: list[Template] = []
        self._calls: dict[str, OperationCall] = {}
        self._scopes: dict[str, Any] = {}
        for entry in catalogue.tools:
            tool = registry.get(entry.name)
            # Only the generated tool's operation: a hook that replaced it decides for itself.
            if tool is None or (tool.meta or {}).get(OPERATION_META_KEY) != entry.operation:
                continue
            template = template_for(entry, self.scheme)
            if template is None:
                continue
            self._templates.append(template)
            self._calls[entry.name] = OperationCall(entry, runtime, ArgumentValidator({entry.name: entry.input_schema}))
            self._scopes[entry.name] = tool.scopes

    def __len__(self) -> int:
        return len(self._templates)

    def _visible(self, *, templates: bool) -> list[Template]:
        granted = caller_scopes()
        return [
            t for t in self._templates if t.is_template == templates and allows(self._scopes[t.entry.name], granted)
        ]

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListResourcesResult:
        page, cursor = _page(self._visible(templates=False), params)
        resources = [
            mcp_types.Resource(
                uri=t.uri,
                name=t.entry.name,
                title=t.entry.title,
                description=t.entry.description or None,
                mime_type=_mime(t),
            )
            for t in page
        ]
        return mcp_types.ListResourcesResult(resources=resources, next_cursor=cursor)

    async def list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListResourceTemplatesResult:
        page, cursor = _page(self._visible(templates=True), params)
        templates = [
            mcp_types.ResourceTemplate(
                uri_template=t.uri,
                name=t.entry.name,
                title=t.entry.title,
                description=t.entry.description or None,
                mime_type=_mime(t),
            )
            for t in page
        ]
        return mcp_types.ListResourceTemplatesResult(resource_templates=templates, next_cursor=cursor)

    def _find(self, uri: str) -> tuple[Template, dict[str, Any]]:
        granted = caller_scopes()
        for template in self._templates:
            arguments = template.match(uri)
            if arguments is not None and allows(self._scopes[template.entry.name], granted):
                return template, arguments
        raise MCPError(code=mcp_types.INVALID_PARAMS, message="Resource not found", data={"uri": uri[:MAX_URI]})

    async def read(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.ReadResourceRequestParams
    ) -> mcp_types.ReadResourceResult | mcp_types.InputRequiredResult:
        with call_scope():  # every token the read sends stays redacted until its answer is made
            return await self._read(ctx, params)

    async def _read(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.ReadResourceRequestParams
    ) -> mcp_types.ReadResourceResult | mcp_types.InputRequiredResult:
        uri = str(params.uri)
        template, arguments = self._find(uri)
        call = self._calls[template.entry.name]
        identity = current_identity() if self.runtime.identities else None
        # A GET the spec or the config marks destructive is asked like any covered call (bridge/calls/gate.py).
        confirm = self._confirmations.for_request(ctx, caller_of(ctx)) if self._confirmations is not None else None
        context = CallContext(surface=f"resource:{template.entry.name}", identity=identity, confirm=confirm)
        redact = self.runtime.credentials.redact
        try:
            response = await call.respond(arguments, context)
            if len(response.content) > OFF_LOOP_BYTES:  # parsing and trimming a big body: off the loop
                result = await anyio.to_thread.run_sync(call.to_result, response)
            else:
                result = call.to_result(response)
        except InputRequired as exc:  # 2026-07-28: the user is asked, and the client reads again
            return exc.result
        except InvalidArgumentsError as exc:
            raise MCPError(
                code=mcp_types.INVALID_PARAMS, message=excerpt(str(exc), redact, 1000), data={"uri": uri}
            ) from None
        except ApiError as exc:
            if exc.status == 404:
                raise MCPError(code=mcp_types.INVALID_PARAMS, message="Resource not found", data={"uri": uri}) from None
            raise MCPError(
                code=RESOURCE_CALL_FAILED, message=excerpt(str(exc), redact, 2000), data={"uri": uri}
            ) from None
        except ToolError as exc:
            raise MCPError(
                code=RESOURCE_CALL_FAILED, message=excerpt(str(exc), redact, 2000), data={"uri": uri}
            ) from None
        return mcp_types.ReadResourceResult(contents=_contents(uri, result, _mime(template)))


def _mime(template: Template) -> str | None:
    accept = template.entry.binding.accept
    return accept[0] if accept else None


def _page(items: list[Template], params: mcp_types.PaginatedRequestParams | None) -> tuple[list[Template], str | None]:
    start = page_start(params.cursor if params is not None else None, len(items))
    end = start + PAGE
    return items[start:end], (str(end) if end < len(items) else None)


def _contents(
    uri: str, result: mcp_types.CallToolResult, mime: str | None
) -> list[mcp_types.TextResourceContents | mcp_types.BlobResourceContents]:
    """The tool result's blocks as resource contents (the first is the answer, others notes)."""
    out: list[mcp_types.TextResourceContents | mcp_types.BlobResourceContents] = []
    for index, block in enumerate(result.content):
        if isinstance(block, mcp_types.TextContent):
            kind = mime if index == 0 and result.structured_content is not None else "text/plain"
            out.append(mcp_types.TextResourceContents(uri=uri, mime_type=kind, text=block.text))
        elif isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
            out.append(mcp_types.BlobResourceContents(uri=uri, mime_type=block.mime_type, blob=block.data))
        elif isinstance(block, mcp_types.EmbeddedResource):
            inner: Mapping[str, Any] = block.resource.model_dump()
            if "blob" in inner:
                out.append(
                    mcp_types.BlobResourceContents(uri=uri, mime_type=inner.get("mime_type"), blob=inner["blob"])
                )
            else:
                out.append(
                    mcp_types.TextResourceContents(uri=uri, mime_type=inner.get("mime_type"), text=inner["text"])
                )
    if not out:
        empty = base64.b64encode(b"").decode()
        out.append(mcp_types.BlobResourceContents(uri=uri, mime_type=mime, blob=empty))
    return out


def install_resources(
    server: Any,
    catalogue: Catalogue,
    registry: ToolRegistry,
    runtime: HttpRuntime,
    confirmations: Confirmations | None = None,
) -> Resources:
    """Serve ``catalogue``'s GET operations on ``server`` as resources and templates (``confirmations``:
    ``serve --confirm``'s asking, for a GET marked destructive)."""
    resources = Resources(catalogue, registry, runtime, confirmations)
    server.add_request_handler("resources/list", mcp_types.PaginatedRequestParams, resources.list_resources)
    server.add_request_handler("resources/templates/list", mcp_types.PaginatedRequestParams, resources.list_templates)
    server.add_request_handler("resources/read", mcp_types.ReadResourceRequestParams, resources.read)
    return resources
