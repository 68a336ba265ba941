"""rss-validate-10000 and rss-resume-large-worklog: the peak resident memory of one cold
process (`validate` of 10,000 files; `resume` on a 1 GB worklog), with the bare interpreter's
peak beside it.

A contender's value is the child's own peak RSS as the kernel reports it when the child is
reaped: ``os.wait4`` returns the rusage of that one process (``ru_maxrss``; KiB on Linux,
bytes on macOS). RUSAGE_CHILDREN would give the largest peak of every child reaped so far."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bench_resume_worklog import orphaned_sessions, resume_argv
from bench_validate_cold import BARE
from commandline import bench_env, check_output, expect_session_resume_clean, tool
from runner import OPTIONS, BenchAbort, Limit, Prepared, Run, benchmark, progress
from states import write_states

_MIB = 1024 * 1024
_RSS_UNIT = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, else KiB


# The measuring helper: a small interpreter (-I -S) that spawns the command, reaps it with
# os.wait4 and prints its exit code and ru_maxrss. Measured from the benchmark process itself,
# a child would report the benchmark process's own peak: Linux keeps the larger of the old
# and the new memory's peak across fork and exec. From the helper, the floor is the helper's
# own RSS (see _floor), below the bare interpreter's.
_HELPER = """import os, sys
null = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ, file_actions=null)
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


def _measure(args: Sequence[str], cwd: Path, env: dict[str, str]) -> float:
    """The peak RSS of one run of ``args`` in MiB; aborts on a non-zero exit."""
    res = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _HELPER, *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        code, maxrss = (int(x) for x in res.stdout.split())
    except ValueError:
        raise BenchAbort(f"the RSS helper failed: {res.stderr.strip()[-2000:]}") from None
    if code != 0:
        raise BenchAbort(f"`{' '.join(args)}` exited {code}")
    return maxrss * _RSS_UNIT / _MIB


def peak_rss(argv: Sequence[str], *, cwd: Path, env: dict[str, str]) -> Run:
    """A Run whose call runs ``argv`` once (output discarded) and returns its peak RSS in
    MiB."""
    args = list(argv)
    return Run(
        lambda: _measure(args, cwd, env),
        " ".join(args) + "  (peak RSS: os.wait4 from a small helper process)",
    )


def floor_note(cwd: Path, env: dict[str, str]) -> str:
    """The helper's floor: the peak it reports for /bin/true (or the bare interpreter)."""
    true = "/bin/true" if os.path.exists("/bin/true") else sys.executable
    args = [true] if true == "/bin/true" else [true, "-I", "-S", "-c", "pass"]
    return (
        f"measurement floor: {_measure(args, cwd, env):.1f} MiB reported for `{' '.join(args)}` "
        "(the helper's own RSS, inherited until exec)"
    )


_VALIDATE = "session-resume validate (10,000 files)"


@benchmark(
    "rss-validate-10000",
    description="peak RSS of one cold `session-resume validate agent-output` over 10,000 "
    "distinct valid states (40 under --smoke), beside the bare interpreter's",
    contenders=(_VALIDATE, BARE),
    anchor=BARE,
    target=Limit(_VALIDATE, 60.0),
    unit="MiB",
    runs=3,
    quick_runs=2,
    warmup=0,  # peak RSS does not depend on a warm cache; setup ran the command once
)
def rss_validate_10000(tmpdir: Path) -> Prepared:
    env = bench_env(tmpdir)
    count = 40 if OPTIONS.smoke else 10_000
    t0 = time.perf_counter()
    write_states(tmpdir, count, seed=count)
    progress(f"  generated {count} state files in {time.perf_counter() - t0:.1f} s")
    sr = [tool("session-resume"), "validate", "agent-output", "--root", str(tmpdir)]
    expect_session_resume_clean(check_output(sr, cwd=tmpdir, env=env, what="setup"), count)
    runs = {
        _VALIDATE: peak_rss(sr, cwd=tmpdir, env=env),
        BARE: peak_rss([sys.executable, "-I", "-c", "pass"], cwd=tmpdir, env=env),
    }
    notes = [f"{count:,} files, all valid and clean", floor_note(tmpdir, env)]
    return Prepared(runs, notes=notes)


_LARGE, _EMPTY = "session-resume resume (large worklog)", "session-resume resume (empty worklog)"


@benchmark(
    "rss-resume-large-worklog",
    description="peak RSS of one cold `session-resume resume DIR` (the orphaned session of "
    "resume-large-worklog) with a 1 GB worklog (100 MB under --quick) and with an empty one, "
    "beside the bare interpreter's",
    contenders=(_LARGE, _EMPTY, BARE),
    anchor=BARE,
    target=Limit(_LARGE, 40.0),
    unit="MiB",
    runs=3,
    quick_runs=2,
    warmup=0,
)
def rss_resume_large_worklog(tmpdir: Path) -> Prepared:
    env = bench_env(tmpdir)
    dirs, big, last, label = orphaned_sessions(tmpdir)

    def argv(name: str) -> list[str]:
        return resume_argv(tmpdir, dirs, name)

    for name in ("empty", "large"):
        check_output(argv(name), cwd=tmpdir / name, env=env, what="setup")
    runs = {
        _LARGE: peak_rss(argv("large"), cwd=tmpdir / "large", env=env),
        _EMPTY: peak_rss(argv("empty"), cwd=tmpdir / "empty", env=env),
        BARE: peak_rss([sys.executable, "-I", "-c", "pass"], cwd=tmpdir, env=env),
    }
    return Prepared(
        runs,
        notes=[
            f"large worklog = {label}: {big.stat().st_size:,} bytes, {last + 9:,} events",
            floor_note(tmpdir, env),
        ],
    )
