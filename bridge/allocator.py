"""One allocator setting for long-running servers on glibc.

glibc serves allocations above its mmap threshold with ``mmap`` and gives them back to the system
when freed, but after each such free it raises the threshold to that size: from then on, buffers
of that size come from the heap, and a freed heap block is rarely returned. A big API's tools/list
answer is a few such buffers (its JSON text, then the bytes written to stdout), so each answer
left a few megabytes behind: GitHub's server grew from 97 to 118 MB over ten tools/list calls.
Setting the threshold explicitly (to glibc's own default) turns that adjustment off; the server
then stays at its size. The environment variable ``MALLOC_MMAP_THRESHOLD_`` does the same, but
only when set before the process starts.
"""

from __future__ import annotations

import sys

__all__ = ["MMAP_THRESHOLD", "pin_mmap_threshold"]

MMAP_THRESHOLD = 128 * 1024
"""glibc's default ``M_MMAP_THRESHOLD``; pinning it there disables the dynamic adjustment."""

_M_MMAP_THRESHOLD = -3  # from glibc's <malloc.h>


def pin_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """Pin glibc's mmap threshold; False where there is no glibc ``mallopt`` (macOS, musl, Windows)."""
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
