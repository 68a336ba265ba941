"""A command a hint or warning names carries the session of the call (or the one a `resume`
answer chose): found by a fresh-agent review, SR717's `decide` hint after `complete --session
S` and SR718's `checkpoint` hint in a resume answer lacked `--session`, so pasting them was
refused as another session's write (SR511)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

from conftest import run_cli

NOW = ("--now", "2026-03-02T12:00:00Z")


def _repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert run_cli("init", "demo", "--session", "s1", *NOW, cwd=tmp_path).returncode == 0
    assert (
        run_cli(
            "session", "start", "--project", "demo", "--session", "s1", *NOW, cwd=tmp_path
        ).returncode
        == 0
    )
    assert (
        run_cli("start", "1", "--project", "demo", "--session", "s1", *NOW, cwd=tmp_path).returncode
        == 0
    )
    return tmp_path


def test_a_write_warnings_commands_name_the_session_and_run_as_printed(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    proc = run_cli(
        "complete", "1", "--project", "demo", "--session", "s1", "--format", "json", *NOW, cwd=repo
    )
    assert proc.returncode == 0, proc.stderr
    warnings = {w["code"]: w for w in json.loads(proc.stdout)["warnings"]}
    hint = warnings["SR717"]["hint"]
    (decide,) = re.findall(r"`(session-resume decide [^`]+)`", hint)
    assert "--session s1" in decide, hint
    argv = [w if w != "VALUE" else "westeurope" for w in shlex.split(decide)][1:]
    done = run_cli(*argv, *NOW, cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_resume_answer_names_its_chosen_session_in_its_hints(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    proc = run_cli(
        "resume",
        "agent-output/demo",
        "--session",
        "s1",
        "--format",
        "json",
        "--now",
        "2026-03-02T12:01:00Z",
        cwd=repo,
    )
    answer = json.loads(proc.stdout)
    assert answer["session"] == {"id": "s1", "new": False}
    for entry in answer["reasons"] + answer["warnings"]:
        for cmd in re.findall(r"`(session-resume [^`]+)`", entry["message"] + entry["hint"]):
            if any(w in cmd.split() for w in ("checkpoint", "decide", "complete", "start")):
                assert "--session s1" in cmd, (entry["code"], cmd)
    for c in answer["commands"]:
        assert "--session s1" in c["run"], c
