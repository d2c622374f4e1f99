"""Rewrite generated/ from specs/ on purpose: `make golden`. The diff is what to review.

`generate` is called without a RunCommand, so each README says `mcp-bridge serve generated/<name>`:
the CLI writes this machine's absolute program and folder instead, which would differ per machine.
"""

from __future__ import annotations

import os

from generator.generate import generate
from tests.golden import GENERATED_DIR, GOLDEN_SPECS, ROOT, golden_options, spec_path


def main() -> None:
    os.chdir(ROOT)
    for name in GOLDEN_SPECS:
        result = generate(str(spec_path(name).relative_to(ROOT)), GENERATED_DIR / name, golden_options(name))
        print(f"{name}: {len(result.api.operations)} tools")


if __name__ == "__main__":
    main()
