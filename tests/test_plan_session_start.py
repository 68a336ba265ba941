"""The plan's first command takes the lease whenever the caller does not hold it live (second
fresh-agent review: after its lease went stale, an agent asking with its own `--session` got
no `session start`, and the skill says the first command takes the session)."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from conftest import run_cli

NOW = ("--now", "2026-03-02T12:00:00Z")
LATER = ("--now", "2026-03-02T12:01:00Z")
S = ("--project", "demo", "--session", "s1")


def _runs(tmp_path: Path, *argv: str, now: tuple[str, str] = NOW) -> list[str]:
    proc = run_cli("resume", "agent-output/demo", *argv, "--format", "json", *now, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return [c["run"] for c in json.loads(proc.stdout)["commands"]]


def test_a_named_session_without_a_live_lease_is_started_first(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for argv in (["init", "demo"], ["session", "start", *S], ["start", "1", *S]):
        assert run_cli(*argv, *NOW, cwd=tmp_path).returncode == 0, argv
    start = "session-resume session start --project demo --session s1"
    # it holds the lease live: no session start, the step's work first
    assert _runs(tmp_path, "--session", "s1")[0].startswith("session-resume checkpoint 1 ")
    assert run_cli("session", "end", *S, *NOW, cwd=tmp_path).returncode == 0
    runs = _runs(tmp_path, "--session", "s1")
    assert runs[0] == start  # its lease ended: the first command takes it again
    assert runs[1] == "session-resume start 1 --project demo --session s1"  # restart_step
    proc = run_cli(*shlex.split(runs[0])[1:], *LATER, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert _runs(tmp_path, "--session", "s1", now=LATER)[0] != start  # held again
