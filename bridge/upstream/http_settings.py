"""Limits, timeouts and retry rules of upstream calls, with their named defaults."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from bridge.contract.version import bridge_version
from bridge.upstream.retry import DEFAULT_BACKOFF_BASE, DEFAULT_BACKOFF_MAX, RETRY_STATUSES, RetryPolicy

DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_READ_TIMEOUT = 30.0
DEFAULT_WRITE_TIMEOUT = 30.0
DEFAULT_POOL_TIMEOUT = 10.0
DEFAULT_DEADLINE = 60.0
"""Overall seconds for one tool call's HTTP exchange: queueing, every attempt and retry wait,
redirects and the body."""
DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024
"""Largest decoded success body (1 MiB, as APISIX's openapi-to-mcp)."""
DEFAULT_MAX_ERROR_BODY_BYTES = 16 * 1024
"""Decoded bytes kept from a 4xx/5xx body."""
DEFAULT_MAX_REDIRECTS = 5
DEFAULT_MAX_CONCURRENT_CALLS = 32
"""Upstream calls of one API in flight at once."""
DEFAULT_MAX_QUEUE_WAIT = 1.0
"""Seconds a call waits for a free slot before it fails with "too many concurrent calls"."""
DEFAULT_MAX_QUEUED_CALLS = 256
"""Calls allowed to wait for a slot; beyond that they fail at once."""
DEFAULT_MAX_CONNECTIONS = DEFAULT_MAX_CONCURRENT_CALLS
DEFAULT_MAX_KEEPALIVE_CONNECTIONS = 10

USER_AGENT = f"mcp-bridge/{bridge_version()}"

ACCEPT_ENCODING = "gzip, deflate"
"""The only codings the bridge decodes (bounded, with zlib); pinned so httpx never advertises
brotli/zstandard even if those packages are installed."""


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """Limits, timeouts and retry rules of upstream calls (seconds and bytes)."""

    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    read_timeout: float = DEFAULT_READ_TIMEOUT
    """Longest silence between two reads (not the whole body: that is ``deadline``)."""
    write_timeout: float = DEFAULT_WRITE_TIMEOUT
    pool_timeout: float = DEFAULT_POOL_TIMEOUT
    deadline: float = DEFAULT_DEADLINE
    """Overall seconds per call, all attempts, waits and redirects included."""
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    max_error_body_bytes: int = DEFAULT_MAX_ERROR_BODY_BYTES
    max_redirects: int = DEFAULT_MAX_REDIRECTS
    """Same-origin redirects followed; 0 follows none."""
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    max_keepalive_connections: int = DEFAULT_MAX_KEEPALIVE_CONNECTIONS
    trust_env: bool = True
    """Let httpx read proxy and CA settings (``HTTPS_PROXY``, ``SSL_CERT_FILE``…) from the environment."""
    max_concurrent_calls: int = DEFAULT_MAX_CONCURRENT_CALLS
    """Calls to this API in flight at once; more wait up to ``max_queue_wait``, then fail."""
    max_queue_wait: float = DEFAULT_MAX_QUEUE_WAIT
    max_queued_calls: int = DEFAULT_MAX_QUEUED_CALLS
    max_calls_per_second: float = 0.0
    """Per-operation rate limit (token bucket, burst = ceil(rate)); 0 turns it off."""
    retries: int = 0
    """Extra attempts after a retryable failure (see :mod:`bridge.upstream.retry`); 0 turns retries off."""
    retry_backoff: float = DEFAULT_BACKOFF_BASE
    """Seconds: bound of the first jittered backoff; it doubles per attempt up to ``retry_backoff_max``."""
    retry_backoff_max: float = DEFAULT_BACKOFF_MAX
    retry_statuses: frozenset[int] = RETRY_STATUSES

    def __post_init__(self) -> None:
        positive = {
            "connect_timeout": self.connect_timeout,
            "read_timeout": self.read_timeout,
            "write_timeout": self.write_timeout,
            "pool_timeout": self.pool_timeout,
            "deadline": self.deadline,
        }
        for name, value in positive.items():
            if not value > 0:
                raise ValueError(f"HttpSettings.{name} must be a positive number of seconds, not {value!r}.")
        if self.max_response_bytes < 1 or self.max_error_body_bytes < 0 or self.max_redirects < 0:
            raise ValueError("HttpSettings byte limits must be positive and max_redirects not negative.")
        if self.max_concurrent_calls < 1 or self.max_connections < 1:
            raise ValueError("HttpSettings.max_concurrent_calls and max_connections must be at least 1.")
        if self.max_queue_wait < 0 or self.max_queued_calls < 0 or self.max_calls_per_second < 0:
            raise ValueError("HttpSettings queue and rate limits must not be negative.")
        self.retry_policy()  # validates the retry fields

    def timeout(self) -> httpx.Timeout:
        return httpx.Timeout(
            connect=self.connect_timeout, read=self.read_timeout, write=self.write_timeout, pool=self.pool_timeout
        )

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(
            retries=self.retries,
            backoff_base=self.retry_backoff,
            backoff_max=self.retry_backoff_max,
            statuses=frozenset(self.retry_statuses),
        )
