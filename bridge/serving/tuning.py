"""Process-wide tuning of a long-running ``mcp-bridge serve`` process, in one place.

Nothing here runs on ``import bridge``: a host process that uses the bridge as a library keeps
its own ``sys.modules``, allocator and collector settings. The serve entry point calls
:func:`prepare_serving_process` before it imports the runtime, and builds the catalogue inside
:func:`long_lived_objects`. Each setting says what it was measured to save.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from bridge.serving.httpx_seams import skip_httpx_cli

__all__ = ["MMAP_THRESHOLD", "long_lived_objects", "pin_mmap_threshold", "prepare_serving_process", "skip_httpx_cli"]

MMAP_THRESHOLD = 128 * 1024
"""glibc's default ``M_MMAP_THRESHOLD``; pinning it there disables the dynamic adjustment."""

_M_MMAP_THRESHOLD = -3  # from glibc's <malloc.h>


def pin_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """Pin glibc's mmap threshold; False where there is no glibc ``mallopt`` (macOS, musl, Windows).

    glibc serves allocations above its mmap threshold with ``mmap`` and gives them back when
    freed, but after each such free it raises the threshold to that size: from then on, buffers
    of that size come from the heap, and a freed heap block is rarely returned. A big API's
    tools/list answer is a few such buffers, so each answer left a few megabytes behind: GitHub's
    server grew from 97 to 118 MB over ten tools/list calls, and stays at 95 MB with the threshold
    pinned (``tests/e2e/test_stdio_memory.py``). ``MALLOC_MMAP_THRESHOLD_`` does the same, but
    only when set before the process starts.
    """
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, threshold))


def prepare_serving_process() -> None:
    """What a serve process sets before it imports the runtime."""
    skip_httpx_cli()
    pin_mmap_threshold()


@contextmanager
def long_lived_objects() -> Iterator[None]:
    """Build objects that live as long as the process (the catalogue, the tools) in this block.

    The catalogue is a hundred thousand long-lived objects: the collector is off while they are
    made (it would walk them again and again) and they are frozen afterwards, so later
    collections during tool calls skip them. The block
    restores the collector's previous state, also when it fails.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    except BaseException:
        if was_enabled:
            gc.enable()
        raise
    gc.freeze()
    if was_enabled:
        gc.enable()
