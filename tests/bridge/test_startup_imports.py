"""What serving imports: start-up time and memory are part of the product (issue 3's floor)."""

from __future__ import annotations

import json
import subprocess
import sys

# Modules serving a generated package must not import: the generator and the spec tooling (the
# package is already generated), and httpx's command-line client (rich, pygments). uvicorn is not
# listed: the SDK's low-level server imports it itself.
NOT_AT_STARTUP = ("generator", "openapi_core", "openapi_spec_validator", "datamodel_code_generator", "rich", "pygments")

PROBE = """
import json, sys
from pathlib import Path
from bridge import serve
catalogue, package = serve.load_target(sys.argv[1])
runtime = serve.build_runtime(catalogue, serve.ServeOptions())
serve.build_bridge_server(catalogue, serve.build_registry(catalogue, runtime, package))
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


def test_serving_a_package_imports_nothing_it_does_not_need() -> None:
    from tests.golden import GENERATED_DIR

    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(GENERATED_DIR / "petstore")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    loaded = set(json.loads(done.stdout))
    assert "httpx" in loaded  # the probe did build the runtime
    assert loaded.isdisjoint(NOT_AT_STARTUP), sorted(loaded & set(NOT_AT_STARTUP))
