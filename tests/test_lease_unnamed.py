"""A command that names no session never acts as an explicit session that holds a live lease
(issue 26 points 2 and 6, issue 27 point 5; docs/spec.md §7): a write, `session end` and
`ping` without `--session` are refused (SR511) while `session start` (or a write naming its
session) holds the lease, and leave the lease, its heartbeat, the state and the worklog as
they were; the refusal names the holder, when its lease goes stale, and commands that run as
printed. Only an implicit lease (taken by writes naming no session) is anybody's.

Every command runs the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from session_resume.core.lease import hostname

from conftest import run_cli

# Test tier (README "Test tiers"): many CLI processes.
pytestmark = pytest.mark.slow

T0 = datetime(2026, 3, 2, 11, 0, tzinfo=UTC)
P = ("--project", "demo")
HOLDER = "chat-1"


def _ts(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _cli(repo: Path, t: datetime, *argv: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*argv, "--now", _ts(t), cwd=repo, env={"SESSION_RESUME_SESSION": ""})


def _ok(repo: Path, t: datetime, *argv: str) -> subprocess.CompletedProcess[str]:
    res = _cli(repo, t, *argv)
    assert res.returncode == 0, res.stdout + res.stderr
    return res


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


def _quoted_commands(text: str) -> list[str]:
    return [c for c in text.split("`") if c.startswith("session-resume ")]


@pytest.fixture
def held(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose session `demo` is held by the live explicit session chat-1, which
    started step 1 (the lease's heartbeat at T0 + 1 min)."""
    (tmp_path / ".git").mkdir()
    _ok(tmp_path, T0, "init", "demo")
    _ok(tmp_path, T0, "session", "start", *P, "--session", HOLDER)
    _ok(tmp_path, T0 + timedelta(minutes=1), "start", "1", *P, "--session", HOLDER)
    return tmp_path, tmp_path / "agent-output" / "demo"


WRITES = [
    ("checkpoint", "1", "phase_1_discovery"),
    ("decide", "region", "swedencentral"),
    ("start", "1"),
    ("complete", "1"),
    ("finding", "add", "No RTO stated"),
]


@pytest.mark.parametrize("write", WRITES, ids=[w[0] for w in WRITES])
def test_a_write_naming_no_session_is_refused_and_touches_nothing(
    held: tuple[Path, Path], write: tuple[str, ...]
) -> None:
    repo, d = held
    before = _files(d)
    t = T0 + timedelta(minutes=2)
    res = _cli(repo, t, *write, *P)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "SR511" in res.stderr
    # nothing written: the state, the worklog, and the holder's heartbeat (not refreshed)
    assert _files(d) == before
    lease = json.loads((d / "00-session.active").read_text())
    assert lease["session"] == HOLDER and lease["heartbeat"] == _ts(T0 + timedelta(minutes=1))
    # the message names the holder and when its lease goes stale (heartbeat + 300 s)
    assert f"session {HOLDER} (owner " in res.stderr
    assert "300 s" in res.stderr and _ts(T0 + timedelta(minutes=6)) in res.stderr
    commands = _quoted_commands(res.stderr)
    mine = f"session-resume {shlex.join([*write, *P, '--now', _ts(t), '--session', HOLDER])}"
    assert mine in commands, res.stderr  # the same command, naming the session
    takeover = [c for c in commands if "--takeover" in c]
    assert takeover == ["session-resume session start --takeover --project demo"], res.stderr
    assert "only with the user's consent" in res.stderr
    # each runs as printed: the takeover is only checked (--help), the own write is run
    check = _cli(repo, t, *shlex.split(takeover[0])[1:], "--help")
    assert check.returncode == 0, check.stderr
    if write[0] != "complete":  # step 1 has checkpoints left: `complete` is refused for that
        again = subprocess.run(
            [sys.executable, "-m", "session_resume", *shlex.split(mine)[1:]],
            cwd=repo,
            capture_output=True,
            text=True,
            env={**os.environ, "SESSION_RESUME_SESSION": ""},
        )
        assert again.returncode == 0, again.stdout + again.stderr
        assert f"session {HOLDER}" in again.stdout


def test_the_refusal_in_json_carries_the_same_commands(held: tuple[Path, Path]) -> None:
    repo, d = held
    res = _cli(repo, T0 + timedelta(minutes=2), "decide", "region", "x", *P, "--format", "json")
    assert res.returncode == 1
    out = json.loads(res.stdout)
    assert out["ok"] is False and [x["code"] for x in out["diagnostics"]] == ["SR511"]
    hint = out["diagnostics"][0]["hint"]
    assert f"--session {HOLDER}`" in hint and "--project demo" in hint


def test_the_configured_stale_threshold_is_the_one_named(held: tuple[Path, Path]) -> None:
    repo, d = held
    (repo / ".session-resume.yaml").write_text("stale_after_seconds: 600\n")
    res = _cli(repo, T0 + timedelta(minutes=2), "checkpoint", "1", "phase_1_discovery", *P)
    assert res.returncode == 1 and "SR511" in res.stderr
    assert "600 s" in res.stderr and _ts(T0 + timedelta(minutes=11)) in res.stderr
    ans = json.loads(_ok(repo, T0 + timedelta(minutes=2), "resume", *P, "--format", "json").stdout)
    assert ans["action"] == "session_active"
    reason = ans["reasons"][0]
    assert reason["code"] == "SR511" and "600 s" in reason["message"]
    assert _ts(T0 + timedelta(minutes=11)) in reason["message"]


def test_a_write_naming_the_holder_goes_on_and_refreshes_it(held: tuple[Path, Path]) -> None:
    repo, d = held
    t = T0 + timedelta(minutes=2)
    _ok(repo, t, "checkpoint", "1", "phase_1_discovery", *P, "--session", HOLDER)
    assert json.loads((d / "00-session.active").read_text())["heartbeat"] == _ts(t)


def test_session_end_naming_no_session_leaves_a_live_session_alone(
    held: tuple[Path, Path],
) -> None:
    repo, d = held
    before = _files(d)
    t = T0 + timedelta(minutes=2)
    res = _cli(repo, t, "session", "end", *P)
    assert res.returncode == 1 and "SR511" in res.stderr, res.stdout + res.stderr
    assert _files(d) == before  # the lease stays; no session_end logged
    mine = f"session-resume session end --project demo --now {_ts(t)} --session {HOLDER}"
    assert mine in _quoted_commands(res.stderr), res.stderr
    _ok(repo, t, *shlex.split(mine)[1:])  # as printed: the holder ends its own session
    assert not (d / "00-session.active").exists()
    last = json.loads((d / "00-worklog.jsonl").read_text().splitlines()[-1])
    assert (last["event"], last["session"]) == ("session_end", HOLDER)


def test_ping_naming_no_session_refreshes_no_explicit_session(held: tuple[Path, Path]) -> None:
    repo, d = held
    before = _files(d)
    res = _cli(repo, T0 + timedelta(minutes=2), "ping", *P)
    assert res.returncode == 1 and "SR511" in res.stderr, res.stdout + res.stderr
    assert _files(d) == before


def test_another_named_session_is_refused_with_its_own_takeover(held: tuple[Path, Path]) -> None:
    repo, d = held
    res = _cli(repo, T0 + timedelta(minutes=2), "start", "1", *P, "--session", "chat-2")
    assert res.returncode == 1 and "SR511" in res.stderr
    takeover = [c for c in _quoted_commands(res.stderr) if "--takeover" in c]
    assert takeover == ["session-resume session start --takeover --session chat-2 --project demo"]


def test_an_implicit_lease_is_anybodys(tmp_path: Path) -> None:
    """Writes naming no session share the implicit lease, and `session end` without
    `--session` ends it (issue 27 point 5)."""
    (tmp_path / ".git").mkdir()
    d = tmp_path / "agent-output" / "demo"
    _ok(tmp_path, T0, "init", "demo")
    _ok(tmp_path, T0 + timedelta(minutes=1), "start", "1", *P)
    _ok(tmp_path, T0 + timedelta(minutes=2), "checkpoint", "1", "phase_1_discovery", *P)
    lease = json.loads((d / "00-session.active").read_text())
    assert lease["implicit"] is True and lease["heartbeat"] == _ts(T0 + timedelta(minutes=2))
    _ok(tmp_path, T0 + timedelta(minutes=3), "ping", *P)
    _ok(tmp_path, T0 + timedelta(minutes=3), "session", "end", *P)
    assert not (d / "00-session.active").exists()


def _no_user_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("USER", "USERNAME")}
    env["SESSION_RESUME_SESSION"] = ""
    return env


def test_session_start_with_a_pid_records_who_owns_it(tmp_path: Path) -> None:
    """Without --owner and $USER, the owner of a session started with --pid is that
    process on this host (not "unknown"); report and resume show it."""
    (tmp_path / ".git").mkdir()
    _ok(tmp_path, T0, "init", "demo")
    pid = os.getpid()

    def cli(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "session_resume", *argv, "--now", _ts(T0)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=_no_user_env(),
        )

    res = cli("session", "start", *P, "--pid", str(pid))
    assert res.returncode == 0, res.stderr
    owner = f"pid {pid}@{hostname()}"
    lease = json.loads((tmp_path / "agent-output" / "demo" / "00-session.active").read_text())
    assert (lease["owner"], lease["pid"], lease["host"]) == (owner, pid, hostname())
    report = cli("report", *P)
    assert report.returncode == 0 and f"owner {owner}" in report.stdout, report.stdout
    resume = cli("resume", *P)
    assert resume.returncode == 0 and f"owner {owner}" in resume.stdout, resume.stdout
    # an --owner given is kept as given
    res = cli(
        "session",
        "start",
        *P,
        "--pid",
        str(pid),
        "--owner",
        "alice",
        "--session",
        res.stdout.strip(),
    )
    assert res.returncode == 0, res.stderr
    got: dict[str, Any] = json.loads(
        (tmp_path / "agent-output" / "demo" / "00-session.active").read_text()
    )
    assert got["owner"] == "alice"


def test_the_hook_denying_a_lease_edit_names_commands_that_run(held: tuple[Path, Path]) -> None:
    """An agent host's hook denies a hand edit of 00-session.active and says how to take and
    release the lease: both commands run as printed (they were usage errors: a positional
    directory), and the release names the live explicit session."""
    repo, d = held
    doc = {
        "session_id": "s",
        "cwd": str(repo),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "echo {} > agent-output/demo/00-session.active"},
    }
    res = run_cli("hook", "pre-tool-use", input=json.dumps(doc).encode(), cwd=repo)
    assert res.returncode == 0, res.stderr
    reason = json.loads(res.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    commands = _quoted_commands(reason)
    assert commands == [
        "session-resume session start --session-dir agent-output/demo",
        f"session-resume session end --session-dir agent-output/demo --session {HOLDER}",
    ], reason
    assert _cli(repo, T0, *shlex.split(commands[0])[1:], "--help").returncode == 0
    _ok(repo, T0 + timedelta(minutes=2), *shlex.split(commands[1])[1:])
    assert not (d / "00-session.active").exists()
