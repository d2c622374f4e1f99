"""Row 37: a short coverage-guided run of each atheris target (``tests/security/fuzz.py``).

Bounded in runs and time. Longer campaigns: ``python -m tests.security.fuzz request -runs=1000000``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.golden import ROOT, SPECS_DIR

RUNS = {"request": 30_000, "arguments": 20_000, "spec": 3_000}
TIMEOUT = 120


@pytest.mark.parametrize("target", sorted(RUNS))
def test_fuzz_target_finds_no_crash(target: str, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    if target == "spec":  # real specs as seeds, so mutations stay close to OpenAPI
        for spec in sorted(SPECS_DIR.glob("*.yaml")):
            shutil.copy(spec, corpus / spec.name)
    command = [
        sys.executable,
        "-m",
        "tests.security.fuzz",
        target,
        str(corpus),
        f"-runs={RUNS[target]}",
        "-max_len=65536" if target == "spec" else "-max_len=4096",
        "-seed=20261130",
        f"-artifact_prefix={tmp_path}/",
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT)
    report = "\n".join(line for line in done.stderr.splitlines() if not line.startswith("INFO: Instrumenting"))
    assert done.returncode == 0, report[-4000:]
    assert f"Done {RUNS[target]} runs" in report
