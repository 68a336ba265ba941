"""Fuzz group: the CLI. The real command line on random bytes answers with an exit
code, never a traceback or SR900 (a few dozen processes).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_resume.storage import store

from .profiles import CLI_PROFILE, tried
from .strategies import ANY_BYTES
from conftest import run_cli

# Test tier (README "Test tiers"): Hypothesis properties (`nox -s fuzz` runs them at scale).
pytestmark = pytest.mark.slow

# --- the CLI on random bytes (a few dozen processes) ----------------------------------------


_COMMANDS = [
    ["validate", "{state}", "--format", "json"],
    ["validate", "{state}", "--format", "sarif"],
    ["validate", "{state}", "--format", "github"],
    ["resume", "{dir}", "--format", "json"],
    ["report", "{dir}"],
    ["recover", "{dir}"],
    ["migrate", "{dir}", "--dry-run"],
    ["migrate", "{dir}"],
]


@CLI_PROFILE
@given(data=ANY_BYTES, bak=st.one_of(st.none(), ANY_BYTES), cmd=st.sampled_from(_COMMANDS))
def test_cli_never_prints_a_traceback_for_random_bytes(
    data: bytes, bak: bytes | None, cmd: list[str]
) -> None:
    tried("cli(bytes)")
    with tempfile.TemporaryDirectory(prefix="sr-fuzz-cli-") as top:
        repo = Path(top)
        (repo / ".git").mkdir()
        d = repo / "agent-output" / "demo"
        d.mkdir(parents=True)
        (d / store.STATE).write_bytes(data)
        if bak is not None:
            (d / store.BAK).write_bytes(bak)
        args = [a.format(state=d / store.STATE, dir=d) for a in cmd]
        proc = run_cli(*args, "--now", "2026-03-03T12:00:00Z", "--root", str(repo), cwd=repo)
        assert proc.returncode in (0, 1, 2), (proc.returncode, proc.stderr)
        assert "SR900" not in proc.stderr and "SR900" not in proc.stdout, proc.stderr
        if "--format" in cmd and cmd[cmd.index("--format") + 1] in ("json", "sarif"):
            json.loads(proc.stdout)
