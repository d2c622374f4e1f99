"""One generation run: load -> parse -> shape -> catalogue -> render -> write, with issues collected
along the way."""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from bridge.contract.catalogue import Catalogue
from generator.emit.catalogue import assemble_catalogue
from generator.emit.render import DEFAULT_RUN, RunCommand, api_identity, manifest_tools, render_package
from generator.emit.write import PackageDiff, check_target, write_package
from generator.issues import GenerationError, Issue, Level
from generator.load.overlays.document import Overlay, load_overlays
from generator.load.reading import SpecError
from generator.load.spec import LoadedSpec, load_spec
from generator.options import GenerateOptions
from generator.parse.api import parse_api
from generator.parse.credential_notes import credential_notes
from generator.parse.ir import Api
from generator.parse.unsatisfiable import impossible_parts
from generator.shape.api import shape_api
from generator.workers import Worker
from generator.workflows.build import build_workflows
from generator.workflows.document import ArazzoDocument, load_arazzo

DEFAULT_OUTPUT_ROOT = Path("generated")
PARALLEL_VALIDATION_BYTES = 1_000_000  # specs smaller than this validate in milliseconds
_PARSE_FAILURES = (AttributeError, TypeError, KeyError, ValueError, IndexError)

Step = Callable[[str], None]
# A generation builds hundreds of thousands of long-lived dicts (schemas) and frees few: at the
# default first-generation threshold (700) the collector rescans them over and over, a quarter of
# the time of a big spec (GitHub's, a 1,000-operation one). Memory is unchanged: little is garbage.
GENERATION_GC_THRESHOLD = 50_000


@contextmanager
def fewer_collections() -> Iterator[None]:
    """The cyclic collector's first threshold raised for one generation, then restored."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], GENERATION_GC_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


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


def _load_and_parse(
    source: str, options: GenerateOptions, *, step: Step, validate: bool, overlays: tuple[Overlay, ...] | None = None
) -> tuple[LoadedSpec, Api]:
    step("load")
    # Not strict: a ref that cannot be followed costs the operations that need it (skipped, with a warning).
    loaded = load_spec(
        source,
        allow_remote_refs=options.allow_remote_refs,
        validate=validate,
        fatal_validation=False,
        fatal_refs=options.strict,
        overlays=load_overlays(options.overlays) if overlays is None else overlays,
    )
    step("parse")
    return loaded, _parse(loaded, options, source)


def build_from_loaded(loaded: LoadedSpec, options: GenerateOptions) -> Api:
    """Parse an already loaded spec; issues settled as :func:`build_api` does."""
    return _settle_issues(_parse(loaded, options, loaded.source), loaded.issues, strict=options.strict)


def _parse(loaded: LoadedSpec, options: GenerateOptions, source: str) -> Api:
    try:
        api = parse_api(loaded.document, options=options, source_name=source)
    except _PARSE_FAILURES:
        if not loaded.issues:
            raise  # a valid document the parser cannot handle is a bug: let it show
        # Too malformed to convert: its validation problems say why, with their pointers.
        raise GenerationError(
            [*loaded.issues, Issue(Level.ERROR, source, "the document is too malformed to convert")]
        ) from None
    return api


def _settle_issues(api: Api, load_issues: tuple[Issue, ...], *, strict: bool) -> Api:
    """All issues on the Api; raise GenerationError on any error (with ``strict``, on any warning)."""
    issues = list(load_issues) + list(api.issues)
    if strict:
        issues = [i if i.level is Level.NOTE else replace(i, level=Level.ERROR) for i in issues]
    if any(i.level is Level.ERROR for i in issues):
        raise GenerationError(issues)
    return replace(api, issues=tuple(issues))


def _validation_issues(source: str, allow_remote_refs: bool, overlays: tuple[Overlay, ...]) -> tuple[Issue, ...]:
    """Runs in a worker process: the spec's validation problems (plus conversion notes, removed later)."""
    return load_spec(
        source, allow_remote_refs=allow_remote_refs, fatal_validation=False, fatal_refs=False, overlays=overlays
    ).issues


class _BackgroundValidation:
    """Validation of a big spec in a second process, overlapping parsing and model generation.

    openapi-spec-validator needs seconds on a spec like GitHub's (13 MB); everything else the
    generator does fits in about the same time on the other core. The worker ends with the run,
    Ctrl-C and SIGTERM included (:mod:`generator.workers`).
    """

    def __init__(self, source: str, options: GenerateOptions, overlays: tuple[Overlay, ...]) -> None:
        self._worker: Worker[tuple[Issue, ...]] = Worker(
            _validation_issues, source, options.allow_remote_refs, overlays
        )

    @classmethod
    def start(
        cls, source: str, options: GenerateOptions, overlays: tuple[Overlay, ...] = ()
    ) -> _BackgroundValidation | None:
        path = Path(source)
        if "://" in source or not path.is_file() or path.stat().st_size < PARALLEL_VALIDATION_BYTES:
            return None
        return cls(source, options, overlays)

    def issues(self, loaded: LoadedSpec) -> tuple[Issue, ...]:
        found = self._worker.result()
        already = set(loaded.issues)
        return loaded.issues + tuple(i for i in found if i not in already)

    def cancel(self) -> None:
        self._worker.stop()


def finish_catalogue(api: Api, options: GenerateOptions) -> Catalogue:
    """The catalogue of ``api``: every operation shaped, then put in the catalogue once."""
    return assemble_catalogue(api, shape_api(api, options), mode=options.mode)


def with_workflows(
    catalogue: Catalogue, api: Api, source: str, options: GenerateOptions
) -> tuple[Catalogue, list[Issue], tuple[ArazzoDocument, ...]]:
    """``catalogue`` with the workflows of ``options.workflows`` (Arazzo documents) as tools."""
    if not options.workflows:
        return catalogue, [], ()
    documents, problems = [], []
    for path in options.workflows:
        try:
            documents.append(load_arazzo(path))
        except SpecError as exc:
            problems.extend(exc.problems)
    if problems:
        raise SpecError(problems)
    entries, issues = build_workflows(documents, api, catalogue, source, options)
    return catalogue.model_copy(update={"workflows": entries}), issues, tuple(documents)


def build_catalogue(source: str, options: GenerateOptions) -> tuple[Catalogue, tuple[Issue, ...]]:
    """Generation in memory, for ``mcp-bridge serve spec.yaml``."""
    with fewer_collections():
        return _build_catalogue(source, options)


def _build_catalogue(source: str, options: GenerateOptions) -> tuple[Catalogue, tuple[Issue, ...]]:
    _, api = build_api(source, options)
    catalogue, issues, _ = with_workflows(finish_catalogue(api, options), api, source, options)
    api = _settle_issues(replace(api, issues=(*api.issues, *issues)), (), strict=options.strict)
    return catalogue, api.issues


def _empty_issue(api: Api, options: GenerateOptions, document: object) -> Issue | None:
    """A package with no tool after filtering is almost always a mistyped filter: an error unless allowed."""
    if api.operations:
        return None
    filters = [
        f"{flag} {value}"
        for flag, values in (
            ("--include-tags", options.include_tags),
            ("--exclude-tags", options.exclude_tags),
            ("--include-operations", options.include_operations),
            ("--exclude-operations", options.exclude_operations),
        )
        for value in values
    ] + (["--read-only"] if options.read_only else [])
    if filters:
        detail = f"no operation is left after {' '.join(filters)}"
        tags = _spec_tags(document)
        if options.include_tags or options.exclude_tags:
            detail += f" (the spec's tags: {', '.join(tags) if tags else 'none'})"
    else:  # nothing to filter: the spec itself has no operation (webhooks only, say): worth a word, no more
        return Issue(Level.WARNING, "spec", "the package has no tool: the spec has no operation that can be served")
    level = Level.WARNING if options.allow_empty else Level.ERROR
    return Issue(level, "spec", detail + ("" if options.allow_empty else "; --allow-empty writes it anyway"))


def _spec_tags(document: object) -> list[str]:
    paths = document.get("paths") if isinstance(document, dict) else None
    tags: set[str] = set()
    for item in paths.values() if isinstance(paths, dict) else ():
        for op in item.values() if isinstance(item, dict) else ():
            if isinstance(op, dict) and isinstance(op.get("tags"), list):
                tags.update(str(t) for t in op["tags"])
    return sorted(tags)


def _unsatisfiable_issues(catalogue: Catalogue) -> list[Issue]:
    return [
        Issue(Level.WARNING, tool.operation, f"no input satisfies tool {tool.name!r}: /inputSchema{where}: {why}")
        for tool in catalogue.tools
        for where, why in impossible_parts(tool.input_schema)
    ]


def generate(
    source: str,
    out_dir: Path | None = None,
    options: GenerateOptions | None = None,
    *,
    step: Step = _no_step,
    run: RunCommand = DEFAULT_RUN,
) -> GenerateResult:
    """One run; ``run`` is how the README says to start the server (see :class:`RunCommand`)."""
    with fewer_collections():
        return _generate(source, out_dir, options or GenerateOptions(), step=step, run=run)


def _generate(
    source: str, out_dir: Path | None, options: GenerateOptions, *, step: Step, run: RunCommand
) -> GenerateResult:
    if out_dir is not None:
        check_target(out_dir.absolute())  # refuse a foreign folder before any work
    overlays = load_overlays(options.overlays)
    background = _BackgroundValidation.start(source, options, overlays)
    try:
        loaded, api = _load_and_parse(source, options, step=step, validate=background is None, overlays=overlays)
        target = out_dir if out_dir is not None else DEFAULT_OUTPUT_ROOT / api.name
        check_target(target.absolute())
        empty = _empty_issue(api, options, loaded.document)
        if empty is not None and empty.level is Level.ERROR:
            raise GenerationError([*loaded.issues, *api.issues, empty])
        step("render")
        catalogue, flow_issues, documents = with_workflows(finish_catalogue(api, options), api, source, options)
        if run.absolute:
            run = replace(run, package=str(target.resolve()))
        package = render_package(
            api,
            catalogue,
            spec_source=Path(source).name if "://" not in source else source,
            spec_sha256=loaded.sha256,
            run=run,
            overlays=tuple((Path(o.source).name, o.sha256) for o in overlays),
            workflows=tuple((doc.name, doc.sha256) for doc in documents),
        )
        load_issues = background.issues(loaded) if background is not None else loaded.issues
    except BaseException:
        if background is not None:
            background.cancel()
        raise
    extra = [
        *flow_issues,
        *package.issues,
        *_unsatisfiable_issues(catalogue),
        *credential_notes(api),
        *([empty] if empty is not None else []),
    ]
    api = _settle_issues(replace(api, issues=(*api.issues, *extra)), load_issues, strict=options.strict)
    step("write")
    diff = write_package(
        package,
        target,
        new_manifest_tools=manifest_tools(api, catalogue),
        api=api_identity(api),
        replace=options.replace,
    )
    return GenerateResult(api=api, out_dir=target, diff=diff, issues=api.issues, catalogue=catalogue)


# ------------------------------------------------------------------------------- serve spec.yaml
# Validation (openapi-spec-validator's walk) finds warnings only when serving - problems never stop
# `serve`, the parser converts what it can - and it is most of a big spec's start (3 of 5 s on
# GitHub's). `build_served` can leave it out, so the server starts first;
# generator.load.deferred.Validation runs it in a low-priority child process. A document too
# malformed to convert without it is loaded again with validation, so its error still names the
# validation problems with their pointers.


@dataclass(frozen=True, slots=True)
class ServedBuild:
    catalogue: Catalogue
    issues: tuple[Issue, ...]
    self_contained: bool  # no $ref reached another file: the spec's bytes are all of its content
    validated: bool  # the issues include the spec's validation problems


def defer_validation(source: str) -> bool:
    """Whether validating ``source`` is worth a background process: a local file of a megabyte or more
    (smaller specs validate in milliseconds; a URL would be fetched twice)."""
    if "://" in source:
        return False
    try:
        return os.path.getsize(source) >= PARALLEL_VALIDATION_BYTES
    except OSError:
        return False


def build_served(source: str, options: GenerateOptions, *, validate: bool = False) -> ServedBuild:
    """The catalogue of ``source`` as ``serve`` serves it (``validate=False``: validation deferred).

    Raises:
        SpecError, GenerationError: as :func:`build_catalogue`.
    """
    with fewer_collections():
        return _build_served(source, options, validate=validate)


def _build_served(source: str, options: GenerateOptions, *, validate: bool) -> ServedBuild:
    overlays = load_overlays(options.overlays)
    try:
        loaded, api = _load_and_parse(source, options, step=_no_step, validate=validate, overlays=overlays)
    except _PARSE_FAILURES:
        if validate:
            raise
        return _build_served(source, options, validate=True)  # the validation problems say why
    api = _settle_issues(api, loaded.issues, strict=options.strict)
    catalogue, issues, _ = with_workflows(finish_catalogue(api, options), api, source, options)
    api = _settle_issues(replace(api, issues=(*api.issues, *issues)), (), strict=options.strict)
    return ServedBuild(catalogue, api.issues, loaded.self_contained, validated=validate)
