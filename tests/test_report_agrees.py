"""`report` agrees with the state it lists (issue 26 point 11): its header names the step's
recorded checkpoint (or that the step has not started), and its last events say what the
worklog recorded.

Every command runs the real CLI in a subprocess."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

from session_resume.storage import store

from conftest import apex_state, dump, run_cli

T0 = datetime(2026, 3, 2, 11, 0, tzinfo=UTC)
P = ("--project", "demo")


def _ts(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _ok(repo: Path, t: datetime, *argv: str) -> subprocess.CompletedProcess[str]:
    res = run_cli(*argv, "--now", _ts(t), cwd=repo, env={"SESSION_RESUME_SESSION": ""})
    assert res.returncode == 0, res.stdout + res.stderr
    return res


def _held(tmp_path: Path) -> Path:
    """Session `demo` held live by chat-1, step 1 at phase_1_discovery, with a finding and a
    decision recorded."""
    (tmp_path / ".git").mkdir()
    _ok(tmp_path, T0, "init", "demo")
    _ok(tmp_path, T0, "session", "start", *P, "--session", "chat-1")
    for argv in (
        ("start", "1"),
        ("checkpoint", "1", "phase_1_discovery"),
        ("finding", "add", "No RTO stated"),
        ("decide", "region", "swedencentral"),
    ):
        _ok(tmp_path, T0, *argv, *P, "--session", "chat-1")
    return tmp_path


def _header(text: str) -> str:
    return next(ln for ln in text.splitlines() if ln.startswith("step: "))


def test_session_active_header_names_the_recorded_checkpoint(tmp_path: Path) -> None:
    repo = _held(tmp_path)
    text = _ok(repo, T0 + timedelta(minutes=1), "report", "agent-output/demo").stdout
    assert "recommended: session_active" in text
    assert "1  in_progress Requirements at phase_1_discovery" in text
    assert _header(text) == "step: 1 (Requirements)    checkpoint: phase_1_discovery"
    rep = json.loads(_ok(repo, T0, "report", "agent-output/demo", "--format", "json").stdout)
    assert rep["current_step"] == "1" and rep["sub_step"] == "phase_1_discovery"


def test_a_pending_step_is_not_started(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    d = tmp_path / "agent-output" / "demo"
    d.mkdir(parents=True)
    doc = apex_state()
    doc["steps"]["2"].update(status="complete", sub_step=None, completed="2026-03-02T11:00:00Z")
    (d / store.STATE).write_bytes(dump(doc))
    text = _ok(tmp_path, T0 + timedelta(hours=1), "report", "agent-output/demo").stdout
    assert "3  pending     Design" in text
    assert _header(text) == "step: 3 (Design)    not started (pending)"
    assert "checkpoint: none recorded yet" not in text


def test_last_events_say_what_findings_and_decisions_recorded(tmp_path: Path) -> None:
    repo = _held(tmp_path)
    text = _ok(repo, T0, "report", "agent-output/demo", "--session", "chat-1").stdout
    events = text.split("last events:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert any(e.endswith(' finding_add title="No RTO stated"') for e in events), events
    assert any(e.endswith(" decision key=region value=swedencentral") for e in events), events
    assert any(e.endswith(" checkpoint 1 phase_1_discovery") for e in events), events
