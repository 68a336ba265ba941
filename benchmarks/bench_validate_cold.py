"""validate-cold-single: one cold process validating one state, against check-jsonschema and
against the bare interpreter (`python -I -c pass`, the floor of any Python command)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from commandline import bench_env, check_output, expect_session_resume_clean, process, tool
from runner import EXAMPLE, ROOT, Run, Target, benchmark
from states import STATE_FILE

SCHEMA_3 = ROOT / "schema" / "session-state" / "3.0.json"
BARE = "python -I -c pass"


def bare_python(tmpdir: Path, env: dict[str, str]) -> Run:
    """The bare interpreter of this environment, isolated (-I: no site-packages, no user
    site, no PYTHON* variables): what every Python command costs before it does anything."""
    return process([sys.executable, "-I", "-c", "pass"], cwd=tmpdir, env=env)


@benchmark(
    "validate-cold-single",
    description="one cold process validating the bundled example state (valid, v3.0), vs "
    "check-jsonschema and vs the bare interpreter",
    contenders=("session-resume", "check-jsonschema", BARE),
    anchor="check-jsonschema",
    targets=(Target("session-resume", 0.15), Target("session-resume", 4.0, against=BARE)),
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
        BARE: bare_python(tmpdir, env),
    }
