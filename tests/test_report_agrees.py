"""`report` agrees with the state it lists and with `resume` (issue 26 point 11): its header
names the step's recorded checkpoint (or that the step has not started), its last events say
what the worklog recorded, and its recommended commands are `resume`'s for the same call.

Every command runs the real CLI in a subprocess."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

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


def test_a_pending_step_is_not_started_and_its_skip_is_offered(tmp_path: Path) -> None:
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
    skip = [ln for ln in text.splitlines() if ln.startswith("  instead, ") and " skip 3 " in ln]
    assert len(skip) == 1, text


def test_last_events_say_what_findings_and_decisions_recorded(tmp_path: Path) -> None:
    repo = _held(tmp_path)
    text = _ok(repo, T0, "report", "agent-output/demo", "--session", "chat-1").stdout
    events = text.split("last events:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert any(e.endswith(' finding_add title="No RTO stated"') for e in events), events
    assert any(e.endswith(" decision key=region value=swedencentral") for e in events), events
    assert any(e.endswith(" checkpoint 1 phase_1_discovery") for e in events), events


def _recommended(answer: dict[str, Any]) -> list[dict[str, str]]:
    """The commands with the answer's own session id (chosen anew on each call) as ``ID``."""
    sid = answer["session"]["id"]
    return [
        {"run": c["run"].replace(sid, "ID") if sid else c["run"], "when": c["when"]}
        for c in answer["commands"] + answer["alternatives"]
    ]


def test_session_active_commands_are_resumes_for_the_same_call(tmp_path: Path) -> None:
    repo = _held(tmp_path)
    t = T0 + timedelta(minutes=1)
    for named in ((), ("--session", "chat-2")):
        for fmt in ("json", "text"):
            argv = ("agent-output/demo", *named, "--format", fmt)
            rep = _ok(repo, t, "report", *argv).stdout
            ans = _ok(repo, t, "resume", *argv).stdout
            if fmt == "text":
                # the text forms list the same command lines, in the same order
                runs = [ln.split("] ", 1)[1] for ln in rep.splitlines() if ln.startswith("  [")]
                want = [
                    ln.split("] ", 1)[1]
                    for ln in ans.splitlines()
                    if ln[:1].isdigit() and ". [" in ln
                ]
                if not named:  # each call chooses its own new id
                    runs = [r.rsplit(" --session ", 1)[0] for r in runs]
                    want = [r.rsplit(" --session ", 1)[0] for r in want]
                assert runs == want and len(runs) == 3
                continue
            report, resume = json.loads(rep)["recommended"], json.loads(ans)
            assert report["action"] == resume["action"] == "session_active"
            assert _recommended(report) == _recommended(resume)
            wait = report["commands"][1]["run"]
            assert wait.endswith(f" --session {report['session']['id']} --format json"), wait
