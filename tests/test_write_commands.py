"""The writer commands (the five write moments, transitions, the lease) as a user runs them,
and the pure transitions they are built on."""

from __future__ import annotations

import copy
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from session_resume.core import changes, write_moments
from session_resume.core import lease as lease_rules
from session_resume.core.changes import Change
from session_resume.core.timeutil import format_ts
from session_resume.core.workflow import load_workflow
from session_resume.core.write_moments import TransitionError
from session_resume.services import writes
from session_resume.services.context import WriteContext
from session_resume.services.errors import ServiceError
from session_resume.storage import lease_file as sentinel
from session_resume.storage import store, worklog

from conftest import apex_state, dump, run_cli

# Test tier (README "Test tiers"): many CLI processes.
pytestmark = pytest.mark.slow

APEX = load_workflow("apex")
GENERIC = load_workflow("generic")
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
AFTER_FIXTURE = datetime(2026, 3, 2, 10, 20, tzinfo=UTC)  # after apex_state()'s `updated`


# --- helpers -------------------------------------------------------------------------------


def ts(dt: datetime) -> str:
    return format_ts(dt)


def read_state(d: Path) -> dict[str, Any]:
    return json.loads((d / store.STATE).read_text())


def events(d: Path) -> list[dict[str, Any]]:
    p = d / worklog.WORKLOG
    if not p.exists():
        return []
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]


def lease(d: Path) -> dict[str, Any] | None:
    p = d / sentinel.SENTINEL
    return json.loads(p.read_text()) if p.exists() else None


def sr(
    *args: str, repo: Path, now: datetime, session: str | None = None, fmt: str | None = None
) -> Any:
    """Run the CLI in the repository ``repo`` (env session id ``session``, '' for none)."""
    extra = ["--now", ts(now)]
    if fmt:
        extra += ["--format", fmt]
    return run_cli(
        *args,
        *extra,
        cwd=repo,
        env={"SESSION_RESUME_SESSION": session or "", "USER": "tester"},
    )


def assert_valid(repo: Path, d: Path, now: datetime) -> None:
    res = run_cli("validate", str(d), "--now", ts(now), "--strict", cwd=repo)
    assert res.returncode == 0, res.stdout + res.stderr


def seed(d: Path, doc: dict[str, Any] | None = None) -> dict[str, Any]:
    """Put a valid state (apex_state by default) into ``d`` through the store."""
    res = store.save(d, doc or apex_state(), now=AFTER_FIXTURE)
    return res.document


def put_lease(d: Path, session: str, heartbeat: datetime, pid: int | None = None) -> None:
    sentinel.write(d, lease_rules.make(session, owner="someone", now=heartbeat, pid=pid))


class Life:
    """Drive one session through the CLI, one minute per command."""

    def __init__(self, repo: Path, d: Path, session: str = "agent-1") -> None:
        self.repo, self.d, self.session = repo, d, session
        self.now = T0

    def ok(self, *args: str) -> dict[str, Any]:
        self.now += timedelta(minutes=1)
        where = [] if args[0] == "init" else ["--project", "demo"]
        res = sr(*args, *where, repo=self.repo, now=self.now, session=self.session, fmt="json")
        assert res.returncode == 0, res.stdout + res.stderr
        out: dict[str, Any] = json.loads(res.stdout)
        assert out["ok"] is True
        assert_valid(self.repo, self.d, self.now)
        return out

    def refused(self, *args: str, code: str) -> str:
        self.now += timedelta(minutes=1)
        before = (self.d / store.STATE).read_bytes()
        log_before = events(self.d)
        res = sr(*args, "--project", "demo", repo=self.repo, now=self.now, session=self.session)
        assert res.returncode == 1, res.stdout + res.stderr
        assert code in res.stderr, res.stderr
        assert (self.d / store.STATE).read_bytes() == before
        assert events(self.d) == log_before
        return str(res.stderr)


# --- the whole life cycle ------------------------------------------------------------------


def test_apex_life_cycle(session_dir: Path) -> None:
    repo, d = session_dir.parents[1], session_dir
    life = Life(repo, d)

    # init: the template, revision 1, the session's lease and its start in the worklog
    out = life.ok("init", "demo")
    doc = read_state(d)
    assert doc["revision"] == 1 and out["revision"] == 1
    assert doc["project"] == "demo" and doc["workflow"] == "apex" and doc["current_step"] == 0
    assert list(doc["steps"]) == ["1", "2", "3", "3_5", "4", "5", "6", "7"]
    assert all(s["status"] == "pending" for s in doc["steps"].values())
    log = events(d)
    assert [(e["seq"], e["event"], e["session"]) for e in log] == [(1, "session_start", "agent-1")]
    assert log[0]["detail"] == {"note": "init", "project": "demo", "workflow": "apex"}
    held = lease(d)
    assert held is not None and held["session"] == "agent-1" and held["owner"] == "tester"

    # session start by the same session: the lease is kept, nothing logged
    res = sr("session", "start", "--project", "demo", repo=repo, now=life.now, session="agent-1")
    assert res.returncode == 0 and res.stdout.strip() == "agent-1"
    assert len(events(d)) == 1

    # write moment 1: step start
    out = life.ok("start", "1")
    doc = read_state(d)
    s1 = doc["steps"]["1"]
    assert s1["status"] == "in_progress" and s1["started"] == ts(life.now)
    assert s1["completed"] is None and s1["sub_step"] is None and s1["attempts"] == 1
    assert doc["current_step"] == 1 and doc["revision"] == 2
    assert out["step"]["key"] == "1" and out["step"]["status"] == "in_progress"
    assert events(d)[-1] == out["event"]
    assert out["event"]["event"] == "step_start" and out["event"]["step"] == "1"
    assert out["event"]["seq"] == 2
    assert lease(d)["heartbeat"] == ts(life.now)  # type: ignore[index]

    # write moment 2: checkpoints with artifacts (deduplicated) and context files
    a1, a2 = "agent-output/demo/01-requirements.md", "agent-output/demo/01-notes.md"
    life.ok(
        "checkpoint",
        "1",
        "phase_1_discovery",
        "--artifact",
        a1,
        "--context-file",
        "agent-output/demo/00-session-state.json",
    )
    out = life.ok("checkpoint", "1", "phase_5_artifact", "--artifact", a1, "--artifact", a2)
    s1 = read_state(d)["steps"]["1"]
    assert s1["sub_step"] == "phase_5_artifact"
    assert s1["artifacts"] == [a1, a2]
    assert s1["context_files_used"] == ["agent-output/demo/00-session-state.json"]
    ev = events(d)[-1]
    assert (
        ev["event"] == "checkpoint" and ev["step"] == "1" and ev["sub_step"] == "phase_5_artifact"
    )
    assert ev["detail"]["artifacts"] == [a1, a2]

    # write moment 4: decisions, and the decision log with sequential ids
    life.ok("decide", "region", "swedencentral")
    assert read_state(d)["decisions"]["region"] == "swedencentral"
    assert events(d)[-1]["detail"] == {"key": "region", "value": "swedencentral", "previous": ""}
    life.ok(
        "decide",
        "--log",
        "--title",
        "Hosting",
        "--choice",
        "App Service",
        "--rationale",
        "managed",
        "--step",
        "1",
        "--alternative",
        "AKS",
    )
    out = life.ok(
        "decide",
        "--log",
        "--title",
        "Database",
        "--choice",
        "Azure SQL",
        "--rationale",
        "team knows it",
    )
    dlog = read_state(d)["decision_log"]
    assert [e["id"] for e in dlog] == ["D001", "D002"]
    assert dlog[0] == {
        "id": "D001",
        "title": "Hosting",
        "choice": "App Service",
        "rationale": "managed",
        "step": 1,
        "alternatives": ["AKS"],
        "timestamp": dlog[0]["timestamp"],
    }
    assert out["event"]["detail"]["id"] == "D002"

    # write moment 5: challenger findings
    life.ok("finding", "add", "No disaster recovery plan")
    life.ok("finding", "add", "Budget unclear")
    life.ok("finding", "add", "Budget unclear")  # once only
    assert read_state(d)["open_findings"] == ["No disaster recovery plan", "Budget unclear"]
    assert events(d)[-1]["detail"] == {"title": "Budget unclear", "already_open": True}
    life.ok("finding", "resolve", "Budget unclear")
    assert read_state(d)["open_findings"] == ["No disaster recovery plan"]
    assert events(d)[-1]["event"] == "finding_resolve"
    life.refused("finding", "resolve", "Budget unclear", code="SR710")

    # the orchestrator gate: complete 1 + decision + start 2, one write, one worklog line
    rev, n = read_state(d)["revision"], len(events(d))
    out = life.ok("transition", "--complete", "1", "--start", "2", "--decision", "iac_tool=Bicep")
    doc = read_state(d)
    assert doc["revision"] == rev + 1 and out["revision"] == rev + 1
    assert len(events(d)) == n + 1
    assert doc["steps"]["1"]["status"] == "complete"
    assert doc["steps"]["1"]["completed"] == ts(life.now) and doc["steps"]["1"]["sub_step"] is None
    assert doc["steps"]["2"]["status"] == "in_progress" and doc["current_step"] == 2
    assert doc["decisions"]["iac_tool"] == "Bicep"
    ev = events(d)[-1]
    assert ev["event"] == "step_start" and ev["step"] == "2"
    assert ev["detail"]["completed"] == "1" and ev["detail"]["decisions"] == {"iac_tool": "Bicep"}

    # a legacy checkpoint id is written as its current id; write moment 3: step done
    out = life.ok("checkpoint", "2", "phase_2.5_compacted")
    assert read_state(d)["steps"]["2"]["sub_step"] == "phase_2_waf"
    assert out["event"]["detail"] == {"legacy_id": "phase_2.5_compacted"}
    out = life.ok("complete", "2")
    s2 = read_state(d)["steps"]["2"]
    assert s2["status"] == "complete" and s2["sub_step"] is None
    assert s2["completed"] == ts(life.now)
    assert out["event"]["event"] == "step_complete"

    # the optional Design step is skipped; Governance is not optional
    life.refused("skip", "3_5", "--reason", "no policies", code="SR710")
    out = life.ok("skip", "3", "--reason", "no design documents needed")
    s3 = read_state(d)["steps"]["3"]
    assert s3["status"] == "skipped" and s3["skip_reason"] == "no design documents needed"
    assert out["event"]["event"] == "step_skip"
    assert out["event"]["detail"] == {"reason": "no design documents needed"}
    life.ok("start", "3_5")
    assert read_state(d)["current_step"] == 3

    # the worklog: one line per write, seq 1..n, all from this session
    log = events(d)
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
    assert {e["session"] for e in log} == {"agent-1"}
    assert read_state(d)["revision"] == len(log)  # init + one line per write
    assert worklog.scan(d / worklog.WORKLOG) == []

    # session end: logged, lease removed; ending again is a no-op
    res = sr("session", "end", "--project", "demo", repo=repo, now=life.now, session="agent-1")
    assert res.returncode == 0, res.stderr
    assert events(d)[-1]["event"] == "session_end" and lease(d) is None
    res = sr("session", "end", "--project", "demo", repo=repo, now=life.now, session="agent-1")
    assert res.returncode == 0 and "no active session" in res.stdout


def test_text_output_and_session_dir_option(session_dir: Path) -> None:
    repo = session_dir.parents[1]
    res = sr("init", "demo", "--session-dir", str(session_dir), repo=repo, now=T0)
    assert res.returncode == 0, res.stderr
    assert "initialised" in res.stdout and "revision 1" in res.stdout
    assert "started session" in res.stdout
    res = sr("start", "1", "--session-dir", str(session_dir), repo=repo, now=T0)
    assert res.returncode == 0
    assert "step 1 (Requirements): in_progress (revision 2, session " in res.stdout


# --- refusals ------------------------------------------------------------------------------


def _unchanged_refusal(
    d: Path,
    repo: Path,
    *args: str,
    code: str,
    now: datetime = AFTER_FIXTURE,
    session: str | None = None,
) -> str:
    before = (d / store.STATE).read_bytes() if (d / store.STATE).exists() else None
    log_before = events(d)
    lease_before = lease(d)
    res = sr(*args, "--session-dir", str(d), repo=repo, now=now, session=session)
    assert res.returncode == 1, res.stdout + res.stderr
    assert code in res.stderr, res.stderr
    after = (d / store.STATE).read_bytes() if (d / store.STATE).exists() else None
    assert after == before
    assert events(d) == log_before
    assert lease(d) == lease_before
    return str(res.stderr)


def test_complete_a_pending_step_is_refused(session_dir: Path) -> None:
    seed(session_dir)
    err = _unchanged_refusal(session_dir, session_dir.parents[1], "complete", "3", code="SR710")
    assert "pending" in err and "session-resume start 3" in err


def test_unknown_checkpoint_lists_valid_ids(session_dir: Path) -> None:
    seed(session_dir)
    err = _unchanged_refusal(
        session_dir, session_dir.parents[1], "checkpoint", "2", "phase_9_magic", code="SR710"
    )
    assert "phase_9_magic" in err
    assert "phase_1_prereqs, phase_2_waf, phase_3_cost, phase_4_challenger, phase_5_artifact" in err


def test_unknown_step_is_refused(session_dir: Path) -> None:
    seed(session_dir)
    err = _unchanged_refusal(session_dir, session_dir.parents[1], "start", "9", code="SR711")
    assert "3_5" in err


def test_prerequisites_then_force(session_dir: Path) -> None:
    repo = session_dir.parents[1]
    assert sr("init", "demo", "--session-dir", str(session_dir), repo=repo, now=T0).returncode == 0
    err = _unchanged_refusal(session_dir, repo, "start", "2", code="SR710", now=T0)
    assert "1 (Requirements)" in err and "--force" in err
    res = sr(
        "start", "2", "--force", "--session-dir", str(session_dir), repo=repo, now=T0, fmt="json"
    )
    assert res.returncode == 0, res.stderr
    assert read_state(session_dir)["steps"]["2"]["status"] == "in_progress"
    assert json.loads(res.stdout)["event"]["detail"]["forced"] is True


@pytest.mark.parametrize(
    "data,advice",
    [
        (dump({**apex_state(), "schema_version": "2.0"}), "migrate"),
        (b"", "recover"),
        (b'{"schema_version": "3.0", ', "recover"),
        (dump({**apex_state(), "schema_version": "9.0"}), "newer"),
    ],
    ids=["v2", "zero-bytes", "truncated", "too-new"],
)
def test_writes_to_unwritable_states_are_refused(
    session_dir: Path, data: bytes, advice: str
) -> None:
    (session_dir / store.STATE).write_bytes(data)
    repo = session_dir.parents[1]
    for args in (["start", "2"], ["decide", "region", "x"], ["finding", "add", "t"]):
        err = _unchanged_refusal(session_dir, repo, *args, code="SR161")
        assert advice in err
    assert not (session_dir / sentinel.SENTINEL).exists()


def test_refusal_in_json(session_dir: Path) -> None:
    seed(session_dir)
    res = sr(
        "complete",
        "3",
        "--session-dir",
        str(session_dir),
        repo=session_dir.parents[1],
        now=AFTER_FIXTURE,
        fmt="json",
    )
    assert res.returncode == 1
    out = json.loads(res.stdout)
    assert out["ok"] is False and [d["code"] for d in out["diagnostics"]] == ["SR710"]


def test_init_on_an_existing_state_is_refused(session_dir: Path) -> None:
    seed(session_dir)
    err = _unchanged_refusal(session_dir, session_dir.parents[1], "init", "demo", code="SR710")
    assert "--fresh" in err


def test_init_fresh_archives_and_deletes_nothing(session_dir: Path) -> None:
    repo = session_dir.parents[1]
    d = session_dir
    assert sr("init", "demo", "--session-dir", str(d), repo=repo, now=T0).returncode == 0
    assert sr("start", "1", "--session-dir", str(d), repo=repo, now=T0).returncode == 0
    (d / "00-handoff.md").write_text("# handoff\n")
    (d / "01-requirements.md").write_text("an artifact\n")
    old = {
        n: (d / n).read_bytes() for n in (store.STATE, store.BAK, worklog.WORKLOG, "00-handoff.md")
    }
    later = T0 + timedelta(minutes=5)
    res = sr("init", "demo", "--fresh", "--session-dir", str(d), repo=repo, now=later, fmt="json")
    assert res.returncode == 0, res.stderr
    archives = list((d / ".archive").iterdir())
    assert [a.name for a in archives] == ["20260302T090500Z_demo"]
    for name, data in old.items():
        assert (archives[0] / name).read_bytes() == data
    assert (d / "01-requirements.md").read_text() == "an artifact\n"  # artifacts stay
    doc = read_state(d)
    assert doc["revision"] == 1 and all(s["status"] == "pending" for s in doc["steps"].values())
    log = events(d)
    assert [e["event"] for e in log] == ["session_start"]
    assert (
        log[0]["seq"] == 1 and log[0]["detail"]["archived_to"] == ".archive/20260302T090500Z_demo"
    )
    assert not (d / store.BAK).exists() and not (d / "00-handoff.md").exists()
    assert_valid(repo, d, later)


def test_init_fresh_keeps_as_many_archives_as_the_config_says(session_dir: Path) -> None:
    # docs/config.md: `archive_keep` is how many archives `archive` and `init --fresh` keep
    repo = session_dir.parents[1]
    (repo / ".session-resume.yaml").write_text("archive_keep: 2\n")
    d = session_dir
    assert sr("init", "demo", "--session-dir", str(d), repo=repo, now=T0).returncode == 0
    for minutes in (1, 2, 3, 4):
        at = T0 + timedelta(minutes=minutes)
        res = sr("init", "demo", "--fresh", "--session-dir", str(d), repo=repo, now=at)
        assert res.returncode == 0, res.stderr
    names = sorted(a.name for a in (d / ".archive").iterdir())
    assert names == ["20260302T090300Z_demo", "20260302T090400Z_demo"]


@pytest.mark.parametrize(
    "path,code", [("../../etc/passwd", "SR311"), ("/etc/passwd", "SR310"), ("a\nb.md", "SR312")]
)
def test_unsafe_artifact_paths_are_refused(session_dir: Path, path: str, code: str) -> None:
    seed(session_dir)
    _unchanged_refusal(
        session_dir,
        session_dir.parents[1],
        "checkpoint",
        "2",
        "phase_3_cost",
        "--artifact",
        path,
        code=code,
    )


def test_usage_errors_exit_2(session_dir: Path) -> None:
    seed(session_dir)
    repo = session_dir.parents[1]
    for args in (
        ["decide", "region"],
        ["decide", "--log", "--title", "t"],
        ["transition", "--complete", "2", "--start", "3", "--decision", "novalue"],
    ):
        res = sr(*args, "--session-dir", str(session_dir), repo=repo, now=AFTER_FIXTURE)
        assert res.returncode == 2, (args, res.stderr)
    assert sr("complete", "2", repo=repo, now=AFTER_FIXTURE).returncode == 2  # no session dir
    res = sr("start", "1", "--project", "../evil", repo=repo, now=AFTER_FIXTURE)
    assert res.returncode == 2


def test_decision_enum_is_checked(session_dir: Path) -> None:
    seed(session_dir)
    err = _unchanged_refusal(
        session_dir, session_dir.parents[1], "decide", "iac_tool", "Pulumi", code="SR420"
    )
    assert "'Bicep'" in err


# --- the lease -----------------------------------------------------------------------------


def test_second_session_start_and_takeover(session_dir: Path) -> None:
    repo, d = session_dir.parents[1], session_dir
    res = sr("session", "start", "--session-dir", str(d), repo=repo, now=T0)
    assert res.returncode == 0, res.stderr
    first = res.stdout.strip()
    assert lease(d)["session"] == first  # type: ignore[index]
    assert [e["event"] for e in events(d)] == ["session_start"]

    res = sr("session", "start", "--session-dir", str(d), repo=repo, now=T0 + timedelta(minutes=1))
    assert res.returncode == 1 and "SR511" in res.stderr and first in res.stderr
    assert lease(d)["session"] == first  # type: ignore[index]

    res = sr(
        "session",
        "start",
        "--takeover",
        "--owner",
        "bob",
        "--session-dir",
        str(d),
        repo=repo,
        now=T0 + timedelta(minutes=2),
        fmt="json",
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    second = out["session"]
    assert second != first and out["action"] == "takeover" and out["previous_session"] == first
    held = lease(d)
    assert held is not None and held["session"] == second and held["owner"] == "bob"
    ev = events(d)[-1]
    assert ev["event"] == "takeover" and ev["session"] == second
    assert ev["detail"]["previous"] == first and ev["detail"]["orphaned"] is False


def test_write_as_another_session_against_a_live_lease(session_dir: Path) -> None:
    seed(session_dir)
    put_lease(session_dir, "agent-1", AFTER_FIXTURE)
    err = _unchanged_refusal(
        session_dir,
        session_dir.parents[1],
        "decide",
        "region",
        "westeurope",
        code="SR511",
        session="agent-2",
    )
    assert "agent-1" in err
    # the holder itself may write, and its heartbeat is refreshed
    later = AFTER_FIXTURE + timedelta(minutes=1)
    res = sr(
        "decide",
        "region",
        "westeurope",
        "--session-dir",
        str(session_dir),
        repo=session_dir.parents[1],
        now=later,
        session="agent-1",
    )
    assert res.returncode == 0, res.stderr
    assert lease(session_dir)["heartbeat"] == ts(later)  # type: ignore[index]
    assert events(session_dir)[-1]["session"] == "agent-1"


def test_orphaned_session_restart_counts_an_attempt(session_dir: Path) -> None:
    repo, d = session_dir.parents[1], session_dir
    seed(d)  # step 2 in progress at phase_2_waf, no attempts recorded (= 1)
    put_lease(d, "crashed", AFTER_FIXTURE)
    later = AFTER_FIXTURE + timedelta(hours=2)
    res = sr("start", "2", "--session-dir", str(d), repo=repo, now=later, fmt="json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    s2 = read_state(d)["steps"]["2"]
    assert s2["attempts"] == 2 and s2["status"] == "in_progress" and s2["sub_step"] is None
    assert s2["started"] == ts(later)
    log = events(d)
    assert [e["event"] for e in log[-2:]] == ["takeover", "step_start"]
    assert log[-2]["detail"]["previous"] == "crashed" and log[-2]["detail"]["orphaned"] is True
    assert log[-2]["detail"]["reason"] == "stale"
    assert log[-1]["detail"]["orphaned"] is True and log[-1]["detail"]["restart"] is True
    new_session = out["session"]
    assert new_session != "crashed" and log[-1]["session"] == new_session
    assert lease(d)["session"] == new_session  # type: ignore[index]
    assert out["lease"] == "takeover" and out["previous_session"] == "crashed"
    assert_valid(repo, d, later)


def test_restart_by_the_live_session_is_not_an_attempt(session_dir: Path) -> None:
    repo, d = session_dir.parents[1], session_dir
    seed(d)
    put_lease(d, "agent-1", AFTER_FIXTURE)
    res = sr(
        "start",
        "2",
        "--session-dir",
        str(d),
        repo=repo,
        now=AFTER_FIXTURE + timedelta(minutes=1),
        session="agent-1",
        fmt="json",
    )
    assert res.returncode == 0, res.stderr
    assert "attempts" not in read_state(d)["steps"]["2"]
    assert [e["event"] for e in events(d)] == ["step_start"]
    assert json.loads(res.stdout)["lease"] == "keep"


def test_dead_owner_is_an_orphan(session_dir: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead_pid = int(proc.stdout)
    seed(session_dir)
    put_lease(session_dir, "crashed", AFTER_FIXTURE, pid=dead_pid)
    res = sr(
        "start",
        "2",
        "--session-dir",
        str(session_dir),
        repo=session_dir.parents[1],
        now=AFTER_FIXTURE + timedelta(seconds=10),
        session="agent-9",
    )
    assert res.returncode == 0, res.stderr
    assert events(session_dir)[0]["detail"]["reason"] == "dead_owner"
    assert read_state(session_dir)["steps"]["2"]["attempts"] == 2
    assert lease(session_dir)["session"] == "agent-9"  # type: ignore[index]


def test_ping_writes_only_the_sentinel(session_dir: Path) -> None:
    repo, d = session_dir.parents[1], session_dir
    seed(d)
    res = sr("ping", "--session-dir", str(d), repo=repo, now=AFTER_FIXTURE)
    assert res.returncode == 1 and "SR514" in res.stderr
    put_lease(d, "agent-1", AFTER_FIXTURE)
    state, log = (d / store.STATE).read_bytes(), events(d)
    later = AFTER_FIXTURE + timedelta(minutes=3)
    res = sr("ping", "--session-dir", str(d), repo=repo, now=later, session="agent-1")
    assert res.returncode == 0, res.stderr
    assert lease(d)["heartbeat"] == ts(later)  # type: ignore[index]
    assert (d / store.STATE).read_bytes() == state and events(d) == log
    res = sr("ping", "--session-dir", str(d), repo=repo, now=later, session="agent-2")
    assert res.returncode == 1 and "SR511" in res.stderr
    # a stale lease is not revived by another session's ping
    res = sr("ping", "--session-dir", str(d), repo=repo, now=later + timedelta(hours=1))
    assert res.returncode == 1 and "SR512" in res.stderr


def test_first_write_without_a_lease_starts_a_session(session_dir: Path) -> None:
    seed(session_dir)
    res = sr(
        "decide",
        "region",
        "westeurope",
        "--session-dir",
        str(session_dir),
        repo=session_dir.parents[1],
        now=AFTER_FIXTURE,
        fmt="json",
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    log = events(session_dir)
    assert [e["event"] for e in log] == ["session_start", "decision"]
    assert {e["session"] for e in log} == {out["session"]}
    assert out["events"] == log and out["lease"] == "create"
    assert lease(session_dir)["session"] == out["session"]  # type: ignore[index]


def test_ended_session_lease_is_replaced(session_dir: Path) -> None:
    seed(session_dir)
    put_lease(session_dir, "old", AFTER_FIXTURE)
    worklog.append(session_dir, "session_end", ts=ts(AFTER_FIXTURE), session="old")
    res = sr(
        "session",
        "start",
        "--session-dir",
        str(session_dir),
        repo=session_dir.parents[1],
        now=AFTER_FIXTURE,
        session="new",
    )
    assert res.returncode == 0 and res.stdout.strip() == "new"
    assert events(session_dir)[-1]["event"] == "session_start"


# --- library: lost updates and retries -----------------------------------------------------


def test_lost_update_is_detected(session_dir: Path) -> None:
    seed(session_dir)
    a = store.load(session_dir)
    b = store.load(session_dir)
    assert a.revision == b.revision == 1
    assert a.document is not None and b.document is not None
    doc_a = write_moments.add_finding(a.document, "from A")
    doc_b = write_moments.add_finding(b.document, "from B")
    store.save(session_dir, doc_a, now=AFTER_FIXTURE, expected_revision=a.revision)
    with pytest.raises(store.ConflictError) as exc:
        store.save(session_dir, doc_b, now=AFTER_FIXTURE, expected_revision=b.revision)
    assert exc.value.diagnostics[0].code == "SR162"
    assert read_state(session_dir)["open_findings"] == ["from A"]


def _ctx(d: Path, session: str | None = "agent-1") -> WriteContext:
    return WriteContext(session_dir=d, now=AFTER_FIXTURE, session=session)


def test_write_state_retries_after_a_conflict(session_dir: Path) -> None:
    seed(session_dir)
    calls = 0
    inner = changes.add_finding("mine")

    def racing(doc: dict[str, Any], wf: Any, orphaned: bool) -> Change:
        nonlocal calls
        calls += 1
        if calls == 1:  # another writer saves between our load and our save
            other = write_moments.add_finding(doc, "theirs")
            store.save(session_dir, other, now=AFTER_FIXTURE, expected_revision=1)
        return inner(doc, wf, orphaned)

    res = writes.write_state(_ctx(session_dir), racing)
    assert calls == 2 and res.attempts == 2 and res.revision == 3
    assert read_state(session_dir)["open_findings"] == ["theirs", "mine"]


def test_write_state_gives_up_after_three_conflicts(session_dir: Path) -> None:
    seed(session_dir)

    def always_racing(doc: dict[str, Any], wf: Any, orphaned: bool) -> Change:
        store.save(session_dir, doc, now=AFTER_FIXTURE)
        return Change(write_moments.add_finding(doc, "never"), "finding_add")

    with pytest.raises(ServiceError) as exc:
        writes.write_state(_ctx(session_dir), always_racing)
    assert {d.code for d in exc.value.diagnostics} == {"SR162"}
    assert "never" not in read_state(session_dir)["open_findings"]


def test_archive_session_moves_only_protocol_files(tmp_path: Path) -> None:
    d = tmp_path / "s"
    d.mkdir()
    for name in (
        store.STATE,
        store.BAK,
        worklog.WORKLOG,
        "00-handoff.md",
        store.STATE + ".corrupt-20260101T000000Z",
        ".00-session-state.json.abc.tmp",
        "artifact.md",
        sentinel.SENTINEL,
    ):
        (d / name).write_text(name)
    target = writes.archive_session(d, T0, project="demo")
    assert target is not None and target.name == "20260302T090000Z_demo"
    assert sorted(os.listdir(target)) == sorted(
        [
            store.STATE,
            store.BAK,
            worklog.WORKLOG,
            "00-handoff.md",
            store.STATE + ".corrupt-20260101T000000Z",
            ".00-session-state.json.abc.tmp",
        ]
    )
    assert (d / "artifact.md").exists() and (d / sentinel.SENTINEL).exists()
    again = writes.archive_session(d, T0, project="demo")
    assert again is None  # nothing left to archive
    (d / store.STATE).write_text("x")
    third = writes.archive_session(d, T0, project="demo")
    assert third is not None and third.name == "20260302T090000Z_demo-2"


# --- transitions (pure) --------------------------------------------------------------------


def fresh() -> dict[str, Any]:
    return write_moments.init_state(APEX, "demo", T0)


def codes(exc: pytest.ExceptionInfo[TransitionError]) -> list[str]:
    return [d.code for d in exc.value.diagnostics]


def test_init_state() -> None:
    doc = fresh()
    assert doc["schema_version"] == "3.0" and doc["project"] == "demo"
    assert doc["updated"] == ts(T0) and doc["revision"] == 0 and doc["current_step"] == 0
    with pytest.raises(TransitionError) as exc:
        write_moments.init_state(APEX, "../evil", T0)
    assert codes(exc) == ["SR710"]


def test_start_pending_and_purity() -> None:
    doc = fresh()
    snapshot = copy.deepcopy(doc)
    new = write_moments.start_step(doc, APEX, "1", T0)
    assert doc == snapshot  # input untouched
    s = new["steps"]["1"]
    assert (s["status"], s["started"], s["completed"], s["sub_step"], s["attempts"]) == (
        "in_progress",
        ts(T0),
        None,
        None,
        1,
    )
    assert new["current_step"] == 1
    assert write_moments.start_step(new, APEX, "1", T0)["steps"]["1"]["attempts"] == 1  # restart
    assert (
        write_moments.start_step(new, APEX, "1", T0, orphaned=True)["steps"]["1"]["attempts"] == 2
    )


def test_start_refusals_and_force() -> None:
    doc = apex_state()  # 1 complete, 2 in progress
    with pytest.raises(TransitionError) as exc:
        write_moments.start_step(doc, APEX, "1", T0)
    assert codes(exc) == ["SR710"] and "already complete" in str(exc.value)
    rerun = write_moments.start_step(doc, APEX, "1", AFTER_FIXTURE, force=True)
    assert rerun["steps"]["1"]["status"] == "in_progress"
    assert rerun["steps"]["1"]["completed"] is None and rerun["steps"]["1"]["attempts"] == 2
    assert rerun["steps"]["2"]["status"] == "pending"  # the forced start interrupted step 2
    assert rerun["steps"]["2"]["started"] is None and rerun["steps"]["2"]["sub_step"] is None
    with pytest.raises(TransitionError) as exc:
        write_moments.start_step(doc, APEX, "3", T0)
    assert codes(exc) == ["SR710"] and "step 2 (Architecture) is in progress" in str(exc.value)
    with pytest.raises(TransitionError) as exc:
        write_moments.start_step(doc, APEX, "9", T0)
    assert codes(exc) == ["SR711"]
    with pytest.raises(TransitionError) as exc:
        write_moments.start_step(doc, APEX, "x", T0)
    assert codes(exc) == ["SR711"]
    with pytest.raises(TransitionError) as exc:
        write_moments.start_step(fresh(), APEX, "3_5", T0)
    assert "1 (Requirements), 2 (Architecture), 3 (Design)" in str(exc.value)
    forced = write_moments.start_step(fresh(), APEX, "3_5", T0, force=True)
    assert forced["current_step"] == 3


def test_start_skipped_needs_force() -> None:
    doc = write_moments.skip_step(fresh(), APEX, "1", "n/a", T0, force=True)
    with pytest.raises(TransitionError) as exc:
        write_moments.start_step(doc, APEX, "1", T0)
    assert "skipped (n/a)" in str(exc.value)
    new = write_moments.start_step(doc, APEX, "1", T0, force=True)
    assert "skip_reason" not in new["steps"]["1"] and new["steps"]["1"]["attempts"] == 2


def test_start_free_steps_creates_the_step() -> None:
    doc = write_moments.init_state(GENERIC, "demo", T0)
    assert doc["steps"] == {}
    doc = write_moments.start_step(doc, GENERIC, "1", T0, name="Plan")
    assert doc["steps"]["1"]["name"] == "Plan" and doc["steps"]["1"]["agent"] == ""
    doc = write_moments.complete_step(doc, GENERIC, "1", T0)
    doc = write_moments.start_step(doc, GENERIC, "2_1", T0)
    assert doc["steps"]["2_1"]["name"] == "Step 2_1" and doc["current_step"] == 2
    doc = write_moments.checkpoint(doc, GENERIC, "2_1", "anything")
    assert doc["steps"]["2_1"]["sub_step"] == "anything"


def test_checkpoint() -> None:
    doc = apex_state()
    new = write_moments.checkpoint(
        doc, APEX, "2", "phase_3_cost", ["a.md", "./a.md", "b.md"], ["ctx.md"]
    )
    s = new["steps"]["2"]
    assert s["sub_step"] == "phase_3_cost" and s["artifacts"] == ["a.md", "b.md"]
    assert s["context_files_used"] == ["ctx.md"] and doc["steps"]["2"]["artifacts"] == []
    assert (
        write_moments.checkpoint(doc, APEX, "2", "phase_2_5_compacted")["steps"]["2"]["sub_step"]
        == "phase_2_waf"
    )
    for bad_step, sub in (("1", "phase_1_discovery"), ("3", "phase_1_prereqs")):
        with pytest.raises(TransitionError) as exc:
            write_moments.checkpoint(doc, APEX, bad_step, sub)
        assert codes(exc) == ["SR710"]
    with pytest.raises(TransitionError) as exc:
        write_moments.checkpoint(doc, APEX, "2", "phase_9")
    assert "valid ids: phase_1_prereqs" in str(exc.value)
    with pytest.raises(TransitionError) as exc:
        write_moments.checkpoint(doc, APEX, "2", "phase_3_cost", ["../x", "/abs"])
    assert codes(exc) == ["SR311", "SR310"]


def test_complete() -> None:
    doc = apex_state()
    new = write_moments.complete_step(doc, APEX, "2", AFTER_FIXTURE)
    s = new["steps"]["2"]
    assert s["status"] == "complete" and s["completed"] == ts(AFTER_FIXTURE)
    assert s["sub_step"] is None and doc["steps"]["2"]["status"] == "in_progress"
    for key, word in (("3", "pending"), ("1", "already complete")):
        with pytest.raises(TransitionError) as exc:
            write_moments.complete_step(doc, APEX, key, T0)
        assert codes(exc) == ["SR710"] and word in str(exc.value)


def test_skip() -> None:
    doc = apex_state()
    new = write_moments.skip_step(doc, APEX, "3", "not needed", T0)
    assert new["steps"]["3"]["status"] == "skipped"
    assert new["steps"]["3"]["skip_reason"] == "not needed"
    with pytest.raises(TransitionError) as exc:
        write_moments.skip_step(doc, APEX, "4", "no", T0)
    assert "not optional" in str(exc.value)
    forced = write_moments.skip_step(doc, APEX, "2", "moving on", T0, force=True)
    assert forced["steps"]["2"]["status"] == "skipped" and forced["steps"]["2"]["sub_step"] is None
    for key, reason in (("1", "x"), ("3", " ")):
        with pytest.raises(TransitionError):
            write_moments.skip_step(doc, APEX, key, reason, T0)


def test_decisions() -> None:
    doc = {**apex_state(), "iac_tool": ""}
    new = write_moments.set_decision(doc, APEX, "iac_tool", "Terraform")
    assert new["decisions"]["iac_tool"] == "Terraform" and new["iac_tool"] == "Terraform"
    assert "iac_tool" not in apex_state()["decisions"]
    assert "iac_tool" not in write_moments.set_decision(apex_state(), APEX, "iac_tool", "Bicep")
    with pytest.raises(TransitionError) as exc:
        write_moments.set_decision(doc, APEX, "complexity", "huge")
    assert codes(exc) == ["SR420"]
    # apex lists its decision keys: another is refused (SR422, tests/test_decision_keys.py);
    # generic lists none, so any key goes
    with pytest.raises(TransitionError) as exc:
        write_moments.set_decision(doc, APEX, "custom", 3)
    assert codes(exc) == ["SR422"]
    generic = write_moments.set_decision(apex_state(), GENERIC, "custom", 3)
    assert generic["decisions"]["custom"] == 3


def test_log_decision_ids() -> None:
    doc = apex_state()
    a = write_moments.log_decision(doc, "T1", "C1", "R1", now=T0)
    b = write_moments.log_decision(a, "T2", "C2", "R2", "3_5", ["x"], now=T0, wf=APEX)
    assert [e["id"] for e in b["decision_log"]] == ["D001", "D002"]
    assert b["decision_log"][1]["step"] == "3_5" and b["decision_log"][1]["alternatives"] == ["x"]
    assert "decision_log" not in doc
    gap = {**doc, "decision_log": [{"id": "D007", "title": "t", "choice": "c", "rationale": "r"}]}
    assert write_moments.next_decision_id(gap) == "D008"
    with pytest.raises(TransitionError):
        write_moments.log_decision(doc, "", "C", "R", now=T0)
    with pytest.raises(TransitionError) as exc:
        write_moments.log_decision(doc, "T", "C", "R", "9", now=T0, wf=APEX)
    assert codes(exc) == ["SR711"]


def test_findings() -> None:
    doc = apex_state()
    a = write_moments.add_finding(doc, "F1")
    assert write_moments.add_finding(a, "F1")["open_findings"] == ["F1"]
    assert write_moments.resolve_finding(a, "F1")["open_findings"] == []
    assert doc["open_findings"] == []
    with pytest.raises(TransitionError) as exc:
        write_moments.resolve_finding(a, "F2")
    assert "'F1'" in str(exc.value)
    with pytest.raises(TransitionError):
        write_moments.add_finding(doc, "")


def test_transition_is_one_document() -> None:
    doc = apex_state()
    new = write_moments.transition(
        doc, APEX, "2", "3", {"architecture_pattern": "hub"}, AFTER_FIXTURE
    )
    assert new["steps"]["2"]["status"] == "complete"
    assert new["steps"]["3"]["status"] == "in_progress" and new["current_step"] == 3
    assert new["decisions"]["architecture_pattern"] == "hub"
    assert doc == apex_state()
    with pytest.raises(TransitionError):  # 3 cannot complete: it is pending
        write_moments.transition(doc, APEX, "3", "3_5", {}, AFTER_FIXTURE)
    with pytest.raises(TransitionError) as exc:  # a bad decision refuses the whole change
        write_moments.transition(doc, APEX, "2", "3", {"iac_tool": "Pulumi"}, AFTER_FIXTURE)
    assert codes(exc) == ["SR420"]


def test_missing_state_beside_a_valid_bak(session_dir: Path) -> None:
    repo, d = session_dir.parents[1], session_dir
    seed(d)
    seed(d, read_state(d))  # now .bak is a valid state too
    os.unlink(d / store.STATE)
    bak = (d / store.BAK).read_bytes()
    err = _unchanged_refusal(d, repo, "start", "2", code="SR161")
    assert "recover" in err
    err = _unchanged_refusal(d, repo, "init", "demo", code="SR710")
    assert "recover" in err and "--fresh" in err
    assert (d / store.BAK).read_bytes() == bak
    res = sr("init", "demo", "--fresh", "--session-dir", str(d), repo=repo, now=AFTER_FIXTURE)
    assert res.returncode == 0, res.stderr
    (archive,) = (d / ".archive").iterdir()
    assert (archive / store.BAK).read_bytes() == bak


def test_generic_and_dotagent_workflows(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    res = sr("init", "free", "--workflow", "generic", repo=tmp_path, now=T0)
    assert res.returncode == 0, res.stderr
    d = tmp_path / "agent-output" / "free"
    res = sr("start", "1", "--name", "Plan", "--project", "free", repo=tmp_path, now=T0)
    assert res.returncode == 0, res.stderr
    res = sr("checkpoint", "1", "drafted", "--project", "free", repo=tmp_path, now=T0)
    assert res.returncode == 0, res.stderr
    step = read_state(d)["steps"]["1"]
    assert step["name"] == "Plan" and step["sub_step"] == "drafted"
    assert_valid(tmp_path, d, T0)
    res = sr("init", "phased", "--workflow", "dotagent", repo=tmp_path, now=T0)
    assert res.returncode == 0, res.stderr
    assert read_state(tmp_path / "memory" / "phased")["workflow"] == "dotagent"
