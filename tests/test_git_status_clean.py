"""After a session, `git status` shows only the files meant to be committed (docs/spec.md §1,
"What is committed"): the state, the worklog, the handoff and the deliverables. The lock, the
lease, the `.bak`, temp files and kept corrupt copies are this machine's, kept out by the
`.gitignore` the session's creation writes; and a lease names its owner even where the shell
sets no `$USER` (§7). Both implementations, through their CLIs, in a real git repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from session_resume.core.lease import hostname

# Test tier (README "Test tiers"): runs the JavaScript CLI beside the Python one.
pytestmark = pytest.mark.node

REPO = Path(__file__).resolve().parents[1]
CLI_JS = REPO / "conformance" / "js" / "bin" / "session-resume.mjs"
P = ("--project", "demo", "--session", "s1")
COMMITTED = {
    "agent-output/demo/.gitignore",
    "agent-output/demo/00-session-state.json",
    "agent-output/demo/00-worklog.jsonl",
    "agent-output/demo/01-requirements.md",
}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("USER", "USERNAME", "LOGNAME")}
    env["SESSION_RESUME_SESSION"] = ""
    return env


def _cli(kind: str) -> list[str]:
    if kind == "python":
        return [sys.executable, "-m", "session_resume"]
    node = shutil.which("node")
    if node is None:
        pytest.fail("the JavaScript CLI needs node", pytrace=False)
    return [node, str(CLI_JS)]


def _git(repo: Path, *argv: str) -> str:
    out = subprocess.run(["git", *argv], cwd=repo, capture_output=True, text=True, check=True)
    return out.stdout


@pytest.mark.parametrize("kind", ["python", "js"])
def test_git_status_after_a_session_shows_only_committed_files(kind: str, tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.fail("this test needs git", pytrace=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        res = subprocess.run(
            [*_cli(kind), *argv], cwd=repo, capture_output=True, text=True, env=_env()
        )
        assert res.returncode == 0, res.stdout + res.stderr
        return res

    run("init", "demo", "--session", "s1")
    d = repo / "agent-output" / "demo"
    lease = json.loads((d / "00-session.active").read_text(encoding="utf-8"))
    # no $USER, $USERNAME or $LOGNAME: the account's number on this host, never "unknown"
    assert lease["owner"] == f"uid {os.getuid()}@{hostname()}", lease
    run("start", "1", *P)
    (d / "01-requirements.md").write_text("# Requirements (draft)\n", encoding="utf-8")
    run("checkpoint", "1", "phase_1_discovery", *P)  # a .bak now, and the lock
    # a crash mid-write: the state cut short, then `recover` keeps the corrupt copy
    (d / "00-session-state.json").write_bytes(b'{"schema_version": "3.0", "pro')
    run("recover", "agent-output/demo")
    (d / ".00-session-state.json.abc123.tmp").write_bytes(b"{")  # an interrupted write's temp
    if kind == "python":
        run("session", "end", *P)
    names = {p.name for p in d.iterdir()}
    assert {"00-session-state.json.bak", "00-session-state.json.lock"} <= names, names
    assert any(n.startswith("00-session-state.json.corrupt-") for n in names), names
    status = _git(repo, "status", "--porcelain", "-uall").splitlines()
    assert {line[3:] for line in status} == COMMITTED, status
    assert all(line.startswith("?? ") for line in status), status


def test_an_existing_gitignore_is_never_replaced(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    d = repo / "agent-output" / "demo"
    d.mkdir(parents=True)
    (repo / ".git").mkdir()
    (d / ".gitignore").write_text("mine\n", encoding="utf-8")
    res = subprocess.run(
        [*_cli("python"), "init", "demo"], cwd=repo, capture_output=True, text=True, env=_env()
    )
    assert res.returncode == 0, res.stderr
    assert (d / ".gitignore").read_text(encoding="utf-8") == "mine\n"
