"""README's Quick start, run as written in a fresh repository (issue 27, must-show 3): its
first command creates the session (`init`), so none of the others meets SR100."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import REPO, run_cli


def quick_start() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Quick start") :]
    start = section.index("```sh\n") + len("```sh\n")
    return section[start : section.index("\n```", start)]


def without_install(block: str) -> str:
    """The block without its install lines (the venv and pip: what made `session-resume`
    available here already)."""
    lines = block.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("session-resume "))
    install = lines[:first]
    assert any(line.startswith("pip install") for line in install), install
    return "\n".join(lines[first:])


def test_quick_start_installs_from_the_repository() -> None:
    """No release is on PyPI yet: the install line names the repository (its git URL) or a
    checkout, inside a virtual environment (a system Python may be externally managed)."""
    install = quick_start().split("\nsession-resume ")[0]
    assert "python3 -m venv" in install
    pips = [line for line in install.splitlines() if line.startswith("pip install")]
    assert pips and all("git+https://" in p or "/path/to/" in p for p in pips), pips
    assert "pip install ." not in install


def test_quick_start_begins_with_init() -> None:
    commands = [line for line in quick_start().splitlines() if line.startswith("session-resume ")]
    assert commands[0].startswith("session-resume init "), commands


def test_quick_start_runs_as_written(tmp_path: Path) -> None:
    block = without_install(quick_start())
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
    # every code the block prints is one the Quick start explains (one story: no surprise)
    text = (REPO / "README.md").read_text(encoding="utf-8")
    quick = text[text.index("## Quick start") : text.index("### An agent's life cycle")]
    printed = set(re.findall(r"\b(SR\d{3}) (?:warning|error)\b", out))
    assert printed == {"SR716", "SR717"}, printed
    assert all(quick.count(code) >= 2 for code in printed), "explain each code printed"
    assert "SR511" not in out  # the implicit lease: no refusal of the user's own writes
    d = tmp_path / "agent-output" / "my-project"
    assert run_cli("validate", str(d), "--strict", cwd=tmp_path).returncode == 0


def test_quick_start_runs_from_a_subdirectory(tmp_path: Path) -> None:
    """The same block from a subdirectory of the repository (the naming rule)."""
    block = without_install(quick_start())
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
