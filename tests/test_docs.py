"""The documentation builds with no warning, and every relative link and anchor in it resolves.

``mkdocs build --strict`` checks the pages under ``docs/`` (``mkdocs.yml``: links, anchors, pages left out of
the nav). The top-level files are read on GitHub and in the sdist, outside MkDocs, so their links are checked
here: each is rendered with Python-Markdown, and each relative ``href`` must name a file of the checkout and,
with a ``#fragment``, a heading of that file (for a page under ``docs/``, an ``id`` of the page MkDocs built).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import markdown
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
TOP_LEVEL = ("README.md", "SECURITY.md", "CONTRIBUTING.md", "CHANGELOG.md")
README_MAX_LINES = 250


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "href" and tag == "a" and value is not None:
                self.hrefs.append(value)
            elif name == "id" and value is not None:
                self.ids.add(value)


def _collect(html: str) -> _Collector:
    collector = _Collector()
    collector.feed(html)
    return collector


def _render(path: Path) -> _Collector:
    text = path.read_text(encoding="utf-8")
    return _collect(markdown.markdown(text, extensions=["toc", "tables", "fenced_code"]))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-f", "mkdocs.yml", "-d", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    return out


def _built_page(site: Path, page: Path) -> Path:
    relative = page.relative_to(DOCS).with_suffix("")
    return site / "index.html" if relative.name == "index" else site / relative / "index.html"


def _anchors(site: Path, target: Path) -> set[str]:
    if target.is_relative_to(DOCS):
        return _collect(_built_page(site, target).read_text(encoding="utf-8")).ids
    return _render(target).ids


def _relative_links(path: Path) -> Iterator[tuple[str, Path, str]]:
    for href in _render(path).hrefs:
        parts = urlsplit(href)
        if parts.scheme or parts.netloc:
            continue
        target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
        yield href, target, unquote(parts.fragment)


def _checked_files() -> list[Path]:
    return [ROOT / name for name in TOP_LEVEL] + sorted(DOCS.glob("*.md"))


def test_the_docs_build_strict_with_every_page_in_the_nav(site: Path) -> None:
    for page in DOCS.glob("*.md"):
        assert _built_page(site, page).is_file(), page


@pytest.mark.parametrize("name", [str(p.relative_to(ROOT)) for p in _checked_files()])
def test_every_relative_link_and_anchor_resolves(site: Path, name: str) -> None:
    path = ROOT / name
    broken = []
    for href, target, fragment in _relative_links(path):
        if not target.exists() or not target.is_relative_to(ROOT):
            broken.append(f"{href}: no such file")
        elif fragment and target.suffix == ".md" and fragment not in _anchors(site, target):
            broken.append(f"{href}: no heading #{fragment} in {target.relative_to(ROOT)}")
    assert broken == [], f"{name}: " + "; ".join(broken)


def test_the_readme_is_a_front_page_that_links_every_docs_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MAX_LINES
    assert readme.startswith("# mcp-bridge\n\n```bash\nmake demo ")
    linked = {target for _, target, _ in _relative_links(ROOT / "README.md")}
    pages = {p.resolve() for p in DOCS.glob("*.md")} - {
        DOCS / n for n in ("index.md", "contributing.md", "changelog.md")
    }
    assert pages <= linked, sorted(str(p.relative_to(ROOT)) for p in pages - linked)
