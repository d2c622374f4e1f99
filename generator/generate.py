"""One generation run: load -> parse -> render -> write, with issues collected along the way."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from bridge.binding import Catalogue
from generator.ir import Api
from generator.issues import GenerationError, Issue, Level
from generator.load import LoadedSpec, load_spec
from generator.options import GenerateOptions
from generator.parse import parse_api
from generator.render import catalogue_from_api, manifest_tools, render_package
from generator.write import PackageDiff, write_package

DEFAULT_OUTPUT_ROOT = Path("generated")

Step = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class GenerateResult:
    api: Api
    out_dir: Path
    diff: PackageDiff
    issues: tuple[Issue, ...]


def _no_step(name: str) -> None:
    return None


def build_api(source: str, options: GenerateOptions, *, step: Step = _no_step) -> tuple[LoadedSpec, Api]:
    """Load and parse ``source``; raise GenerationError when any error (or, with strict, warning) is found."""
    step("load")
    loaded = load_spec(source, allow_remote_refs=options.allow_remote_refs, fatal_validation=False)
    step("parse")
    api = parse_api(loaded.document, options=options, source_name=source)
    issues = list(loaded.issues) + list(api.issues)
    if options.strict:
        issues = [replace(i, level=Level.ERROR) for i in issues]
    api = replace(api, issues=tuple(issues))
    if any(i.level is Level.ERROR for i in issues):
        raise GenerationError(issues)
    return loaded, api


def build_catalogue(source: str, options: GenerateOptions) -> tuple[Catalogue, tuple[Issue, ...]]:
    """Generation in memory, for ``mcp-bridge serve spec.yaml``."""
    _, api = build_api(source, options)
    return catalogue_from_api(api), api.issues


def generate(
    source: str,
    out_dir: Path | None = None,
    options: GenerateOptions | None = None,
    *,
    step: Step = _no_step,
) -> GenerateResult:
    options = options or GenerateOptions()
    loaded, api = build_api(source, options, step=step)
    target = out_dir if out_dir is not None else DEFAULT_OUTPUT_ROOT / api.name
    step("render")
    package = render_package(
        api,
        spec_source=Path(source).name if "://" not in source else source,
        spec_sha256=loaded.sha256,
        models=options.models,
    )
    step("write")
    diff = write_package(package, target, new_manifest_tools=manifest_tools(api))
    return GenerateResult(api=api, out_dir=target, diff=diff, issues=api.issues)
