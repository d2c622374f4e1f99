"""``--log-format json``: one JSON object a line on stderr, the audit line's fields as keys.

The audit line is ``call key=value ...`` with values that never hold a space (``bridge.calls``),
so it splits back into fields here; every other record is ``time``, ``level``, ``logger``,
``message`` (and ``exception`` when there is one). Messages are redacted before they are logged
(``bridge.secrets.log_redaction``), so nothing here sees a secret the text format would not.
"""

from __future__ import annotations

import json
import logging
import sys
import time

AUDIT_LOGGER = "bridge.audit"
TEXT_FORMAT = "%(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        data: dict[str, object] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        if record.name == AUDIT_LOGGER and message.startswith("call "):
            data["message"] = "call"
            for item in message[5:].split(" "):
                key, sep, value = item.partition("=")
                if sep:
                    data[key] = float(value) if key == "ms" else value
        else:
            data["message"] = message
        if record.exc_info:
            data["exception"] = self.formatException(record.exc_info)
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def configure_logging(log_format: str = "text") -> None:
    """Log INFO and up on stderr in ``log_format``. JSON replaces plain stream handlers set before
    (test harnesses' capturing handlers, subclasses, stay)."""
    if log_format != "json":
        logging.basicConfig(level=logging.INFO, stream=sys.stderr, format=TEXT_FORMAT)
    else:
        root = logging.getLogger()
        for old in [h for h in root.handlers if type(h) is logging.StreamHandler]:
            root.removeHandler(old)
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter())
        root.addHandler(handler)
        root.setLevel(logging.INFO)
    logging.getLogger("httpx").setLevel(logging.WARNING)
