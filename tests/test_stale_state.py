"""A state left for more than 7 days (SR708, docs/spec.md §10): the answer says how many
commits since touched the repository outside the session directory, counted read-only ("no
other commit" is a finding too; the commit that added the session files is not one), what to
do when the user cannot be asked now (a `finding add` the plan lists, run as printed), and the
warning survives the resuming session's first write until that finding records it. Both
implementations, through their CLIs, in a real git repository: the same text."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Test tier (README "Test tiers"): runs the JavaScript CLI beside the Python one.
pytestmark = pytest.mark.node

REPO = Path(__file__).resolve().parents[1]
CLI_JS = REPO / "conformance" / "js" / "bin" / "session-resume.mjs"
P = ("--project", "demo")


def _env() -> dict[str, str]:
    return {**os.environ, "SESSION_RESUME_SESSION": "", "USER": "tester"}


def _git(repo: Path, *argv: str, date: str | None = None) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x",
        "GIT_COMMITTER_NAME": "t",
    }
    env["GIT_COMMITTER_EMAIL"] = "t@x"
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    res = subprocess.run(["git", *argv], cwd=repo, capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr
    return res.stdout


def _py(repo: Path, *argv: str) -> str:
    res = subprocess.run(
        [sys.executable, "-m", "session_resume", *argv],
        cwd=repo,
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def _js(repo: Path, *argv: str) -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail("the JavaScript CLI needs node", pytrace=False)
    res = subprocess.run(
        [node, str(CLI_JS), *argv], cwd=repo, capture_output=True, text=True, env=_env()
    )
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def _answer(repo: Path, now: str) -> str:
    argv = ("resume", *P, "--session", "s2", "--now", now)
    py, js = _py(repo, *argv), _js(repo, *argv)
    assert py == js
    return py


def _sr708(text: str) -> str:
    (line,) = [ln for ln in text.splitlines() if ln.startswith("warning SR708")]
    return line


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Step 1 of `demo` worked on 2026-03-02, its files committed then."""
    if shutil.which("git") is None:
        pytest.fail("this test needs git", pytrace=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "app.py").write_text("x\n", encoding="utf-8")
    _git(repo, "add", "app.py")
    _git(repo, "commit", "-qm", "app", date="2026-03-01T00:00:00Z")
    for argv in (
        ("init", "demo", "--session", "s1", "--now", "2026-03-02T10:00:00Z"),
        ("start", "1", *P, "--session", "s1", "--now", "2026-03-02T10:01:00Z"),
        (
            "checkpoint",
            "1",
            "phase_1_discovery",
            *P,
            "--session",
            "s1",
            "--now",
            "2026-03-02T10:02:00Z",
        ),
        ("session", "end", *P, "--session", "s1", "--now", "2026-03-02T10:03:00Z"),
    ):
        _py(repo, *argv)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "session files", date="2026-03-02T10:04:00Z")
    return repo


def test_no_other_commit_is_a_finding_and_git_is_only_read(repo: Path) -> None:
    before = sorted(p.relative_to(repo).as_posix() for p in (repo / ".git").rglob("*"))
    text = _answer(repo, "2026-03-20T10:00:00Z")
    line = _sr708(text)
    assert "17 days before now (2026-03-20T10:00:00Z)" in line, line
    # the commit that added the session files is inside the session directory: not counted
    assert "git shows no other commit since then outside agent-output/demo" in line, line
    after = sorted(p.relative_to(repo).as_posix() for p in (repo / ".git").rglob("*"))
    assert after == before  # read-only: no index refresh, no lock


def test_the_stale_warning_survives_the_first_write_until_recorded(repo: Path) -> None:
    (repo / "app.py").write_text("y\n", encoding="utf-8")
    _git(repo, "commit", "-qam", "app moved on", date="2026-03-10T00:00:00Z")
    text = _answer(repo, "2026-03-20T10:00:00Z")
    line = _sr708(text)
    assert "git shows 1 commit since then outside agent-output/demo" in line, line
    assert "if the user cannot be asked now, continue, and run the command below" in line, line
    runs = [ln.split("] ", 1) for ln in text.splitlines() if ln[:1].isdigit()]
    first, finding = runs[0][1], runs[1]
    assert " session start " in first
    assert finding[0].endswith("[only if the user cannot be asked now (warning SR708); then go on")
    assert finding[1].startswith("session-resume finding add ")
    # the user is away: the agent starts its session and records its first checkpoint
    _py(repo, *shlex.split(first)[1:], "--now", "2026-03-20T10:01:00Z")
    _py(
        repo,
        "checkpoint",
        "1",
        "phase_2_workload",
        *P,
        "--session",
        "s2",
        "--now",
        "2026-03-20T10:05:00Z",
    )
    text = _answer(repo, "2026-03-20T10:06:00Z")
    line = _sr708(text)  # still there, measured up to the resumption
    assert "18 days before this session resumed it at 2026-03-20T10:05:00Z" in line, line
    (again,) = [
        ln.split("] ", 1)[1] for ln in text.splitlines() if "finding add" in ln and ln[:1].isdigit()
    ]
    _py(repo, *shlex.split(again)[1:], "--now", "2026-03-20T10:07:00Z")
    text = _answer(repo, "2026-03-20T10:08:00Z")
    assert "SR708" not in text
    assert "open finding: Resumed after 18 days idle (last work 2026-03-02T10:02:00Z)" in text
