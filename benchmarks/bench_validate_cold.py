"""validate-cold-single: one cold process validating one state, against check-jsonschema."""

from __future__ import annotations

import shutil
from pathlib import Path

from commandline import bench_env, check_output, expect_session_resume_clean, process, tool
from runner import EXAMPLE, ROOT, Run, Target, benchmark
from states import STATE_FILE

SCHEMA_3 = ROOT / "schema" / "session-state" / "3.0.json"


@benchmark(
    "validate-cold-single",
    description="one cold process validating the bundled example state (valid, v3.0)",
    contenders=("session-resume", "check-jsonschema"),
    anchor="check-jsonschema",
    target=Target("session-resume", 0.2),
    runs=30,
    quick_runs=15,
)
def validate_cold_single(tmpdir: Path) -> dict[str, Run]:
    env = bench_env(tmpdir)
    shutil.copyfile(EXAMPLE, tmpdir / STATE_FILE)
    sr = [tool("session-resume"), "validate", STATE_FILE, "--root", str(tmpdir)]
    cj = [tool("check-jsonschema"), "--schemafile", str(SCHEMA_3), STATE_FILE]
    expect_session_resume_clean(check_output(sr, cwd=tmpdir, env=env, what="setup"), 1)
    check_output(cj, cwd=tmpdir, env=env, what="setup")
    return {
        "session-resume": process(sr, cwd=tmpdir, env=env),
        "check-jsonschema": process(cj, cwd=tmpdir, env=env),
    }
