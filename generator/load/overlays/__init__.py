"""OpenAPI Overlay 1.0: documents of JSONPath-targeted ``update`` / ``remove`` actions that tailor a spec.

:mod:`generator.load.overlays.document` reads and checks an overlay; :mod:`generator.load.overlays.apply`
applies overlays, in order, to a parsed spec before anything else reads it (``generator.load.spec``).
"""
