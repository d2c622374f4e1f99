"""Reading an Arazzo document: YAML or JSON, checked against the Arazzo 1.0 schema and bounded in size."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.load import refs
from generator.load.reading import SpecError, parse_document, read_file
from generator.standards import schema_problems

__all__ = ["MAX_ARAZZO_BYTES", "MAX_STEPS", "MAX_WORKFLOWS", "ArazzoDocument", "load_arazzo"]

MAX_ARAZZO_BYTES = 8 * 1024 * 1024
MAX_WORKFLOWS = 500  # per document
MAX_STEPS = 200  # per workflow


@dataclass(frozen=True, slots=True)
class ArazzoDocument:
    source: str  # the path as given
    sha256: str
    document: dict[str, Any]

    @property
    def name(self) -> str:
        return Path(self.source).name

    @property
    def folder(self) -> Path:
        return Path(os.path.realpath(self.source)).parent

    def where(self, pointer: str) -> str:
        return f"{self.name}: {pointer}" if pointer else self.name


def load_arazzo(source: str) -> ArazzoDocument:
    """Read and check the Arazzo document at ``source``.

    Raises:
        SpecError: unreadable, not YAML/JSON, not an Arazzo 1.0 document (each problem with its
            JSON pointer), or larger than the bounds.
    """
    name = Path(source).name
    try:
        raw = read_file(os.path.realpath(source), max_bytes=MAX_ARAZZO_BYTES)
        document = parse_document(raw, name=name)
    except refs.ReadError as exc:
        raise SpecError([f"{source}: {exc}"]) from None
    if not isinstance(document, dict) or "arazzo" not in document:
        raise SpecError([f"{source}: not an Arazzo document (it has no 'arazzo' key)"])
    problems = [
        f"{source}: {p.pointer + ': ' if p.pointer else ''}{p.message}" for p in schema_problems("arazzo-1.0", document)
    ]
    workflows = document.get("workflows")
    if isinstance(workflows, list):
        if len(workflows) > MAX_WORKFLOWS:
            problems.append(f"{source}: /workflows: more than {MAX_WORKFLOWS} workflows")
        for index, flow in enumerate(workflows):
            steps = flow.get("steps") if isinstance(flow, dict) else None
            if isinstance(steps, list) and len(steps) > MAX_STEPS:
                problems.append(f"{source}: /workflows/{index}/steps: more than {MAX_STEPS} steps")
    if problems:
        raise SpecError(problems)
    return ArazzoDocument(source, hashlib.sha256(raw).hexdigest(), document)
