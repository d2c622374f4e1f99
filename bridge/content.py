"""Public face (docs/library.md, "What you may import"): content blocks a hand-written tool's ``run`` may return.

The code lives in :mod:`bridge.tools.content`; this path stays.
"""

from bridge.tools.content import CONTENT_BLOCK_TYPES, audio, error_result, image, link, resource, text, to_call_result

__all__ = ["CONTENT_BLOCK_TYPES", "audio", "error_result", "image", "link", "resource", "text", "to_call_result"]
