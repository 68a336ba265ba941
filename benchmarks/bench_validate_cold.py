"""validate-cold-single: one cold process validating one state, against check-jsonschema and
against the bare interpreter (`python -I -c pass`, the floor of any Python command).

Two informational contenders split a cold command's time (``startup_parts``, also used by
checkpoint-cold): `python -c pass` (the interpreter with `site` and this environment's `.pth`
files, as a console script starts) and `python -c "from session_resume.cli.main import main"`
(that, plus importing the CLI). The derived breakdown line says what the command's time is made
of: the interpreter, site, the CLI's import, and the command's own imports and work."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from commandline import bench_env, check_output, expect_session_resume_clean, process, tool
from runner import EXAMPLE, ROOT, Run, Target, benchmark, fmt_s
from states import STATE_FILE

SCHEMA_3 = ROOT / "schema" / "session-state" / "3.0.json"
BARE = "python -I -c pass"
SITE = "python -c pass"
IMPORT = "import the CLI"


def bare_python(tmpdir: Path, env: dict[str, str]) -> Run:
    """The bare interpreter of this environment, isolated (-I: no site-packages, no user
    site, no PYTHON* variables): what every Python command costs before it does anything."""
    return process([sys.executable, "-I", "-c", "pass"], cwd=tmpdir, env=env)


def startup_parts(tmpdir: Path, env: dict[str, str]) -> dict[str, Run]:
    """The informational contenders that split a cold command: the interpreter with site (as
    a console script starts it) and the same plus the import of the CLI's entry point."""
    return {
        SITE: process([sys.executable, "-c", "pass"], cwd=tmpdir, env=env),
        IMPORT: process(
            [sys.executable, "-c", "import re; from session_resume.cli.main import main"],
            cwd=tmpdir,
            env=env,
        ),
    }


def startup_breakdown(command: str) -> Callable[[dict[str, float], dict[str, Any]], list[str]]:
    """The derived line: ``command``'s median, made of the bare interpreter, site and the
    environment's .pth files, the CLI's import, and the rest (the command's own imports and
    work). Each part is a difference of medians of the same run (a negative one is noise: the
    part costs less than the spread of the runs)."""

    def derive(med: dict[str, float], info: dict[str, Any]) -> list[str]:
        if not all(k in med for k in (command, BARE, SITE, IMPORT)):
            return []
        total, bare = med[command], med[BARE]
        parts = [
            ("the bare interpreter", bare),
            ("site and the .pth files", med[SITE] - bare),
            ("importing the CLI (session_resume.cli.main)", med[IMPORT] - med[SITE]),
            ("the command's own imports and work", total - med[IMPORT]),
        ]
        shown = ", ".join(
            f"{what} {'-' if x < 0 else ''}{fmt_s(abs(x))} ({x / total:.0%})" for what, x in parts
        )
        return [f"what {command}'s median {fmt_s(total)} is made of: {shown}"]

    return derive


@benchmark(
    "validate-cold-single",
    description="one cold process validating the bundled example state (valid, v3.0), vs "
    "check-jsonschema and vs the bare interpreter",
    contenders=("session-resume", "check-jsonschema", BARE, SITE, IMPORT),
    anchor="check-jsonschema",
    targets=(Target("session-resume", 0.15), Target("session-resume", 4.0, against=BARE)),
    runs=30,
    quick_runs=15,
    derive=startup_breakdown("session-resume"),
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
        **startup_parts(tmpdir, env),
    }
