"""README's Quick start, run as written in a fresh repository (issue 27, must-show 3): its
first command creates the session (`init`), so none of the others meets SR100."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO, run_cli


def quick_start() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Quick start") :]
    start = section.index("```sh\n") + len("```sh\n")
    return section[start : section.index("\n```", start)]


def test_quick_start_begins_with_init() -> None:
    commands = [line for line in quick_start().splitlines() if line.startswith("session-resume ")]
    assert commands[0].startswith("session-resume init "), commands


def test_quick_start_runs_as_written(tmp_path: Path) -> None:
    # the install line is what made `session-resume` available here already
    block = "\n".join(
        line for line in quick_start().splitlines() if not line.startswith("pip install")
    )
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "SESSION_RESUME_SESSION": "",
    }
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "Traceback" not in out and "SR100" not in out and "SR900" not in out, out
    d = tmp_path / "agent-output" / "my-project"
    assert run_cli("validate", str(d), "--strict", cwd=tmp_path).returncode == 0


def test_quick_start_runs_from_a_subdirectory(tmp_path: Path) -> None:
    """The same block from a subdirectory of the repository (the naming rule)."""
    block = "\n".join(
        line for line in quick_start().splitlines() if not line.startswith("pip install")
    )
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "SESSION_RESUME_SESSION": "",
    }
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=tmp_path / "src" / "pkg",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "agent-output" / "my-project" / "00-session-state.json").is_file()
    assert not (tmp_path / "src" / "pkg" / "agent-output").exists()
