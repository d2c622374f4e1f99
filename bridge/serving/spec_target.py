"""``serve spec.yaml``: the catalogue from the cache, or generated and cached; big specs validated in the background.

A first start of a big spec generates the catalogue without validating the spec
(generator.generate.build_served), writes the cache entry (bridge/serving/spec_cache.py) and
starts the server; a low-priority child process validates the spec and writes the entry again
with the warnings, which the server logs when the child ends. A small spec is validated at once. A
later start of the same bytes, version and options reads the entry, logs the warnings it holds
and says that it used the cache; an entry written before validation ended has validation run
again.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from typing import Any

from bridge.contract.catalogue import Catalogue
from bridge.serving.spec_cache import CatalogueCache

__all__ = ["load_spec_target"]

logger = logging.getLogger("bridge.serve")

VALIDATION_NICENESS = 10  # the validating child yields the CPU to the server's calls


def load_spec_target(
    target: str, *, overlays: Sequence[str] = (), workflows: Sequence[str] = (), use_cache: bool = True
) -> Catalogue:
    """The catalogue to serve for the spec file or URL ``target``; warnings are logged."""
    from generator.options import GenerateOptions  # light: dataclasses and constants

    options = GenerateOptions(overlays=tuple(overlays), workflows=tuple(workflows))
    cache = (
        CatalogueCache.for_spec(target, overlays=overlays, workflows=workflows, options=options) if use_cache else None
    )
    if cache is not None:
        hit = cache.load()
        if hit is not None:
            for line in hit.issues:
                logger.warning("%s", line)
            logger.info("catalogue from the cache: %s (--no-cache generates it again)", cache.path)
            if not hit.validated:
                _validate_later(target, options, (), cache, hit.catalogue_json, hit.issues)
            return hit.catalogue
    from generator.generate import build_served, defer_validation
    from generator.load.reading import pinned_files

    # The catalogue is made from the bytes the cache key was made from (one read of each file): a
    # spec saved during start-up cannot leave an entry that serves the other version's tools.
    with pinned_files(cache.inputs if cache is not None else {}):
        built = build_served(target, options, validate=not defer_validation(target))
    for issue in built.issues:
        logger.warning("%s", issue)
    lines = tuple(str(i) for i in built.issues)
    data: bytes | None = None
    if cache is not None and not built.self_contained:
        logger.info("catalogue not cached: the spec's $refs reach other files")
        cache = None
    elif cache is not None:
        from generator.emit.render import catalogue_json

        # Written now, before serving: a server that ends before validation does still leaves it.
        data = catalogue_json(built.catalogue)
        if cache.store(data, lines, validated=built.validated):
            logger.info("catalogue cached: %s", cache.path)
    if not built.validated:
        _validate_later(target, options, built.issues, cache, data, lines)
    return built.catalogue


def _in_child(
    target: str,
    overlays: tuple[str, ...],
    allow_remote_refs: bool,
    cache: CatalogueCache | None,
    data: bytes | None,
    lines: tuple[str, ...],
) -> list[str]:
    """The validation child: the new warnings; the cache entry written again with them."""
    from generator.load.deferred import validation_issues
    from generator.load.reading import pinned_files

    try:
        os.nice(VALIDATION_NICENESS)
    except OSError:  # not permitted: run at the same priority
        pass
    already = set(lines)
    with pinned_files(cache.inputs if cache is not None else {}):  # the bytes the entry's catalogue came from
        found = validation_issues(target, overlays, allow_remote_refs)
    new = [str(i) for i in found if str(i) not in already]
    if cache is not None and data is not None:
        cache.store(data, (*lines, *new), validated=True)
    return new


def _validate_later(
    target: str,
    options: Any,  # generator.options.GenerateOptions (the generator is imported lazily)
    known: tuple[Any, ...],  # generator.issues.Issue
    cache: CatalogueCache | None,
    data: bytes | None,
    lines: tuple[str, ...],
) -> None:
    """Validate ``target`` in a child process; a daemon thread logs its new warnings."""
    from generator.workers import Worker, WorkerError

    known_lines = tuple(dict.fromkeys((*lines, *map(str, known))))
    try:
        worker: Worker[list[str]] = Worker(
            _in_child, target, tuple(options.overlays), options.allow_remote_refs, cache, data, known_lines
        )
    except OSError as exc:  # no process can be started: the warnings are lost, the server is not
        logger.warning("the spec is not validated (%s)", exc)
        return

    def wait() -> None:
        try:
            new = worker.result()
        except WorkerError as exc:  # stopped with the server (or killed): nothing to say
            logger.debug("spec validation stopped: %s", exc)
            return
        except Exception as exc:  # the spec changed or vanished under it: say so, serve on
            logger.warning("validating the spec failed: %s", str(exc).splitlines()[0][:300] if str(exc) else exc)
            return
        for line in new:
            logger.warning("%s", line)
        logger.info("spec validated: %d problem(s)", len(new))

    threading.Thread(target=wait, name="mcp-bridge-validate", daemon=True).start()
