"""Shell completion offers what is on disk: `--project <TAB>` the sessions under the session
root (it completed file names), a STEP the steps of the named session's state and a SUB_STEP
the checkpoints of that step in its workflow. The completers are called as argcomplete calls
them, with the arguments parsed so far, and through the shell protocol once."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from session_resume.cli.commands.completion import (
    attach,
    checkpoint_ids,
    project_names,
    step_keys,
)
from session_resume.cli.parser import build_parser

from conftest import run_cli

NOW = ("--now", "2026-11-22T12:00:00Z")


def _repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for name in ("shop", "shelf"):
        assert run_cli("init", name, *NOW, cwd=tmp_path).returncode == 0
    (tmp_path / "agent-output" / "not-a-session").mkdir()
    return tmp_path


def test_completers_read_the_sessions_on_disk(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    ns = argparse.Namespace(root=str(root), project=None)
    assert project_names("", ns) == ["shelf", "shop"]
    assert project_names("sho", ns) == ["shop"]
    ns = argparse.Namespace(root=str(root), project="shop", step="1")
    assert step_keys("", ns)[:3] == ["1", "2", "3"]
    assert "phase_1_discovery" in checkpoint_ids("", ns)
    assert checkpoint_ids("phase_2", ns) == ["phase_2_workload"]
    none = argparse.Namespace(root=str(root), project="nope", step="1")
    assert step_keys("", none) == []


def test_every_project_and_step_argument_has_its_completer() -> None:
    parser = build_parser()
    attach(parser)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    start = sub.choices["start"]
    by_dest = {a.dest: a for a in start._actions}
    assert by_dest["project"].completer is project_names  # type: ignore[attr-defined]
    assert by_dest["step"].completer is step_keys  # type: ignore[attr-defined]
    cp = {a.dest: a for a in sub.choices["checkpoint"]._actions}
    assert cp["sub_step"].completer is checkpoint_ids  # type: ignore[attr-defined]


def test_the_shell_protocol_completes_a_project(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    out = tmp_path / "completions"
    line = "session-resume start 1 --project sh"
    env = {
        **os.environ,
        "_ARGCOMPLETE": "1",
        "_ARGCOMPLETE_IFS": "\n",
        "COMP_LINE": line,
        "COMP_POINT": str(len(line)),
        "_ARGCOMPLETE_STDOUT_FILENAME": str(out),
    }
    subprocess.run(
        [sys.executable, "-m", "session_resume"], cwd=root, env=env, timeout=60, check=False
    )
    assert sorted(out.read_text().split()) == ["shelf", "shop"]
