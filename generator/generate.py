"""One generation run: load -> parse -> render -> write, with issues collected along the way."""

from __future__ import annotations

import dataclasses
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
from generator.shape import lean_api, shared_arguments
from generator.write import PackageDiff, write_package

DEFAULT_OUTPUT_ROOT = Path("generated")
PARALLEL_VALIDATION_BYTES = 1_000_000  # specs smaller than this validate in milliseconds

Step = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class GenerateResult:
    api: Api
    out_dir: Path
    diff: PackageDiff
    issues: tuple[Issue, ...]
    catalogue: Catalogue | None = None


def _no_step(name: str) -> None:
    return None


def build_api(source: str, options: GenerateOptions, *, step: Step = _no_step) -> tuple[LoadedSpec, Api]:
    """Load and parse ``source``; raise GenerationError when any error (or, with strict, warning) is found."""
    loaded, api = _load_and_parse(source, options, step=step, validate=True)
    return loaded, _settle_issues(api, loaded.issues, strict=options.strict)


def _load_and_parse(source: str, options: GenerateOptions, *, step: Step, validate: bool) -> tuple[LoadedSpec, Api]:
    step("load")
    # Not strict: a ref that cannot be followed costs the operations that need it (skipped, with a warning).
    loaded = load_spec(
        source,
        allow_remote_refs=options.allow_remote_refs,
        validate=validate,
        fatal_validation=False,
        fatal_refs=options.strict,
    )
    step("parse")
    return loaded, _parse(loaded, options, source)


def build_from_loaded(loaded: LoadedSpec, options: GenerateOptions) -> Api:
    """Parse an already loaded spec; issues settled as :func:`build_api` does."""
    return _settle_issues(_parse(loaded, options, loaded.source), loaded.issues, strict=options.strict)


def _parse(loaded: LoadedSpec, options: GenerateOptions, source: str) -> Api:
    try:
        api = parse_api(loaded.document, options=options, source_name=source)
    except (AttributeError, TypeError, KeyError, ValueError, IndexError):
        if not loaded.issues:
            raise  # a valid document the parser cannot handle is a bug: let it show
        # Too malformed to convert: its validation problems say why, with their pointers.
        raise GenerationError(
            [*loaded.issues, Issue(Level.ERROR, source, "the document is too malformed to convert")]
        ) from None
    return lean_api(api, options)


def _settle_issues(api: Api, load_issues: tuple[Issue, ...], *, strict: bool) -> Api:
    """All issues on the Api; raise GenerationError on any error (with ``strict``, on any warning)."""
    issues = list(load_issues) + list(api.issues)
    if strict:
        issues = [replace(i, level=Level.ERROR) for i in issues]
    if any(i.level is Level.ERROR for i in issues):
        raise GenerationError(issues)
    return replace(api, issues=tuple(issues))


def _validation_issues(source: str, allow_remote_refs: bool) -> tuple[Issue, ...]:
    """Runs in a worker process: the spec's validation problems (plus conversion notes, removed later)."""
    return load_spec(source, allow_remote_refs=allow_remote_refs, fatal_validation=False, fatal_refs=False).issues


class _BackgroundValidation:
    """Validation of a big spec in a second process, overlapping parsing and model generation.

    openapi-spec-validator needs seconds on a spec like GitHub's (13 MB); everything else the
    generator does fits in about the same time on the other core.
    """

    def __init__(self, source: str, options: GenerateOptions) -> None:
        from concurrent.futures import ProcessPoolExecutor

        self._pool = ProcessPoolExecutor(max_workers=1)
        self._future = self._pool.submit(_validation_issues, source, options.allow_remote_refs)

    @classmethod
    def start(cls, source: str, options: GenerateOptions) -> _BackgroundValidation | None:
        path = Path(source)
        if "://" in source or not path.is_file() or path.stat().st_size < PARALLEL_VALIDATION_BYTES:
            return None
        return cls(source, options)

    def issues(self, loaded: LoadedSpec) -> tuple[Issue, ...]:
        try:
            found = self._future.result()
        finally:
            self._pool.shutdown(wait=True)
        already = set(loaded.issues)
        return loaded.issues + tuple(i for i in found if i not in already)

    def cancel(self) -> None:
        self._future.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)


def finish_catalogue(api: Api, options: GenerateOptions) -> tuple[Api, Catalogue]:
    """The catalogue of ``api``: shared argument descriptions said once, the default mode recorded.

    Returns the api as the catalogue describes it (arguments that share a description lose it).
    """
    shared: dict[str, str] = {}
    if options.compact:
        api, shared = shared_arguments(api, options.shared_argument_tools)
    catalogue = catalogue_from_api(api)
    tools = tuple(
        dataclasses.replace(entry, tags=op.tags) if op.tags else entry
        for entry, op in zip(catalogue.tools, api.operations, strict=True)
    )
    catalogue = catalogue.model_copy(update={"mode": options.mode, "shared_arguments": shared, "tools": tools})
    return api, catalogue


def build_catalogue(source: str, options: GenerateOptions) -> tuple[Catalogue, tuple[Issue, ...]]:
    """Generation in memory, for ``mcp-bridge serve spec.yaml``."""
    _, api = build_api(source, options)
    _, catalogue = finish_catalogue(api, options)
    return catalogue, api.issues


def generate(
    source: str,
    out_dir: Path | None = None,
    options: GenerateOptions | None = None,
    *,
    step: Step = _no_step,
) -> GenerateResult:
    options = options or GenerateOptions()
    background = _BackgroundValidation.start(source, options)
    try:
        loaded, api = _load_and_parse(source, options, step=step, validate=background is None)
        step("render")
        api, catalogue = finish_catalogue(api, options)
        package = render_package(
            api,
            catalogue,
            spec_source=Path(source).name if "://" not in source else source,
            spec_sha256=loaded.sha256,
            models=options.models,
        )
        load_issues = background.issues(loaded) if background is not None else loaded.issues
    except BaseException:
        if background is not None:
            background.cancel()
        raise
    api = _settle_issues(api, load_issues, strict=options.strict)
    target = out_dir if out_dir is not None else DEFAULT_OUTPUT_ROOT / api.name
    step("write")
    diff = write_package(package, target, new_manifest_tools=manifest_tools(api))
    return GenerateResult(api=api, out_dir=target, diff=diff, issues=api.issues, catalogue=catalogue)
