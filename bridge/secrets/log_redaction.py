"""Secrets scrubbed out of log records: httpx logs full URLs (API keys in queries included), and a
traceback may quote a URL or a header."""

from __future__ import annotations

import logging
from collections.abc import Callable

__all__ = ["LogRedaction"]

_HTTPX_LOGGERS = ("httpx", "httpcore")


class _RedactingFilter(logging.Filter):
    """Redacts a record's message, arguments, traceback and stack text."""

    def __init__(self, redact: Callable[[str], str]) -> None:
        super().__init__()
        self._redact = redact

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            message = str(record.msg)
        redacted = self._redact(message)
        if redacted != message or record.args:
            record.msg, record.args = redacted, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self._redact(record.stack_info)
        return True


class LogRedaction:
    """A redacting filter on the httpx and httpcore loggers and on every root handler present now,
    until :meth:`remove`. Handlers are filtered as well as loggers because records of other
    loggers reach the root handlers without passing the httpx loggers' filters."""

    def __init__(self, redact: Callable[[str], str]) -> None:
        self._filter = _RedactingFilter(redact)
        self._targets: list[logging.Logger | logging.Handler] = [
            *(logging.getLogger(name) for name in _HTTPX_LOGGERS),
            *logging.getLogger().handlers,
        ]
        for target in self._targets:
            target.addFilter(self._filter)

    def remove(self) -> None:
        for target in self._targets:
            target.removeFilter(self._filter)
        self._targets.clear()
