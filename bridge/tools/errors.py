"""Exceptions of the runtime.

    BridgeError
    ├── ToolDefinitionError      a tool cannot be registered (bad or duplicate name, bad schema)
    ├── ConfigurationError       the operator's configuration cannot be used (base URL, variables, TLS files)
    ├── ToolError                a tool call failed; its message becomes an ``isError`` result for the model
    │   ├── InvalidArgumentsError    arguments do not match the input schema, or cannot be put on the wire
    │   ├── CredentialsError         a credential the operation needs is not configured or not accepted
    │   └── UpstreamError            the upstream API could not be reached or answered badly
    │       ├── UpstreamStatusError      4xx/5xx answer
    │       ├── UpstreamTimeout          connect/read timeout or overall deadline
    │       ├── ResponseTooLarge         the body exceeded the byte cap
    │       ├── UnsafeRequestError       the built request would leave the configured origin or path
    │       └── UpstreamBusy             the bridge's own limits refused the call (nothing was sent)
    │           ├── TooManyConcurrentCalls   every upstream slot stayed busy for ``max_queue_wait``
    │           └── RateLimitExceeded        the operation's calls-per-second limit was reached
    └── PackageError             a generated package cannot be loaded

``mcp.MCPError`` (re-exported by ``bridge``) is the one way to answer with a JSON-RPC error instead.
Messages are written for the model: what went wrong and what to do next. They never contain
credentials, stack traces or configuration.
"""

from __future__ import annotations


class BridgeError(Exception):
    """Base class of every error the runtime raises on purpose."""


class ToolDefinitionError(BridgeError, ValueError):
    """Raised when a tool is registered with an invalid or duplicate name or schema."""


class ConfigurationError(BridgeError, ValueError):
    """The operator's configuration (base URL, server variables, TLS files) cannot be used."""


class PackageError(BridgeError):
    """Raised when a generated package is missing or malformed."""


class ToolError(BridgeError):
    """A tool call failed in a way the model can act on; becomes ``isError: true``."""


class InvalidArgumentsError(ToolError):
    """Arguments are invalid for the tool (schema, or a value that cannot be sent safely)."""


class CredentialsError(ToolError):
    """A credential the operation needs is missing or was rejected."""


class UpstreamError(ToolError):
    """The upstream API could not be reached, or its answer could not be used."""


class UpstreamStatusError(UpstreamError):
    """The upstream answered with a 4xx or 5xx status."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


class UpstreamTimeout(UpstreamError):
    """A connect/read timeout or the overall deadline of the call was reached."""


class ResponseTooLarge(UpstreamError):
    """The upstream body exceeded the configured byte cap."""


class UnsafeRequestError(UpstreamError):
    """The built request would not go to the configured origin and operation path."""


class UpstreamBusy(UpstreamError):
    """The bridge refused the call to protect the upstream; nothing was sent. Retrying later may work."""


class TooManyConcurrentCalls(UpstreamBusy):
    """Every concurrent-call slot stayed busy for the whole queue wait."""


class RateLimitExceeded(UpstreamBusy):
    """The operation's calls-per-second limit was reached."""

    def __init__(self, message: str, *, retry_after: float = 0.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after
