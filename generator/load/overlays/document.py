"""Reading an Overlay document: YAML or JSON, checked against the Overlay 1.0 (or 1.1) schema, with its SHA-256."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.load import refs
from generator.load.reading import SpecError, parse_document, read_file
from generator.options import DEFAULT_MAX_SPEC_BYTES
from generator.standards import Standard, schema_problems

__all__ = ["Overlay", "load_overlay", "load_overlays"]


@dataclass(frozen=True, slots=True)
class Overlay:
    """One checked overlay: its actions apply in order (``document["actions"]``)."""

    source: str  # the path as given
    sha256: str  # of the file's bytes, recorded in the package's manifest
    document: dict[str, Any]

    @property
    def name(self) -> str:
        """How messages name it: the file name."""
        return Path(self.source).name

    @property
    def version(self) -> tuple[int, int]:
        major, minor = str(self.document["overlay"]).split(".")[:2]
        return int(major), int(minor)

    @property
    def actions(self) -> list[dict[str, Any]]:
        return list(self.document["actions"])


def load_overlay(source: str, *, max_bytes: int = DEFAULT_MAX_SPEC_BYTES) -> Overlay:
    """Read and check the overlay at ``source`` (a file path).

    Raises:
        SpecError: unreadable, not YAML/JSON, or not an Overlay 1.0 or 1.1 document (every problem with
            its JSON pointer).
    """
    name = Path(source).name
    try:
        raw = read_file(os.path.realpath(source), max_bytes=max_bytes)
        document = parse_document(raw, name=name)
    except refs.ReadError as exc:
        raise SpecError([f"{source}: {exc}"]) from None
    if not isinstance(document, dict) or "overlay" not in document:
        raise SpecError([f"{source}: not an Overlay document (it has no 'overlay' key)"])
    version = document["overlay"]
    standard: Standard = "overlay-1.1" if isinstance(version, str) and version.startswith("1.1") else "overlay-1.0"
    problems = schema_problems(standard, document)
    if problems:
        raise SpecError([f"{source}: {p.pointer + ': ' if p.pointer else ''}{p.message}" for p in problems])
    return Overlay(source, hashlib.sha256(raw).hexdigest(), document)


def load_overlays(sources: tuple[str, ...] | list[str]) -> tuple[Overlay, ...]:
    """Every overlay of ``sources``, in order; the problems of all of them in one SpecError."""
    overlays: list[Overlay] = []
    problems: list[str] = []
    for source in sources:
        try:
            overlays.append(load_overlay(source))
        except SpecError as exc:
            problems.extend(exc.problems)
    if problems:
        raise SpecError(problems)
    return tuple(overlays)
