"""`recover` repairs a session; it never creates one where none is. A directory that holds no
state file and no `.bak` and is not under the session root (the repository root, a source
folder, a typing error) is refused with SR101 and nothing is written; a session directory
under the session root whose state was lost is still recreated. No hint suggests such a
command: the hint of a document piped on standard input names no directory."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import run_cli

NOW = ("--now", "2026-11-22T12:00:00Z")


def _listing(root: Path) -> list[str]:
    return sorted(
        os.path.relpath(os.path.join(d, f), root)
        for d, dirs, files in os.walk(root)
        if ".git" not in Path(d).relative_to(root).parts
        for f in [*files, *(x + "/" for x in dirs if x != ".git")]
    )


def test_recover_refuses_a_directory_that_is_no_session(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "src").mkdir()
    before = _listing(tmp_path)
    for where, argv in (
        (tmp_path, ["recover", "."]),
        (tmp_path, ["recover", "src"]),
        (tmp_path / "src", ["recover", "."]),
        (tmp_path, ["recover", "src", "--format", "json"]),
    ):
        proc = run_cli(*argv, *NOW, cwd=where)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "SR101" in proc.stdout + proc.stderr and "nothing was written" in proc.stderr
        assert "session-resume recover" not in proc.stdout + proc.stderr
    assert _listing(tmp_path) == before


def test_recover_still_recreates_a_lost_state_under_the_session_root(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "agent-output" / "lost").mkdir(parents=True)
    proc = run_cli("recover", "agent-output/lost", *NOW, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "created a fresh state" in proc.stdout
    assert (tmp_path / "agent-output" / "lost" / "00-session-state.json").is_file()


def test_recover_outside_the_session_root_with_a_bak(tmp_path: Path) -> None:
    """A directory elsewhere that holds a `.bak` is a session to repair: recovered."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert run_cli("init", "p", *NOW, cwd=tmp_path).returncode == 0
    d = tmp_path / "elsewhere"
    d.mkdir()
    good = tmp_path / "agent-output" / "p" / "00-session-state.json"
    (d / "00-session-state.json.bak").write_bytes(good.read_bytes())
    proc = run_cli("recover", "elsewhere", *NOW, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "restored 00-session-state.json from .bak" in proc.stdout


def test_a_piped_document_hint_names_no_directory(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    proc = run_cli("validate", "-", cwd=tmp_path, input=b"{")
    assert proc.returncode == 1 and "SR120" in proc.stdout
    assert "recover ." not in proc.stdout and "`session-resume recover DIR`" in proc.stdout
