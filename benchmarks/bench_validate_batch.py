"""validate-batch-1000 and validate-batch-10000: many distinct valid states in one call,
session-resume against check-jsonschema (the same files named on its command line)."""

from __future__ import annotations

import time
from pathlib import Path

from bench_validate_cold import SCHEMA_3
from commandline import abbrev, bench_env, check_output, expect_session_resume_clean, process, tool
from runner import OPTIONS, Prepared, Target, benchmark, progress
from states import write_states

SMOKE_COUNTS = {1000: 20, 10_000: 40}  # files under --smoke


def _batch(tmpdir: Path, count: int) -> Prepared:
    env = bench_env(tmpdir)
    if OPTIONS.smoke:
        count = SMOKE_COUNTS[count]
    t0 = time.perf_counter()
    files = write_states(tmpdir, count, seed=count)
    progress(f"  generated {count} state files in {time.perf_counter() - t0:.1f} s")
    sr = [tool("session-resume"), "validate", "agent-output", "--root", str(tmpdir)]
    cj = [tool("check-jsonschema"), "--schemafile", str(SCHEMA_3), *files]
    expect_session_resume_clean(check_output(sr, cwd=tmpdir, env=env, what="setup"), count)
    check_output(cj, cwd=tmpdir, env=env, what="setup")
    runs = {
        "session-resume": process(sr, cwd=tmpdir, env=env),
        "check-jsonschema": process(cj, cwd=tmpdir, env=env, shown=abbrev(cj)),
    }
    return Prepared(runs, notes=[f"--smoke: {count} files"] if OPTIONS.smoke else [])


@benchmark(
    "validate-batch-1000",
    description="1,000 distinct valid states in one call (session-resume also runs its "
    "semantic and workflow rules)",
    contenders=("session-resume", "check-jsonschema"),
    anchor="check-jsonschema",
    target=Target("session-resume", 0.2),
    runs=7,
    quick_runs=5,
    warmup=0,  # setup's check runs the exact timed commands once: that is the warm-up
)
def validate_batch_1000(tmpdir: Path) -> Prepared:
    return _batch(tmpdir, 1000)


@benchmark(
    "validate-batch-10000",
    description="10,000 distinct valid states in one call",
    contenders=("session-resume", "check-jsonschema"),
    anchor="check-jsonschema",
    target=Target("session-resume", 0.2),
    runs=5,
    quick_runs=None,
    warmup=0,  # as above
)
def validate_batch_10000(tmpdir: Path) -> Prepared:
    return _batch(tmpdir, 10_000)
