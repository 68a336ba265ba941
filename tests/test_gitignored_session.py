""".gitignore applies to the search of a directory only: a session directory named
explicitly is validated whatever `.gitignore` says (it was "SR101 no 00-session-state.json
under this directory" though the file was there, and `resume` and the writes used it), and a
search that leaves ignored state files out says how many, and the command that checks one."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, run_cli

NOW = ("--now", "2026-11-22T12:00:00Z")


@pytest.fixture
def ignored(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for name in ("p", "q"):
        assert run_cli("init", name, *NOW, cwd=tmp_path).returncode == 0
    (tmp_path / ".gitignore").write_text("agent-output/\n")
    return tmp_path


def test_a_named_session_directory_is_validated(ignored: Path) -> None:
    for target in ("agent-output/p", "agent-output/p/"):
        proc = run_cli("validate", target, *NOW, cwd=ignored)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "1 valid" in proc.stdout and "SR101" not in proc.stdout
    proc = run_cli("validate", "p", *NOW, cwd=ignored / "agent-output")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_search_says_how_many_it_skipped(ignored: Path) -> None:
    for argv in (["validate", "agent-output"], ["validate"]):
        proc = run_cli(*argv, *NOW, cwd=ignored)
        assert "note: 2 git-ignored state files not checked" in proc.stderr, proc.stderr
        assert "`session-resume validate agent-output/p`" in proc.stderr
        # the note's command runs as printed
        cmd = proc.stderr.split("`session-resume ")[1].split("`")[0].split()
        assert run_cli(*cmd, *NOW, cwd=ignored).returncode == 0
    proc = run_cli("validate", "agent-output", "-q", *NOW, cwd=ignored)
    assert "note:" not in proc.stderr


def test_nothing_skipped_no_note(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert run_cli("init", "p", *NOW, cwd=tmp_path).returncode == 0
    proc = run_cli("validate", "agent-output", *NOW, cwd=tmp_path)
    assert proc.returncode == 0 and "note:" not in proc.stderr


@pytest.mark.node
def test_the_javascript_cli_agrees(ignored: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed (the node tier needs Node.js >= 20)")
    js = REPO / "conformance" / "js" / "bin" / "session-resume.mjs"
    py = run_cli("validate", "agent-output/p", *NOW, cwd=ignored)
    proc = subprocess.run(
        [node, str(js), "validate", "agent-output/p", *NOW],
        cwd=ignored,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (proc.returncode, proc.stdout) == (py.returncode, py.stdout)
