"""The operation-call core: one path from arguments to an upstream answer, for every surface.

Per-operation tools, discovery's ``call_operation`` (and code mode, and per-user identity) all
call an operation through :class:`OperationCall`, with a :class:`CallContext` saying who calls,
until when, and how to report progress. Each step is a method of its own, testable alone:

1. :meth:`OperationCall.validate`: the arguments against the tool's input schema (field-named
   errors); surfaces whose server already validated skip it;
2. :meth:`OperationCall.prepare`: the HTTP request the spec describes, with its final check;
   then the one confirmation decision (:func:`bridge.calls.gate.pass_gate`, ``serve --confirm``);
3. :meth:`OperationCall.authorize`: the bridge's own credentials for the operation;
4. :meth:`OperationCall.send`: limits, retries, deadline, the response cap (``bridge.upstream.client``);
5. :meth:`OperationCall.check_status`: a 4xx/5xx answer becomes :class:`ApiError`;
6. :meth:`OperationCall.to_result`: the output check, trimming and redaction of a tool result.

:meth:`OperationCall.__call__` runs 1-5 and returns the whole :class:`ApiResponse` (what a
program sees); tools map it with step 6. Every error message that leaves the core is redacted.
"""

from __future__ import annotations

import dataclasses
import logging
import time
import unicodedata
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any

import anyio
import httpx
import mcp_types

from bridge.calls.context import ApiError, ApiResponse, CallContext
from bridge.calls.gate import pass_gate
from bridge.calls.longrunning.azure import starts_following
from bridge.calls.longrunning.follow import OperationPending
from bridge.calls.runtime import HttpRuntime
from bridge.contract.catalogue import SchemeUse, SecurityScheme, ToolEntry
from bridge.contract.media_types import decode_text
from bridge.contract.wire_rules import DEFAULT_ACCEPT
from bridge.identity.scopes import CALLER_SCHEMES
from bridge.request.build import PreparedRequest, build_request, request_for_url
from bridge.results.status_errors import Redactor
from bridge.results.tool_result import OutputCheck, response_to_result, status_error
from bridge.results.trim import OFF_LOOP_BYTES
from bridge.secrets.credentials import CredentialParts
from bridge.secrets.header_values import HEADER_SAFE
from bridge.secrets.redact import mask_before_decoding
from bridge.secrets.redact_json import redact_json
from bridge.tools.errors import CredentialsError, ToolError, UpstreamStatusError, UpstreamTimeout
from bridge.tools.json_text import parse_json
from bridge.tools.validation import ArgumentValidator
from bridge.upstream.client import UpstreamResponse

__all__ = ["OperationCall"]

audit = logging.getLogger("bridge.audit")


def _body_data(content: bytes, redact: Redactor, content_type: str = "") -> Any:
    if not content:
        return None
    try:
        return redact_json(parse_json(content, parse_constant=_no_constant), redact)
    except ValueError:  # not JSON (or nested deeper than the parser goes): its text
        return redact(decode_text(mask_before_decoding(content, redact), content_type))


# Letters that show as blank space: Hangul fillers, the Braille blank, the halfwidth filler.
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def _field(value: str | None) -> str:
    """A log-safe rendering of an identity field, bounded: only letters, digits, punctuation and
    symbols that show as themselves are kept; anything blank or invisible (spaces and separators,
    control and format characters, combining marks, blank letters) becomes ``?``."""
    if not value:
        return "-"
    return "".join(c if _visible(c) else "?" for c in value[:128])


def _visible(char: str) -> bool:
    return unicodedata.category(char)[0] in "LNPS" and char not in _BLANK_LETTERS


def _caller_alternative(
    entry: ToolEntry, schemes: Mapping[str, SecurityScheme]
) -> tuple[tuple[SchemeUse, ...], tuple[SchemeUse, ...]] | None:
    """The first security alternative that uses a caller scheme: (caller schemes, the other schemes)."""
    for alternative in entry.binding.security:
        caller = tuple(u for u in alternative if (s := schemes.get(u.scheme)) is not None and s.type in CALLER_SCHEMES)
        if caller:
            return caller, tuple(u for u in alternative if u not in caller)
    return None


def _no_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; an upstream that sends them does not get them through as numbers.
    raise ValueError(name)


class OperationCall:
    """One operation of one API, callable with a :class:`CallContext`."""

    def __init__(self, entry: ToolEntry, runtime: HttpRuntime, validator: ArgumentValidator | None = None) -> None:
        self.entry = entry
        self.runtime = runtime
        self.operation = entry.operation
        self._validator = validator or ArgumentValidator({entry.name: entry.input_schema})
        # Its values are parsed upstream answers, trimmed: JSON data, which the compiled check may judge.
        schema = entry.output_schema
        self._output_check = None if schema is None else OutputCheck(schema, entry.name, json_data=True)
        self._caller_alternative = _caller_alternative(entry, runtime.credentials.schemes)
        # What each argument is, in the spec's words: a `key` described as a cache's is not an API key.
        properties = entry.input_schema.get("properties")
        self._descriptions = {
            name: prop["description"]
            for name, prop in (properties.items() if isinstance(properties, dict) else ())
            if isinstance(prop, dict) and isinstance(prop.get("description"), str)
        }

    def sibling(self, entry: ToolEntry) -> OperationCall:
        """The call of another operation of the same API, through the same runtime (a linked cancel)."""
        return OperationCall(entry, self.runtime)

    # ---------------------------------------------------------------------------------- steps

    def validate(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Step 1. Raises ``InvalidArgumentsError`` naming every bad field."""
        return self._validator.validate(self.entry.name, arguments, apply_defaults=False)

    def prepare(self, arguments: Mapping[str, Any]) -> PreparedRequest:
        """Step 2: the request, built from validated arguments and checked (origin, path, headers)."""
        return build_request(
            self.entry.binding,
            dict(arguments),
            base_url=self.runtime.base_url,
            operation=self.operation,
            bound=self.runtime.credentials.bound_values,
            descriptions=self._descriptions,
        )

    async def authorize(
        self, prepared: PreparedRequest, context: CallContext
    ) -> tuple[PreparedRequest, CredentialParts]:
        """Step 3: credentials for the operation's security requirements.

        With a caller identity and token exchange configured, an alternative that uses an OAuth2
        or OpenID Connect scheme gets a token exchanged for that user (its other schemes, e.g. an
        API key, still come from the operator); otherwise the operator's own credentials apply.
        """
        if context.supplied:
            parts = await self._supplied_parts(context.supplied)
            return prepared.with_credentials(parts), parts
        identity, exchanger, scopes = context.identity, self.runtime.exchanger, self._exchange_scopes(context)
        if identity is not None and not identity.token and exchanger is not None and self._caller_alternative:
            # Acting as the operator instead would hand a caller with no user identity the
            # operator's access to every user's data.
            raise CredentialsError(
                f"{self.operation} acts as the signed-in user, and this caller has no user identity (a static token). "
                "Sign in through the authorization server to use it."
            )
        if identity is not None and identity.token and exchanger is not None and scopes is not None:
            assert self._caller_alternative is not None
            caller, others = self._caller_alternative
            token = await exchanger.token_for(identity.subject, identity.token, scopes)
            # (No other scheme: no alternative at all, which still brings the operator's static headers.)
            base = await self.runtime.credentials.for_operation((others,) if others else ())
            parts = dataclasses.replace(
                base,
                headers=(*base.headers, ("Authorization", f"Bearer {token}")),
                schemes=(*base.schemes, *(use.scheme for use in caller)),
            )
            return prepared.with_credentials(parts), parts
        parts = await self.runtime.credentials.for_operation(self.entry.binding.security)
        return prepared.with_credentials(parts), parts

    async def _supplied_parts(self, supplied: Mapping[str, str]) -> CredentialParts:
        """The first security alternative using a supplied scheme: those values, the rest the operator's."""
        schemes = self.runtime.credentials.schemes
        for alternative in self.entry.binding.security:
            if not any(use.scheme in supplied for use in alternative):
                continue
            others = tuple(use for use in alternative if use.scheme not in supplied)
            base = await self.runtime.credentials.for_operation((others,)) if others else CredentialParts()
            headers, query, cookies = list(base.headers), list(base.query), list(base.cookies)
            for use in alternative:
                value = supplied.get(use.scheme)
                scheme = schemes.get(use.scheme)
                if value is None or scheme is None:
                    continue
                if not HEADER_SAFE.fullmatch(value):
                    raise CredentialsError(
                        f"{self.operation}: the credential a workflow step gives for {use.scheme} holds characters "
                        "that cannot be sent (line breaks, control or non-ASCII characters)."
                    )
                # Redacted while this call runs, like any credential: the value, and the token of
                # "Bearer <token>". A new token rebuilds redaction's index: off the loop.
                scheme_word, _, token = value.partition(" ")
                learnt = (value, token.strip()) if token and scheme_word.isalpha() else (value,)
                for each in learnt:
                    await anyio.to_thread.run_sync(self.runtime.credentials.remember_token, each)
                if scheme.type == "apiKey" and scheme.location == "query":
                    query.append((scheme.param_name or "", value))
                elif scheme.type == "apiKey" and scheme.location == "cookie":
                    cookies.append((scheme.param_name or "", value))
                else:
                    name = scheme.param_name if scheme.type == "apiKey" else "Authorization"
                    headers.append((name or "Authorization", value))
            return dataclasses.replace(
                base,
                headers=tuple(headers),
                query=tuple(query),
                cookies=tuple(cookies),
                schemes=tuple(use.scheme for use in alternative),
            )
        raise CredentialsError(f"{self.operation} does not use the credential the workflow step gives.")

    def _exchange_scopes(self, context: CallContext) -> tuple[str, ...] | None:
        """The scopes to exchange the caller's token for, or None when this call uses no exchange."""
        identity = context.identity
        if identity is None or not identity.token or self.runtime.exchanger is None or not self._caller_alternative:
            return None
        return tuple(scope for use in self._caller_alternative[0] for scope in use.scopes)

    async def send(self, prepared: PreparedRequest, context: CallContext) -> UpstreamResponse:
        """Step 4: limits, retries, the deadlines and the response cap."""
        if context.deadline is None:
            return await self.runtime.upstream.send(prepared)
        left = context.deadline - anyio.current_time()
        with anyio.move_on_after(max(left, 0.0)):
            return await self.runtime.upstream.send(prepared)
        raise UpstreamTimeout(f"{self.operation}: the call's deadline passed before the API answered.")

    async def check_contract(self, response: UpstreamResponse) -> None:
        """``--validate-responses``: openapi-core takes ~20 ms a response, so off the event loop."""
        contract = self.runtime.contract
        if contract is None or response.truncated:
            return
        binding = self.entry.binding
        await anyio.to_thread.run_sync(
            contract.check,
            binding.method,
            binding.path,
            response.status,
            response.headers,
            response.content,
            self.runtime.credentials.redact,
        )

    def check_status(
        self, response: UpstreamResponse, parts: CredentialParts, context: CallContext | None = None
    ) -> None:
        """Step 5: a 4xx/5xx answer raises :class:`ApiError` (a 401 also drops the cached token used,
        the operator's or the one exchanged for the caller, so the next call gets a fresh one)."""
        if response.status < 400:
            return
        if response.status == 401:
            self.runtime.credentials.invalidate(parts)
            scopes = self._exchange_scopes(context) if context is not None else None
            if scopes is not None and context is not None and context.identity is not None:
                assert self.runtime.exchanger is not None and context.identity.token is not None
                self.runtime.exchanger.forget(context.identity.subject, context.identity.token, scopes)
        error = status_error(
            response, binding=self.entry.binding, redact=self.runtime.credentials.redact, credential_env=parts.env_names
        )
        raise ApiError(str(error), status=error.status)

    def to_result(self, response: UpstreamResponse, *, fields: Sequence[str] | None = None) -> mcp_types.CallToolResult:
        """Step 6 (tools): the output check, trimming and redaction of a success answer."""
        return response_to_result(
            response,
            binding=self.entry.binding,
            tool_name=self.entry.name,
            redact=self.runtime.credentials.redact,
            output_check=self._output_check,
            trim=self.runtime.trim,
            fields=fields,
        )

    # ----------------------------------------------------------------------------- the call

    async def respond(
        self,
        arguments: Mapping[str, Any] | None,
        context: CallContext,
        *,
        validated: bool = False,
        raise_status: bool = True,
    ) -> UpstreamResponse:
        """Steps 1-5; the success answer as the upstream layer holds it. One audit line per call.

        ``raise_status=False`` (workflow steps, whose criteria judge the status): a 4xx/5xx answer
        is returned too, after what step 5 does besides raising (a 401 drops the cached token).
        """
        redact = self.runtime.credentials.redact
        started = time.monotonic()
        status = "error"
        try:
            args = dict(arguments or {}) if validated else self.validate(arguments)
            request = self.prepare(args)
            # Raises when the call must not go (declined, or nobody to ask): nothing is sent. Returns
            # the answer an earlier input round of this request got for this very call: not sent again.
            kept = await pass_gate(
                self.entry,
                args,
                context,
                settings=self.runtime.confirm,
                base_url=self.runtime.base_url,
                bound=self.runtime.credentials.bound_values,
            )
            if kept is None:
                async with self._caller_slot(context):
                    prepared, parts = await self.authorize(request, context)
                    response = await self.send(prepared, context)
                if context.confirm is not None:
                    context.confirm.sent(self.entry, args, response)
                status = str(response.status)
            else:
                response, parts = kept, CredentialParts()
                status = f"kept:{response.status}"
            await self.check_contract(response)
            if raise_status:
                self.check_status(response, parts, context)
            elif response.status >= 400:
                try:
                    self.check_status(response, parts, context)
                except ApiError:
                    pass  # the caller judges the status; the cached token was dropped all the same
            tracker = self.runtime.operations
            long_running = self.entry.long_running
            if long_running is not None and tracker is not None and starts_following(response, long_running):
                response = await tracker.follow(self, response, request, args, context)
                status = f"{status}>{response.status}"
            return response
        except UpstreamStatusError as exc:
            raise ApiError(redact(str(exc)), status=exc.status) from None
        except OperationPending:  # still running: its message was redacted when it was made
            status = "202>pending"
            raise
        except ToolError as exc:
            status = type(exc).__name__
            raise type(exc)(redact(str(exc))) from None
        except BaseException as exc:  # cancelled, or an input round (InputRequired) before anything was sent
            status = "cancelled" if isinstance(exc, anyio.get_cancelled_exc_class()) else type(exc).__name__
            raise
        finally:
            self._audit(context, status, time.monotonic() - started)

    async def fetch(self, url: httpx.URL, context: CallContext, *, what: str = "status") -> UpstreamResponse:
        """GET ``url``, a URL the API gave for this operation (its status URL), by every rule of a call.

        ``url`` must have passed the redirect rules (:func:`bridge.upstream.redirects.redirect_target`). The
        request carries this operation's credentials (the caller's exchanged token included), takes
        the caller's and the API's slots, honours the deadline and the response cap, and a 4xx/5xx
        answer raises :class:`ApiError`. One audit line, with ``path=<what>``.
        """
        redact = self.runtime.credentials.redact
        started = time.monotonic()
        status = "error"
        accept = ", ".join(self.entry.binding.accept) if self.entry.binding.accept else DEFAULT_ACCEPT
        try:
            prepared = request_for_url(url, base_url=self.runtime.base_url, operation=self.operation, accept=accept)
            async with self._caller_slot(context):
                prepared, parts = await self.authorize(prepared, context)
                response = await self.send(prepared, context)
            status = str(response.status)
            self.check_status(response, parts, context)
            return response
        except UpstreamStatusError as exc:
            raise ApiError(redact(str(exc)), status=exc.status) from None
        except ToolError as exc:
            status = type(exc).__name__
            raise type(exc)(redact(str(exc))) from None
        except BaseException:
            status = "cancelled"
            raise
        finally:
            self._audit(context, status, time.monotonic() - started, path=what)

    def _caller_slot(self, context: CallContext) -> AbstractAsyncContextManager[None]:
        limits = self.runtime.caller_limits
        identity = context.identity
        if limits is None or identity is None:
            return nullcontext()
        return limits.slot(identity.subject or identity.client_id or "unknown")

    def _audit(self, context: CallContext, status: str, seconds: float, *, path: str | None = None) -> None:
        # Names, ids and the status only: never argument values, never tokens. One line of
        # space-separated key=value fields whose values never hold a space, so it splits back.
        identity = context.identity
        level = logging.INFO if identity is not None else logging.DEBUG
        if audit.isEnabledFor(level):
            audit.log(
                level,
                "call subject=%s client=%s tool=%s method=%s path=%s status=%s ms=%.1f",
                _field(identity.subject if identity else None),
                _field(identity.client_id if identity else None),
                _field(context.surface),
                _field(self.entry.binding.method if path is None else "GET"),
                _field(self.entry.binding.path if path is None else path),
                _field(status),
                seconds * 1000,
            )

    async def __call__(
        self,
        arguments: Mapping[str, Any] | None,
        context: CallContext,
        *,
        validated: bool = False,
        raise_status: bool = True,
    ) -> ApiResponse:
        """Steps 1-5 and the body as (redacted) JSON data; ``raise_status=False``: any status."""
        response = await self.respond(arguments, context, validated=validated, raise_status=raise_status)
        redact = self.runtime.credentials.redact
        if len(response.content) > OFF_LOOP_BYTES:  # parsing and redacting a big body: off the event loop
            data = await anyio.to_thread.run_sync(_body_data, response.content, redact, response.content_type)
        else:
            data = _body_data(response.content, redact, response.content_type)
        return ApiResponse(response.status, response.content_type, data, response)
