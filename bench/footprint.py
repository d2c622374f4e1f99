"""Install footprint: the full ``pip install mcp-bridge`` beside the slim serve-only install.

Each is installed into a fresh venv (from the registry's cache after ``make setup``); the venv's
own pip and setuptools are not counted. Writes ``bench/FOOTPRINT.md``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import BENCH_DIR

ROOT = BENCH_DIR.parent
REPORT = BENCH_DIR / "FOOTPRINT.md"
REQUIREMENTS = ROOT / "generated" / "petstore" / "requirements.txt"
VENV_OWN = {"pip", "setuptools", "_distutils_hack", "pkg_resources", "distutils-precedence.pth"}


def _run(*command: str | Path) -> str:
    return subprocess.run([str(c) for c in command], capture_output=True, text=True, check=True, timeout=1200).stdout


def _measure(venv: Path) -> tuple[int, float]:
    listed = json.loads(_run(venv / "bin" / "python", "-m", "pip", "list", "--format=json"))
    names = {item["name"].lower() for item in listed} - VENV_OWN
    site = next((venv / "lib").glob("python3*/site-packages"))
    size = 0
    for path in site.iterdir():
        if path.name.split("-")[0].lower() in VENV_OWN:
            continue
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        size += sum(p.stat().st_size for p in files)
    return len(names), size / 1e6


def _source_copy(folder: Path) -> Path:
    source = folder / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for name in ("bridge", "generator"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    return source


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        source = _source_copy(Path(tmp))
        for label, steps in (
            ("pip install mcp-bridge (generate and serve)", [["--quiet", str(source)]]),
            (
                "slim: --no-deps mcp-bridge + a package's requirements.txt (serve only)",
                [
                    ["--quiet", "--no-deps", str(source)],
                    ["--quiet", "-r", str(ROOT / "generated/petstore/requirements.txt")],
                ],
            ),
        ):
            venv = Path(tmp) / f"venv{len(rows)}"
            _run(sys.executable, "-m", "venv", venv)
            for step in steps:
                _run(venv / "bin" / "python", "-m", "pip", "install", *step)
            rows.append((label, *_measure(venv)))
    lines = [
        "# Install footprint",
        "",
        "`python -m bench.footprint`: fresh venvs, the venv's own pip and setuptools not counted.",
        'Targets (issue "Foundation", item 5): the slim install <= 40 packages and <= 80 MB.',
        "",
        "| install | packages | MB of site-packages |",
        "| --- | ---: | ---: |",
        *[f"| {label} | {count} | {size:.1f} |" for label, count, size in rows],
        "",
    ]
    _, count, size = rows[-1]
    verdict = "met" if count <= 40 and size <= 80 else "missed"
    lines.append(f"Slim install: {verdict} ({count} packages, {size:.1f} MB).")
    REPORT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
