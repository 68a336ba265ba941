"""Hostile command-line values and sources (issue 25, findings 15, 20 and 24): every one a
coded outcome, nothing outside the repository touched.

Every link planted here points at a decoy tree inside the test's temp directory; the decoy is
hashed before and after.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from conftest import apex_state, dump, run_cli

STATE = "00-session-state.json"
SENTINEL = "00-session.active"
CANARY = "decoy-canary-25c"


def tree_hash(top: Path) -> dict[str, str]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        for n in sorted(dirnames + filenames):
            p = Path(dirpath) / n
            st = os.lstat(p)
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else ""
            out[str(p.relative_to(top))] = f"{stat.S_IFMT(st.st_mode)}:{st.st_mode:o}:{digest}"
    return out


def make_repo(top: Path) -> tuple[Path, Path, Path]:
    repo = top / "repo"
    d = repo / "agent-output" / "demo"
    d.mkdir(parents=True)
    (repo / ".git").mkdir()
    (d / STATE).write_bytes(dump(apex_state()))
    decoy = top / "decoy"
    decoy.mkdir()
    (decoy / "file.txt").write_text(CANARY)
    return repo, d, decoy


@pytest.mark.parametrize("pid", ["0", "-1", str(2**31), str(2**64)])
def test_an_owner_pid_out_of_range_is_a_usage_error(tmp_path: Path, pid: str) -> None:
    """Finding 24: `session start --pid 0 | -1 | 2^64` exited 0 and wrote a lease the reader
    then called unreadable (SR510). It is SR183, exit 2, and nothing is written."""
    repo, d, decoy = make_repo(tmp_path)
    before, inside = tree_hash(decoy), tree_hash(repo)
    out = run_cli("session", "start", "--session-dir", str(d), "--root", str(repo), "--pid", pid)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "SR183" in out.stderr and "SR900" not in out.stderr
    assert tree_hash(repo) == inside and tree_hash(decoy) == before
    assert not (d / SENTINEL).exists()
    ok = run_cli("session", "start", "--session-dir", str(d), "--root", str(repo), "--pid", "1")
    assert ok.returncode == 0, ok.stderr
    assert json.loads((d / SENTINEL).read_text())["pid"] == 1
    resume = run_cli("resume", str(d), "--root", str(repo), "--format", "json")
    assert "SR510" not in resume.stdout
