"""Reading a status answer: still running, succeeded (and where the result is), or failed.

The defaults recognise the common shapes: a state in ``status``, ``state``,
``provisioningState`` or ``phase`` (Azure, most job APIs; an Azure resource's
``properties.provisioningState``), Google's ``done`` flag with
``response``/``error``, and ``resourceLocation`` naming the final resource. Only state values
known to mean "not finished" keep the bridge polling: an unknown value (a resource's own
``status: available``) ends the operation, so a final resource is never polled until the deadline.
A ``202`` answer means still running whatever its body says. When the settings list the
``succeeded`` values, every other value (that is not a failure) means still running.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from bridge.contract.catalogue import LongRunning
from bridge.contract.expressions import json_pointer as jsonpointer
from bridge.tools.json_text import parse_json
from bridge.upstream.client import UpstreamResponse

__all__ = ["DEFAULT_STATUS_HEADERS", "Reading", "read_status"]

DEFAULT_STATUS_HEADERS = ("Operation-Location", "Azure-AsyncOperation", "Location")
STATE_KEYS = ("status", "state", "provisioningState", "phase")
RUNNING = frozenset(
    "notstarted running inprogress pending queued accepted started processing working waiting scheduled "
    "creating updating deleting provisioning submitted".split()
)
SUCCEEDED = frozenset("succeeded success successful completed complete done finished ready ok".split())
FAILED = frozenset("failed failure error errored canceled cancelled aborted rejected timedout expired".split())
MAX_STATUS_JSON = 16 * 1024 * 1024  # bodies are capped before this (max_response_bytes); a guard, not a limit
_FOLD = re.compile(r"[\s_\-]+")

State = Literal["running", "succeeded", "failed"]


@dataclass(frozen=True, slots=True)
class Reading:
    """What one status answer says. ``state_text`` is the API's own word for it (for progress)."""

    state: State
    state_text: str | None = None
    result: Any = None  # the result inside the status body, when the settings or the shape say where
    has_result: bool = False
    result_url: str | None = None  # a URL to GET for the final resource


def _fold(value: str) -> str:
    return _FOLD.sub("", value).lower()


def read_status(response: UpstreamResponse, settings: LongRunning) -> Reading:
    """What ``response`` (a status URL's answer below 400) says about the operation."""
    if response.status == 202:
        return Reading("running", _state_value(_json(response), settings))
    body = _json(response)
    if not isinstance(body, dict):
        return Reading("succeeded")
    if settings.state is None and isinstance(body.get("done"), bool) and not _state_value(body, settings):
        return _google(body)
    text = _state_value(body, settings)
    if text is None:
        return Reading("succeeded")
    folded = _fold(text)
    if folded in {_fold(v) for v in settings.failed} or (folded in FAILED and not _listed(folded, settings)):
        return Reading("failed", text)
    running = {_fold(v) for v in settings.running} | RUNNING
    succeeded = {_fold(v) for v in settings.succeeded}
    # Listed success values make every other value "not yet"; otherwise only known ones do.
    if (folded in running and folded not in succeeded) or (succeeded and folded not in succeeded):
        return Reading("running", text)
    result, found = _result(body, settings)
    location = body.get("resourceLocation") if settings.result is None else None
    return Reading(
        "succeeded",
        text,
        result=result,
        has_result=found,
        result_url=location if isinstance(location, str) and location else None,
    )


def _listed(folded: str, settings: LongRunning) -> bool:
    """True when the settings call ``folded`` something other than failed."""
    return folded in {_fold(v) for v in (*settings.running, *settings.succeeded)}


def _google(body: dict[str, Any]) -> Reading:
    if not body["done"]:
        return Reading("running", "running")
    if "error" in body:
        return Reading("failed", "error")
    if "response" in body:
        return Reading("succeeded", "done", result=body["response"], has_result=True)
    return Reading("succeeded", "done")


def _state_value(body: Any, settings: LongRunning) -> str | None:
    if not isinstance(body, dict):
        return None
    if settings.state is not None:
        try:
            value = jsonpointer.resolve(body, settings.state)
        except jsonpointer.PointerError:
            return None
        return value if isinstance(value, str) else None
    for key in STATE_KEYS:
        value = body.get(key)
        if isinstance(value, str) and value:
            return value
    # An Azure resource keeps its state one level down: {"properties": {"provisioningState": "Creating"}}.
    properties = body.get("properties")
    value = properties.get("provisioningState") if isinstance(properties, dict) else None
    return value if isinstance(value, str) and value else None


def _result(body: dict[str, Any], settings: LongRunning) -> tuple[Any, bool]:
    if settings.result is None:
        return None, False
    try:
        return jsonpointer.resolve(body, settings.result), True
    except jsonpointer.PointerError:
        return None, False


def _json(response: UpstreamResponse) -> Any:
    if not response.content or len(response.content) > MAX_STATUS_JSON:
        return None
    try:
        return parse_json(response.content)
    except ValueError:
        return None
