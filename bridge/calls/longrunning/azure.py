"""Azure's long-running operations: which first answers start following, and where the final answer is.

Azure Resource Manager answers a PUT with ``201`` (or ``200``), an ``Azure-AsyncOperation``
status URL and ``provisioningState: Creating``: the resource is not there yet. For an operation
marked ``x-ms-long-running-operation`` (``LongRunning.final_state_via`` set), a 200 or 201 that
names a status URL, or whose state is still running, is followed like a 202; with no status URL,
the request's own URL is polled (the resource, until its provisioningState ends). When the
operation succeeds, ``final-state-via`` says where the result is: ``original-uri`` GETs the
request's URL again, ``location`` the first answer's ``Location``; otherwise the last status is it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import httpx

from bridge.calls.longrunning.status import DEFAULT_STATUS_HEADERS, read_status
from bridge.contract.catalogue import LongRunning
from bridge.contract.expressions.links import LinkSource
from bridge.tools.errors import UnsafeRequestError, UpstreamError
from bridge.upstream.client import UpstreamResponse
from bridge.upstream.redirects import redirect_target

if TYPE_CHECKING:
    from bridge.calls.context import CallContext


class _Runtime(Protocol):
    @property
    def base_url(self) -> httpx.URL: ...


class _Call(Protocol):
    """What of the started call this module uses (follow.StartedCall, which imports this module)."""

    @property
    def operation(self) -> str: ...

    @property
    def runtime(self) -> _Runtime: ...

    async def fetch(self, url: httpx.URL, context: CallContext, *, what: str = "status") -> UpstreamResponse: ...


class _Pending(Protocol):
    """What of follow.Pending this module reads."""

    @property
    def call(self) -> _Call: ...

    @property
    def url(self) -> httpx.URL: ...

    @property
    def source(self) -> LinkSource: ...

    @property
    def settings(self) -> LongRunning: ...


__all__ = ["azure_final", "fallback_status_url", "starts_following"]

_FOLLOWED_FIRST = (200, 201)


def starts_following(response: UpstreamResponse, settings: LongRunning) -> bool:
    """Whether the first answer of a long-running operation is followed rather than returned."""
    if response.status == 202:
        return True
    if settings.final_state_via is None or response.status not in _FOLLOWED_FIRST:
        return False
    headers = settings.status_headers or DEFAULT_STATUS_HEADERS
    if any(response.headers.get(name) for name in headers):
        return True
    return read_status(response, settings).state == "running"


def fallback_status_url(
    response: UpstreamResponse, settings: LongRunning, request_url: httpx.URL, method: str
) -> httpx.URL | None:
    """Where to poll an Azure 200/201 that names no status URL but is still running: the resource itself."""
    if settings.final_state_via is None or response.status not in _FOLLOWED_FIRST or method not in ("PUT", "PATCH"):
        return None
    return request_url if read_status(response, settings).state == "running" else None


async def azure_final(pending: _Pending, response: UpstreamResponse, context: CallContext) -> UpstreamResponse | None:
    """The final answer ``final-state-via`` names, or None when it is the last status answer."""
    via = pending.settings.final_state_via
    source = pending.source
    if via == "original-uri" and source.method in ("PUT", "PATCH") and str(pending.url) != source.url:
        return await pending.call.fetch(httpx.URL(source.url), context, what="result")
    if via != "location":
        return None
    location = next((value for name, value in source.headers.items() if name.lower() == "location"), None)
    if not location:
        return None
    op = pending.call.operation
    try:
        target = redirect_target(
            httpx.URL(source.url), location, base_url=pending.call.runtime.base_url, op=op, redact=lambda t: t
        )
    except UpstreamError:
        raise UnsafeRequestError(
            f"{op}: the operation finished, but its Location is outside the API's origin or base path; "
            "mcp-bridge does not fetch it."
        ) from None
    if target == pending.url:
        return None  # that is what was polled: the last answer is the result
    return await pending.call.fetch(target, context, what="result")
