"""Typed stubs of the API for code mode (mcp-bridge serve --mode code); generated, do not edit."""

from __future__ import annotations
from typing import Any, NotRequired, TypeAlias
from typing_extensions import TypedDict

ApiError = OSError
"""Raised by an API function: the call failed (an HTTP error status, bad arguments, a timeout)."""

def api_status(error: BaseException) -> int | None:
    """The HTTP status of an ApiError (None when the call failed without an HTTP answer)."""

from typing import Callable as _Callable, Iterable as _Iterable

def map(function: _Callable[..., Any], iterable: _Iterable[Any], /, *iterables: _Iterable[Any]) -> list[Any]:
    """Python's map, as a list."""

def filter(function: _Callable[[Any], object] | None, iterable: _Iterable[Any], /) -> list[Any]:
    """Python's filter, as a list."""

class ListJobsInput(TypedDict, total=False, closed=True):
    limit: int

ListJobsOutput: TypeAlias = list[ListJobsOutput2]

class StartJobInput(TypedDict, closed=True):
    kind: str
    steps: NotRequired[int]

class GetJobInput(TypedDict, closed=True):
    jobId: str

class GetJobOutput(TypedDict, total=False):
    id: str
    kind: str
    status: str

class CancelJobInput(TypedDict, closed=True):
    jobId: str

class GetReportInput(TypedDict, closed=True):
    reportId: int

class GetReportOutput(TypedDict, total=False):
    id: int
    lines: list[str]

class StartExportInput(TypedDict, closed=True):
    pass

class ListJobsOutput2(TypedDict, total=False):
    id: str
    kind: str
    status: str

async def listJobs(*, limit: int = ...) -> ListJobsOutput:
    """List jobs
    The jobs of this account, newest first.

    GET /jobs (read-only)

    Pages: arguments limit."""

async def startJob(*, kind: str, steps: int = ...) -> Any:
    """Start a job

    Starts a job; it runs in the background and ends with a report.

    POST /jobs (writes)"""

async def getJob(*, jobId: str) -> GetJobOutput:
    """Get a job
    One job and where it stands.

    GET /jobs/{jobId} (read-only)"""

async def cancelJob(*, jobId: str) -> Any:
    """Cancel a job
    Stops a running job; its partial work is discarded.

    DELETE /jobs/{jobId} (destructive, idempotent)"""

async def getReport(*, reportId: int) -> GetReportOutput:
    """Get a report

    GET /reports/{reportId} (read-only)"""

async def startExport() -> Any:
    """Export everything

    Exports every job; a long-running operation that x-mcp-async marks.

    POST /exports (writes)"""
