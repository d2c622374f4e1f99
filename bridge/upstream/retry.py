"""When an upstream call may be tried again, and how long to wait first (P24, P25).

Retries are off unless the operator sets ``HttpSettings.retries`` (extra attempts, at most
:data:`MAX_RETRIES`). When on, :class:`RetryPolicy` decides from the HTTP method and the failure
alone, never from tool annotations (``idempotentHint`` is a hint for clients, not a promise the
bridge relies on):

==================================== ===================================================
failure                              retried for
==================================== ===================================================
connect failure (refused, connect    every method: no byte of the request left the bridge
timeout), :data:`Phase.CONNECT`
read/write error, reset, premature   GET, HEAD, OPTIONS, PUT, DELETE (RFC 9110 idempotent)
close, read timeout, after sending
status 429, 502, 503, 504            GET, HEAD, OPTIONS, PUT, DELETE
anything, for POST and PATCH         never after the request was sent (nginx ≥1.9.13 rule)
==================================== ===================================================

The wait before attempt ``n + 1`` is a fully jittered exponential backoff (Envoy's scheme):
uniform in ``[0, min(backoff_max, backoff_base * 2**(n-1))]``. A ``Retry-After`` header (seconds
or an HTTP-date) replaces the backoff. Every wait must fit in what is left of the call's overall
deadline, keeping a reserve for the next attempt (:meth:`RetryPolicy.fits`); otherwise the bridge
stops retrying and answers with the last failure. The deadline covers all attempts and waits.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

__all__ = [
    "DEFAULT_BACKOFF_BASE",
    "DEFAULT_BACKOFF_MAX",
    "IDEMPOTENT_METHODS",
    "MAX_RETRIES",
    "RETRY_STATUSES",
    "Phase",
    "RetryPolicy",
    "parse_retry_after",
    "phase_of",
]

IDEMPOTENT_METHODS: frozenset[str] = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
"""Methods retried after the request was (maybe) sent. POST and PATCH are never among them."""
RETRY_STATUSES: frozenset[int] = frozenset({429, 502, 503, 504})
DEFAULT_BACKOFF_BASE = 0.1
"""Seconds: upper bound of the first jittered wait."""
DEFAULT_BACKOFF_MAX = 2.0
"""Seconds: upper bound of any jittered wait."""
MAX_RETRIES = 10
MAX_RETRY_AFTER = 86_400.0 * 365
"""Seconds: the longest wait a ``Retry-After`` can say (longer is read as this; it never fits a deadline)."""
_DELAY_DIGITS = 12  # more ASCII digits than this is beyond MAX_RETRY_AFTER anyway


class Phase(enum.Enum):
    """How far an attempt got before it failed."""

    CONNECT = "connect"
    """No connection was made, so no byte of the request was sent."""
    SENT = "sent"
    """The request was (possibly partly) sent; the upstream may have acted on it."""


def phase_of(exc: BaseException) -> Phase | None:
    """How far a failed attempt got: :data:`Phase.CONNECT` for connection failures,
    :data:`Phase.SENT` for read/write errors, resets, premature closes and read/write timeouts,
    None for failures that a retry cannot fix (pool timeout, protocol misuse, proxy errors…)."""
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        return Phase.CONNECT
    if isinstance(exc, httpx.ReadError | httpx.WriteError | httpx.RemoteProtocolError):
        return Phase.SENT
    if isinstance(exc, httpx.ReadTimeout | httpx.WriteTimeout):
        return Phase.SENT
    return None


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (delay-seconds or HTTP-date); None if unusable.

    The value is upstream text: any string gives a number in ``[0, MAX_RETRY_AFTER]`` or None,
    never an exception. Delay-seconds are ASCII digits only (``"²".isdigit()`` is true), and a long
    run of digits is read as :data:`MAX_RETRY_AFTER` without converting it.
    """
    if value is None:
        return None
    value = value.strip(" \t")
    if not value or len(value) > 200:  # an HTTP-date is 29 characters
        return None
    if value.isascii() and value.isdigit():
        return float(int(value)) if len(value) <= _DELAY_DIGITS and int(value) <= MAX_RETRY_AFTER else MAX_RETRY_AFTER
    try:
        when = parsedate_to_datetime(value)
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        current = now or datetime.now(UTC)
        seconds = (when - current).total_seconds()
    except (TypeError, ValueError, IndexError, OverflowError, AttributeError):
        return None
    return min(max(0.0, seconds), MAX_RETRY_AFTER)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """The retry rules of one upstream (see the module docstring)."""

    retries: int = 0
    """Extra attempts after the first; 0 turns retries off."""
    backoff_base: float = DEFAULT_BACKOFF_BASE
    backoff_max: float = DEFAULT_BACKOFF_MAX
    statuses: frozenset[int] = RETRY_STATUSES
    rand: Callable[[], float] = field(default=random.random, compare=False, repr=False)
    """Source of jitter in [0, 1) (tests pin it)."""

    def __post_init__(self) -> None:
        if not 0 <= self.retries <= MAX_RETRIES:
            raise ValueError(f"retries must be between 0 and {MAX_RETRIES}, not {self.retries}.")
        if self.backoff_base < 0 or self.backoff_max < 0:
            raise ValueError("retry backoff times must not be negative.")

    @property
    def max_attempts(self) -> int:
        return 1 + self.retries

    def retry_error(self, method: str, phase: Phase, attempt: int) -> bool:
        """May attempt ``attempt`` (1-based), which failed in ``phase``, be followed by another?"""
        if attempt >= self.max_attempts:
            return False
        return phase is Phase.CONNECT or method.upper() in IDEMPOTENT_METHODS

    def retry_status(self, method: str, status: int, attempt: int) -> bool:
        """May attempt ``attempt``, answered with ``status``, be followed by another?"""
        return attempt < self.max_attempts and status in self.statuses and method.upper() in IDEMPOTENT_METHODS

    def backoff(self, attempt: int) -> float:
        """Fully jittered exponential wait after failed attempt ``attempt`` (1-based)."""
        ceiling = min(self.backoff_max, self.backoff_base * float(1 << min(max(0, attempt - 1), 30)))
        return self.rand() * ceiling

    def wait(self, attempt: int, retry_after: float | None) -> float:
        """``Retry-After`` when the server sent one, else the jittered backoff."""
        return retry_after if retry_after is not None else self.backoff(attempt)

    @staticmethod
    def fits(wait: float, remaining: float, deadline: float) -> bool:
        """True when waiting ``wait`` s still leaves time for another attempt before the deadline.

        The reserve kept for that attempt is a tenth of the deadline, at most one second.
        """
        return wait + min(1.0, deadline / 10) <= remaining
