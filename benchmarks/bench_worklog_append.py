"""worklog-append-large: session_resume.storage.worklog.append() in process on a 1 GB worklog
against the same append on an empty one (constant-time append: no re-parsing of the tail)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from bench_resume_worklog import large_size, write_large_worklog
from runner import (
    BenchAbort,
    Prepared,
    Run,
    Target,
    benchmark,
)

_SESSION = "5e55b1d0c0ffee42"
_EMPTY, _LARGE = "empty worklog", "large worklog"


@benchmark(
    "worklog-append-large",
    description="in process: session_resume.storage.worklog.append() of one checkpoint event "
    "(next seq, one write, fsync) to a 1 GB worklog (100 MB under --quick) vs to a worklog "
    "that starts empty",
    contenders=(_LARGE, _EMPTY),
    anchor=_EMPTY,
    target=Target(_LARGE, 1.1),
    runs=300,
    quick_runs=100,
    warmup=5,
)
def worklog_append_large(tmpdir: Path) -> Prepared:
    from session_resume.storage import worklog

    size, label = large_size()
    dirs = {_EMPTY: tmpdir / "empty", _LARGE: tmpdir / "large"}
    for d in dirs.values():
        d.mkdir()
    last = write_large_worklog(dirs[_LARGE] / worklog.WORKLOG, size)
    clock = itertools.count()

    def appender(d: Path) -> Run:
        def call() -> None:
            n = next(clock)
            worklog.append(
                d,
                "checkpoint",
                ts=f"2026-11-20T15:{n // 60 % 60:02d}:{n % 60:02d}Z",
                session=_SESSION,
                step="2",
                sub_step="phase_2_waf",
            )

        return Run(call, f"worklog.append({d.name}/, 'checkpoint', ts=..., session=..., ...)")

    runs = {name: appender(d) for name, d in dirs.items()}
    for name in runs:
        runs[name].call()
    for name, first in ((_EMPTY, 1), (_LARGE, last + 1)):
        tail = (dirs[name] / worklog.WORKLOG).read_bytes()[-400:].splitlines()[-1]
        if json.loads(tail)["seq"] != first:
            raise BenchAbort(f"{name}: the appended event has seq {tail!r}, not {first}")
    big = (dirs[_LARGE] / worklog.WORKLOG).stat().st_size
    return Prepared(
        runs,
        notes=[
            f"large worklog = {label}: {big:,} bytes, {last:,} valid JSONL events; every "
            "run appends one more event to each worklog (the empty one grows by the runs)"
        ],
    )
