"""``--validate-responses``: check upstream answers against the spec with openapi-core.

Off by default (openapi-core costs about 20 ms a response and the spec must be loaded). A
mismatch is logged to stderr and never fails the call: the API answered, and the model still
gets the answer; the log tells the operator that the spec and the API disagree.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from bridge.secrets.excerpt import excerpt

logger = logging.getLogger("bridge.response_check")

MAX_REPORTED_ERRORS = 5


class _Request:
    """openapi-core's Request protocol for the operation a response answers (only its identity matters)."""

    def __init__(self, host_url: str, path: str, path_pattern: str, method: str) -> None:
        from openapi_core.datatypes import RequestParameters

        self.host_url = host_url
        self.path = path
        self.path_pattern = path_pattern
        self.method = method.lower()
        self.parameters = RequestParameters()
        self.body: bytes | None = None
        self.content_type = "application/octet-stream"


class _Response:
    def __init__(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
        from werkzeug.datastructures import Headers

        self.status_code = status
        self.headers = Headers(list(headers.items()))
        self.content_type = headers.get("content-type", "application/octet-stream").lower()
        self.data = body


class ResponseContract:
    """Validates responses of the operations of one OpenAPI 3.x document."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        from openapi_core import Config, OpenAPI

        # The spec was validated at generation; validating it again would cost seconds on big APIs.
        config = Config(spec_validator_cls=None)  # type: ignore[arg-type]  # None is how openapi-core turns it off
        self._openapi = OpenAPI.from_dict(dict(document), config=config)
        servers = document.get("servers") or [{"url": "/"}]
        server = servers[0]
        url = str(server.get("url", "/"))
        for name, variable in (server.get("variables") or {}).items():
            url = url.replace("{" + name + "}", str(variable.get("default", "")))
        parsed = httpx.URL(url)
        self._host = f"{parsed.scheme}://{parsed.netloc.decode()}" if parsed.scheme else "http://localhost"
        self._base_path = parsed.path.rstrip("/")

    def problems(
        self,
        method: str,
        path_template: str,
        status: int,
        headers: Mapping[str, str],
        body: bytes,
        redact: Callable[[str], str] = str,
    ) -> list[str]:
        pattern = self._base_path + path_template
        request = _Request(self._host, pattern, pattern, method)
        response = _Response(status, headers, body)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                errors = list(self._openapi.iter_response_errors(request, response))
        except Exception as exc:  # openapi-core raises unrelated types for odd input; a check must not fail the call
            errors = [exc]
        return [_describe(e, redact) for e in errors[:MAX_REPORTED_ERRORS]]

    def check(
        self,
        method: str,
        path_template: str,
        status: int,
        headers: Mapping[str, str],
        body: bytes,
        redact: Callable[[str], str] = str,
    ) -> None:
        """Log how the answer differs from the spec; the messages quote its values, so they are
        redacted (before they are cut: the log's own redaction cannot see a cut secret)."""
        for problem in self.problems(method, path_template, status, headers, body, redact):
            logger.warning("%s %s -> %s does not match the spec: %s", method, path_template, status, problem)


def _describe(error: BaseException, redact: Callable[[str], str]) -> str:
    current: BaseException | None = error
    while current is not None:
        details = getattr(current, "schema_errors", None)
        if details:
            return "; ".join(excerpt(str(getattr(d, "message", d)), redact, 200, mark="…") for d in details[:3])
        current = current.__cause__
    return excerpt(str(error), redact, 300, mark="…")
