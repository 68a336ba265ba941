"""worklog-append-large: session_resume.storage.worklog.append() in process on a 1 GB worklog
against the same append on an empty one (constant-time append: no re-parsing of the tail)."""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import time
from pathlib import Path

from bench_resume_worklog import _write_history
from runner import (
    OPTIONS,
    BenchAbort,
    BenchUnavailable,
    Prepared,
    Run,
    Target,
    benchmark,
    progress,
)

_SESSION = "5e55b1d0c0ffee42"
_EMPTY, _LARGE = "empty worklog", "large worklog"


def large_size() -> tuple[int, str]:
    """The large worklog's size in bytes, and as the report says it."""
    if OPTIONS.smoke:
        return 1000 * 1000, "1 MB"
    if OPTIONS.quick:
        return 100 * 1000 * 1000, "100 MB"
    return 1000 * 1000 * 1000, "1 GB"


def write_large_worklog(path: Path, size: int) -> int:
    """A valid worklog of about ``size`` bytes (past sessions, seq 1..N), fsynced; returns the
    last seq. Aborts the benchmark unless ``size`` bytes and some margin are free."""
    free = shutil.disk_usage(path.parent).free
    if free < 3 * size:
        raise BenchUnavailable(
            f"only {free / 1e9:.1f} GB free in {path.parent}; the worklog needs "
            f"{3 * size / 1e9:.1f} GB free"
        )
    t0 = time.perf_counter()
    with open(path, "wb", buffering=0) as fh:
        last = _write_history(fh, size, random.Random(size))
        os.fsync(fh.fileno())
    progress(
        f"  wrote a {path.stat().st_size / 1e9:.2f} GB worklog ({last:,} events) in "
        f"{time.perf_counter() - t0:.1f} s"
    )
    return last


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
