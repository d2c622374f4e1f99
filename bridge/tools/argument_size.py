"""The cap on one call's arguments, checked before any schema work.

Light on purpose (no jsonschema): ``serve --help`` takes its default from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge.tools.errors import InvalidArgumentsError

__all__ = ["DEFAULT_MAX_ARGUMENT_BYTES", "ArgumentsTooLargeError", "argument_bytes", "check_size"]

DEFAULT_MAX_ARGUMENT_BYTES = 16 * 1024 * 1024
"""All arguments of one call together, as UTF-8 JSON text (``--max-argument-bytes``; 0: no cap)."""


class ArgumentsTooLargeError(InvalidArgumentsError):
    """The arguments of a call are over the size cap; nothing was validated or sent."""


def _text_bytes(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def argument_bytes(value: Any) -> int:
    """About the UTF-8 JSON size of ``value``: exact for strings and keys, 8 a number, 2 a container."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += _text_bytes(item) + 2
        elif isinstance(item, Mapping):
            total += 2
            for key, child in item.items():
                total += _text_bytes(str(key)) + 3
                stack.append(child)
        elif isinstance(item, list | tuple):
            total += 2 + len(item)
            stack.extend(item)
        else:
            total += 8
    return total


def check_size(tool_name: str, args: Mapping[str, Any], limit: int) -> None:
    sizes = {str(key): argument_bytes(value) for key, value in args.items()}
    total = sum(sizes.values())
    if total <= limit:
        return
    biggest = max(sizes, key=sizes.__getitem__)
    raise ArgumentsTooLargeError(
        f'Arguments of tool "{tool_name}" are too large: "{biggest[:100]}" is {sizes[biggest]} bytes and all '
        f"arguments together {total} bytes; the limit is {limit} bytes. Send less data in one call."
    )
