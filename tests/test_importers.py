"""Importers: session-tracker v2.1 sessions, dotagent checkpoints, TodoWrite / Tasks lists.

The fixtures under tests/fixtures/import/ are written in each seed's exact format (the tracker
ones by replaying session-tracker v2.1's own write paths with a fixed clock). Every import runs
the real CLI; after it, `resume` (real CLI) must give the decision the original tool would have
given, or the better one docs/importers.md records, `validate` must pass, and the source must
be byte-for-byte unchanged.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_resume.core.workflow import load_workflow
from session_resume.importers import todos
from session_resume.importers.common import ImportRefused, parse_iso
from session_resume.importers.dotagent import (
    DotagentSource,
    FileFacts,
    map_dotagent,
    memory_relative,
)
from session_resume.importers.tracker import TrackerSource, WorklogLine, map_tracker, salvage
from session_resume.services.validation import ValidateOptions, validate_document
from session_resume.storage import store, worklog

from conftest import REPO, run_cli

# Test tier (README "Test tiers"): each importer through the CLI.
pytestmark = pytest.mark.slow

FIX = REPO / "tests" / "fixtures" / "import"
NOW = "2026-03-02T12:00:00Z"
NOW_DT = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
FILE_TIME = datetime(2026, 3, 1, 10, 0, tzinfo=UTC).timestamp()


# --- helpers -------------------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    return tmp_path


def place(kind: str, name: str, repo: Path) -> Path:
    """Copy a fixture into the repository (``.session`` or ``memory``), files dated in the
    fixture's own morning so that modification times are deterministic."""
    src = FIX / kind / name
    (inner,) = [p for p in src.iterdir()]
    dst = repo / inner.name
    shutil.copytree(inner, dst)
    for p in [dst, *dst.rglob("*")]:
        os.utime(p, (FILE_TIME, FILE_TIME))
    return dst


def tree(path: Path) -> dict[str, str]:
    """Every file and directory under ``path`` with the hash of its bytes."""
    out = {}
    for p in sorted(path.rglob("*")):
        rel = p.relative_to(path).as_posix()
        out[rel] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
    return out


def do_import(repo: Path, fmt: str, src: Path, to: str, *extra: str, now: str = NOW) -> Any:
    before = tree(src)
    res = run_cli("import", fmt, str(src), "--to", to, "--now", now, *extra, cwd=repo)
    assert tree(src) == before, "the import changed its source"
    return res


def import_json(repo: Path, fmt: str, src: Path, to: str, *extra: str) -> dict[str, Any]:
    res = do_import(repo, fmt, src, to, "--format", "json", *extra)
    assert res.returncode == 0, res.stdout + res.stderr
    out: dict[str, Any] = json.loads(res.stdout)
    return out


def resume(repo: Path, d: str, now: str = NOW) -> dict[str, Any]:
    res = run_cli("resume", d, "--now", now, "--format", "json", cwd=repo)
    assert res.returncode == 0, res.stdout + res.stderr
    out: dict[str, Any] = json.loads(res.stdout)
    # the codes only (each entry is {code, message, hint}: schema/decision/2.json)
    out["reasons"] = [r["code"] for r in out["reasons"]]
    out["warnings"] = [w["code"] for w in out["warnings"]]
    return out


def assert_valid(repo: Path, d: str, now: str = NOW) -> None:
    res = run_cli("validate", d, "--now", now, "--format", "json", cwd=repo)
    assert res.returncode == 0, res.stdout + res.stderr


def state(repo: Path, d: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((repo / d / store.STATE).read_text())
    return doc


def events(repo: Path, d: str) -> list[dict[str, Any]]:
    lines = (repo / d / worklog.WORKLOG).read_text().splitlines()
    return [json.loads(x) for x in lines]


def codes(out: dict[str, Any]) -> set[str]:
    return {d["code"] for d in out["diagnostics"]}


# --- session-tracker: the real CLI on the fixtures -------------------------------------------


def test_crashed_tracker_session_is_orphaned_and_resumes_at_its_step(repo: Path) -> None:
    src = place("tracker", "crashed", repo)
    out = import_json(repo, "session-tracker", src, "agent-output/q1")
    assert out["workflow"] == "generic"
    assert out["steps"] == {"1": "complete", "2": "complete", "3": "in_progress", "4": "pending"}
    assert {"SR804", "SR805", "SR806", "SR811"} <= codes(out)
    assert out["lease"]["heartbeat"] == "2026-03-01T09:12:40Z"  # the monitor's last line
    assert out["lease"]["owner"] == "session-tracker"
    assert [(p["path"], p["status"]) for p in out["possibly_incomplete"]] == [
        ("download/figures.json", "working"),
        ("download/summary.docx", "working"),
    ]
    # session-tracker: "Resume from: step 3 (Write summary docx) - Verify step 3 work, then
    # continue or redo", flagged as a meta-crash. Ours: restart step 3, orphaned (SR512),
    # with the files it was writing.
    r = resume(repo, "agent-output/q1")
    assert r["action"] == "restart_step"
    assert r["step"] == "3"
    assert r["step_name"] == "Write summary docx"
    assert "SR512" in r["warnings"]
    assert r["orphan"]["step"] == "3"
    assert r["orphan"]["possibly_incomplete"] == [
        {"path": "download/summary.docx", "why": "missing"}
    ]
    assert_valid(repo, "agent-output/q1")
    doc = state(repo, "agent-output/q1")
    assert doc["steps"]["3"]["attempts"] == 1
    assert doc["steps"]["1"]["artifacts"] == ["download/q1-text.txt"]
    # read with `file --reading`, never written: an input, not an artifact
    assert doc["steps"]["1"]["context_files_used"] == ["upload/q1-sales.pdf"]
    assert doc["x-import"]["crash_signature"]["orphaned_by_tracker_rule"] is True
    ev = events(repo, "agent-output/q1")
    assert ev[0]["event"] == "imported" and ev[0]["seq"] == 1
    assert [e["seq"] for e in ev] == list(range(1, len(ev) + 1))
    assert ev[1]["event"] == "session_start"
    assert ev[1]["detail"]["original"]["ts"] == "2026-03-01T09:00:00+00:00"
    assert not any(e["event"] == "session_end" for e in ev)


def test_crashed_tracker_files_changed_after_the_step_started_are_reported(repo: Path) -> None:
    src = place("tracker", "crashed", repo)
    import_json(repo, "session-tracker", src, "agent-output/q1")
    docx = repo / "download" / "summary.docx"
    docx.parent.mkdir()
    docx.write_bytes(b"PK\x03\x04 half a docx")
    t = datetime(2026, 3, 1, 9, 8, tzinfo=UTC).timestamp()  # after step 3 started (09:05:15)
    os.utime(docx, (t, t))
    r = resume(repo, "agent-output/q1")
    assert r["orphan"]["possibly_incomplete"] == [
        {"path": "download/summary.docx", "why": "modified after the last checkpoint"}
    ]


def test_finished_tracker_session_is_complete_and_not_orphaned(repo: Path) -> None:
    src = place("tracker", "finished", repo)
    out = import_json(repo, "session-tracker", src, "agent-output/readme")
    assert out["steps"] == {"1": "complete", "2": "complete", "3": "skipped"}
    assert out["lease"] is None
    assert out["possibly_incomplete"] == []
    # session-tracker: "Session already completed."
    r = resume(repo, "agent-output/readme")
    assert r["action"] == "workflow_complete"
    assert r["orphan"] is None and r["lease"] is None
    assert_valid(repo, "agent-output/readme")
    assert not (repo / "agent-output/readme/00-session.active").exists()
    doc = state(repo, "agent-output/readme")
    assert doc["steps"]["3"]["skip_reason"].startswith("pending when session-tracker's `done`")
    assert doc["steps"]["2"]["artifacts"] == ["download/readme.pdf"]
    ev = events(repo, "agent-output/readme")
    assert ev[-1]["event"] == "session_end"
    assert ev[-1]["session"] == ev[0]["session"]


def test_tracker_quirks(repo: Path) -> None:
    src = place("tracker", "quirks", repo)
    out = import_json(repo, "session-tracker", src, "agent-output/billing")
    assert {"SR804", "SR805", "SR807", "SR808", "SR809", "SR811", "SR812"} <= codes(out)
    assert out["steps"] == {
        "1": "complete",
        "2": "pending",  # in progress too, demoted: step 3 is the tracker's current step
        "3": "in_progress",
        "4": "pending",  # "blocked"
        "5": "pending",
        "6": "pending",  # "cancelled"
    }
    doc = state(repo, "agent-output/billing")
    assert doc["steps"]["2"]["x-legacy"]["demoted"]["status"] == "in_progress"
    assert doc["steps"]["4"]["x-legacy"]["status"] == {"original": "blocked", "code": "SR808"}
    assert doc["steps"]["6"]["x-legacy"]["status"]["original"] == "cancelled"
    assert doc["open_findings"] == ["step 4 (Load test) was blocked in session-tracker"]
    # src/adapter.py under its typed and its absolute key: one file; `file --done` is the
    # latest word on it
    assert doc["steps"]["2"]["artifacts"] == ["src/adapter.py"]
    assert doc["steps"]["3"]["context_files_used"] == ["config/queues.yaml"]
    outside = doc["x-legacy"]["session-tracker"]["files_outside_repository"]
    assert outside == [{"key": "/tmp/billing-scratch.txt", "status": "working", "code": "SR812"}]
    sig = doc["x-import"]["crash_signature"]
    # The sentinel was deleted by hand and the *previous* session's session_done hides the
    # crash from session-tracker's rule; not from ours.
    assert sig["orphaned_by_tracker_rule"] is False
    assert sig["unfinished"] is True
    assert doc["x-import"]["earlier_sessions"] == 1

    ev = events(repo, "agent-output/billing")
    sessions = list(dict.fromkeys(e["session"] for e in ev))
    assert len(sessions) == 2  # the blog-post session and the billing one
    earlier = [e for e in ev if e["session"] == sessions[1]]
    assert earlier[-1]["event"] == "session_end"
    assert not any("step" in e for e in earlier)  # its todo list was overwritten
    garbled = [e for e in ev if "unparsed" in e.get("detail", {})]
    assert [e["detail"]["line"] for e in garbled] == [20, 22]
    assert garbled[1]["detail"]["torn"] is True
    assert garbled[1]["ts"] == "2026-03-01T15:42:40Z"  # read from the torn text
    salvaged = [e for e in ev if e.get("detail", {}).get("salvaged")]
    assert [e["event"] for e in salvaged] == ["heartbeat"]  # the ping the garbage swallowed
    lease = json.loads((repo / "agent-output/billing/00-session.active").read_text())
    assert lease["heartbeat"] == "2026-03-01T15:42:40Z"

    # session-tracker: no orphan; "Resume from: step 2 (Write adapter) - verify". Ours:
    # orphaned, restart step 3 (the step it was on), step 2 flagged as incomplete (SR706).
    r = resume(repo, "agent-output/billing")
    assert r["action"] == "restart_step" and r["step"] == "3"
    assert {"SR512", "SR706"} <= set(r["warnings"])
    assert_valid(repo, "agent-output/billing")


def test_a_tracker_session_still_alive_is_not_an_orphan(repo: Path) -> None:
    """v2.1 calls every session with a sentinel orphaned, a live one too (DESIGN §6)."""
    src = place("tracker", "crashed", repo)
    soon = "2026-03-01T09:14:00Z"  # 80 s after its last line
    res = do_import(repo, "session-tracker", src, "agent-output/q1", now=soon)
    assert res.returncode == 0, res.stderr
    r = resume(repo, "agent-output/q1", now=soon)
    assert r["action"] == "session_active"
    assert r["lease"]["state"] == "live"
    later = resume(repo, "agent-output/q1", now="2026-03-01T09:30:00Z")
    assert later["action"] == "restart_step" and "SR512" in later["warnings"]


def test_reimport_is_refused_unless_force_which_archives_first(repo: Path) -> None:
    src = place("tracker", "crashed", repo)
    import_json(repo, "session-tracker", src, "agent-output/q1")
    d = repo / "agent-output/q1"
    first = tree(d)
    res = do_import(repo, "session-tracker", src, "agent-output/q1")
    assert res.returncode == 1
    assert "SR802" in res.stderr and "--force" in res.stderr
    assert tree(d) == first  # nothing written
    res = do_import(repo, "session-tracker", src, "agent-output/q1", "--force")
    assert res.returncode == 0, res.stderr
    assert "archived the previous session" in res.stdout
    (arch,) = list((d / ".archive").iterdir())
    assert arch.name.startswith("20260302T120000Z_")
    for name in (store.STATE, worklog.WORKLOG, "00-session.active"):
        assert hashlib.sha256((arch / name).read_bytes()).hexdigest() == first[name]
    ev = events(repo, "agent-output/q1")
    assert ev[0]["event"] == "imported" and ev[0]["seq"] == 1
    assert ev[0]["detail"]["archived_to"] == f".archive/{arch.name}"
    assert_valid(repo, "agent-output/q1")


def test_import_refuses_to_write_into_its_source(repo: Path) -> None:
    src = place("tracker", "crashed", repo)
    res = do_import(repo, "session-tracker", src, str(src))
    assert res.returncode == 2 and "SR803" in res.stderr
    res = do_import(repo, "session-tracker", src, str(src / "inside"))
    assert res.returncode == 2 and "SR803" in res.stderr
    assert not (src / "inside").exists()


def test_dry_run_writes_nothing(repo: Path) -> None:
    src = place("tracker", "crashed", repo)
    res = do_import(repo, "session-tracker", src, "agent-output/q1", "--dry-run")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout.split("\n(dry run")[0])["workflow"] == "generic"
    assert not (repo / "agent-output/q1" / store.STATE).exists()


def test_tracker_sources_that_are_not_sessions(repo: Path) -> None:
    empty = repo / "empty"
    empty.mkdir()
    res = run_cli("import", "session-tracker", str(empty), "--to", "out", cwd=repo)
    assert res.returncode == 2 and "SR800" in res.stderr
    broken = repo / "broken"
    shutil.copytree(FIX / "tracker/finished/.session", broken)
    (broken / "state.json").write_text('{"session_id": "", "task": "x", "status": "in_pro')
    before = tree(broken)
    res = run_cli("import", "session-tracker", str(broken), "--to", "out", cwd=repo)
    assert res.returncode == 1 and "SR801" in res.stderr
    assert tree(broken) == before
    assert not (repo / "out" / store.STATE).exists()
    no_task = repo / "no-task"
    no_task.mkdir()
    (no_task / "state.json").write_text('{"session_id": "", "task": ""}')
    res = run_cli("import", "session-tracker", str(no_task), "--to", "out", cwd=repo)
    assert res.returncode == 2 and "SR800" in res.stderr


# --- session-tracker: the pure mapping ----------------------------------------------------------


def _tracker(**kw: Any) -> TrackerSource:
    base: dict[str, Any] = {
        "dir": "/p/.session",
        "state": {
            "session_id": "",
            "task": "T",
            "status": "in_progress",
            "current_step_id": None,
            "current_files": [],
            "files": {},
            "started_at": "2026-03-01T09:00:00+00:00",
            "updated_at": "2026-03-01T09:30:00+00:00",
        },
        "todo": [],
        "project_root": "/p",
    }
    base.update(kw)
    return TrackerSource(**base)


def _line(n: int, **v: Any) -> WorklogLine:
    return WorklogLine(n, v, json.dumps(v))


def test_todo_ids_that_cannot_be_keys_get_the_next_free_one() -> None:
    todo = [
        {"id": "2", "content": "b", "status": "pending"},
        {"id": "x7", "content": "c", "status": "pending"},
        {"id": "02", "content": "d", "status": "pending"},  # the same key as "2"
        {"id": "1", "content": "a", "status": "completed"},
    ]
    plan = map_tracker(_tracker(todo=todo), now=NOW_DT, project="p")
    steps = plan.document["steps"]
    assert [(k, s["name"]) for k, s in steps.items()] == [
        ("2", "b"),
        ("3", "c"),
        ("4", "d"),
        (
            "1",
            "a",
        ),
    ]
    assert [d.code for d in plan.diagnostics].count("SR810") == 2
    ids = plan.document["x-todo-ids"]["ids"]
    assert ids["session-tracker:x7"] == "3" and ids["session-tracker:02"] == "4"
    assert steps["1"]["completed"] == "2026-03-01T09:30:00Z"  # no step_done: updated_at


def test_of_several_in_progress_items_the_one_started_last_stays() -> None:
    todo = [
        {"id": "1", "content": "a", "status": "in_progress"},
        {"id": "2", "content": "b", "status": "in_progress"},
    ]
    log = [
        _line(1, ts="2026-03-01T09:00:00+00:00", action="init", detail="Task: T", steps=2),
        _line(2, ts="2026-03-01T09:05:00+00:00", action="step_start", step_id="2", files=[]),
        _line(3, ts="2026-03-01T09:06:00+00:00", action="step_start", step_id="1", files=[]),
    ]
    plan = map_tracker(_tracker(todo=todo, worklog=log), now=NOW_DT, project="p")
    steps = plan.document["steps"]
    assert steps["1"]["status"] == "in_progress"
    assert steps["1"]["started"] == "2026-03-01T09:06:00Z"
    assert steps["2"]["status"] == "pending" and steps["2"]["started"] is None
    assert plan.document["current_step"] == 1


def test_future_timestamps_are_clamped_to_now() -> None:
    st = _tracker().state
    st["updated_at"] = "2027-01-01T00:00:00+00:00"
    todo = [{"id": "1", "content": "a", "status": "completed"}]
    plan = map_tracker(_tracker(state=st, todo=todo), now=NOW_DT, project="p")
    assert plan.document["steps"]["1"]["completed"] == NOW
    assert any(d.code == "SR805" and "later than now" in d.message for d in plan.diagnostics)


def test_inventory_paths_are_rebased_or_kept_aside() -> None:
    st = _tracker().state
    st["files"] = {
        "out/a.md": {"status": "working", "purpose": "a"},
        "/p/out/a.md": {"status": "working"},
        "/home/z/my-project/out/b.md": {"status": "completed"},
        "../elsewhere/c.md": {"status": "working"},
        "/etc/hosts": {"status": "reading"},
    }
    todo = [{"id": "1", "content": "a", "status": "in_progress", "files": ["out/a.md"]}]
    st["current_step_id"] = "1"
    plan = map_tracker(_tracker(state=st, todo=todo), now=NOW_DT, project="p")
    step = plan.document["steps"]["1"]
    assert step["artifacts"] == ["out/a.md", "out/b.md"]
    outside = plan.document["x-legacy"]["session-tracker"]["files_outside_repository"]
    assert [o["key"] for o in outside] == ["../elsewhere/c.md", "/etc/hosts"]
    assert [d.code for d in plan.diagnostics].count("SR811") == 1


def test_salvage_recovers_the_event_appended_to_a_cut_line() -> None:
    raw = '{"ts": "2026-03-01T10:00:00+00:00", "action": "log", "detail": "cut{"ts": "x", "a": 1}'
    (garbage, event) = salvage([WorklogLine(4, None, raw)])
    assert garbage.value is None and garbage.raw.endswith("cut")
    assert event.value == {"ts": "x", "a": 1} and event.salvaged


def test_parse_iso_forms() -> None:
    assert parse_iso("2026-03-01T10:15:30+00:00")[1] == "offset"
    assert parse_iso("2026-03-01T12:15:30+02:00")[0] == datetime(2026, 3, 1, 10, 15, 30, tzinfo=UTC)
    assert parse_iso("2026-03-01T10:15:30Z")[1] == "z"
    assert parse_iso("2026-03-01T10:15:30")[1] == "naive"
    assert parse_iso("yesterday") == (None, "bad")


# --- dotagent: the real CLI on the fixtures ------------------------------------------------------


def test_dotagent_running_task_without_output_restarts_with_one_more_attempt(repo: Path) -> None:
    mem = place("dotagent", "interrupted-no-output", repo)
    original_exec = (mem / "state/execution.json").read_bytes()
    out = import_json(repo, "dotagent", mem, "agent-output/auth")
    assert out["workflow"] == "dotagent" and out["project"] == "wf-auth-sso"
    assert {"SR815", "SR806", "SR819"} <= codes(out)
    assert out["steps"] == {
        "1": "complete",
        "2": "complete",
        "3": "in_progress",
        "4": "pending",
        "5": "pending",
    }
    assert out["files"] == ["state/execution.json"]
    tasks = json.loads((repo / "agent-output/auth/state/execution.json").read_text())["tasks"]
    assert [(t["id"], t["status"], t["attempts"]) for t in tasks] == [
        ("task-001", "pre_complete", 1),
        ("task-002", "pending", 2),  # scenario 1
        ("task-003", "pending", 0),
    ]
    assert (mem / "state/execution.json").read_bytes() == original_exec
    # the skill: IMPLEMENTATION in progress -> executor recovery checks, continue the loop
    r = resume(repo, "agent-output/auth")
    assert r["action"] == "resume_from_checkpoint"
    assert (r["step"], r["sub_step"], r["next_checkpoint"]) == (
        "3",
        "execution_planned",
        "tasks_complete",
    )
    assert "SR512" in r["warnings"]
    assert r["lease"]["heartbeat"] == "2026-03-01T10:06:02Z"
    doc = state(repo, "agent-output/auth")
    assert doc["steps"]["1"]["artifacts"] == ["memory/reports/demand.json"]
    assert doc["steps"]["2"]["completed"] == "2026-03-01T09:35:02Z"
    assert [(d["id"], d["step"]) for d in doc["decision_log"]] == [("D001", "1"), ("D002", "2")]
    assert doc["x-import"]["interruption_safe"] is False
    assert_valid(repo, "agent-output/auth")
    ev = events(repo, "agent-output/auth")
    assert ev[0]["event"] == "imported"
    assert ev[-1]["detail"]["reconciled_task"]["scenario"] == 1


def test_dotagent_running_task_whose_output_exists_is_reconciled(repo: Path) -> None:
    mem = place("dotagent", "interrupted-output-exists", repo)
    out = import_json(repo, "dotagent", mem, "agent-output/auth")
    assert "SR820" in codes(out) and "SR815" not in codes(out)
    tasks = json.loads((repo / "agent-output/auth/state/execution.json").read_text())["tasks"]
    assert [(t["id"], t["status"]) for t in tasks] == [
        ("task-001", "verified"),
        ("task-002", "pre_complete"),  # scenario 2: the output's status
    ]
    assert tasks[1]["attempts"] == 2 and tasks[1]["completed_at"] == "2026-03-01T10:00:00Z"
    r = resume(repo, "agent-output/auth")
    assert r["action"] == "resume_from_checkpoint"
    assert (r["step"], r["sub_step"], r["next_checkpoint"]) == ("3", "tasks_complete", None)
    runs = [c["run"] for c in r["commands"]]
    assert runs[0].startswith("session-resume session start ")
    assert runs[1].startswith("session-resume complete 3")
    assert state(repo, "agent-output/auth")["steps"]["3"]["artifacts"] == [
        "memory/tasks/task-001/output.json",
        "memory/tasks/task-002/output.json",
    ]
    assert_valid(repo, "agent-output/auth")


def test_dotagent_interrupted_at_the_approval_point(repo: Path) -> None:
    mem = place("dotagent", "approval-pending", repo)
    import_json(repo, "dotagent", mem, "agent-output/auth")
    # the skill (scenario 3): designs exist, no final design -> re-present the options,
    # do not re-run the architects
    r = resume(repo, "agent-output/auth")
    assert r["action"] == "resume_from_checkpoint"
    assert (r["step"], r["sub_step"], r["next_checkpoint"]) == (
        "2",
        "designs_written",
        "final_design_written",
    )
    assert state(repo, "agent-output/auth")["steps"]["2"]["artifacts"] == [
        "memory/reports/designs/design-a.json",
        "memory/reports/designs/design-b.json",
    ]
    assert_valid(repo, "agent-output/auth")


def test_dotagent_approval_is_a_recorded_gate_approval(repo: Path) -> None:
    """An approval dotagent recorded (`user_checkpoints[].approved_at`) is the gate's
    approval (docs/spec.md §4.1): with the next step still to start, no gate is open before
    it, and `approve` of that gate is refused as already recorded."""
    mem = place("dotagent", "approval-pending", repo)
    import_json(repo, "dotagent", mem, "agent-output/auth")
    d = repo / "agent-output" / "auth"
    doc = state(repo, "agent-output/auth")
    (entry,) = [e for e in doc["decision_log"] if e["choice"] == "approved"]
    assert (str(entry["step"]), entry["agent"]) == ("1", "user")
    # the architecture phase not begun yet (as if the chat had ended at the approval)
    doc["steps"]["2"] = _template()["2"]
    (d / store.STATE).write_bytes(json.dumps(doc).encode())
    r = run_cli("resume", "agent-output/auth", "--now", NOW, "--format", "json", cwd=repo)
    ans = json.loads(r.stdout)
    assert (ans["action"], ans["step"], ans["plan"]["open_gate"]) == ("start", "2", None)
    assert not any(" approve 1 " in c["run"] for c in ans["commands"])  # its own: approve 2
    refused = run_cli("approve", "1", "--session-dir", "agent-output/auth", "--now", NOW, cwd=repo)
    assert refused.returncode == 1 and f"already approved ({entry['id']})" in refused.stderr


def test_dotagent_completed_workflow(repo: Path) -> None:
    mem = place("dotagent", "completed", repo)
    out = import_json(repo, "dotagent", mem, "agent-output/auth")
    assert set(out["steps"].values()) == {"complete"}
    assert out["lease"] is None
    assert "SR821" in codes(out)
    r = resume(repo, "agent-output/auth")
    assert r["action"] == "workflow_complete" and r["orphan"] is None
    ev = events(repo, "agent-output/auth")
    assert ev[-1]["event"] == "session_end"
    doc = state(repo, "agent-output/auth")
    assert doc["x-import"]["archives"] == ["wf-landing-page_2026-02-20T17-05-00Z"]
    run = run_cli("validate", "agent-output/auth", "--now", NOW, "--check-artifacts", cwd=repo)
    assert run.returncode == 0, run.stdout


def test_dotagent_archive_layout(repo: Path) -> None:
    mem = place("dotagent", "archived", repo)
    res = do_import(repo, "dotagent", mem, "agent-output/auth")
    assert res.returncode == 2 and "SR800" in res.stderr
    assert "wf-auth-sso_2026-03-01T10-07-30Z" in res.stderr and "--archive" in res.stderr
    out = import_json(repo, "dotagent", mem, "agent-output/auth", "--archive", "latest")
    assert out["project"] == "wf-auth-sso"
    r = resume(repo, "agent-output/auth")
    assert (r["action"], r["step"]) == ("resume_from_checkpoint", "3")
    out = import_json(
        repo,
        "dotagent",
        mem,
        "agent-output/billing",
        "--archive",
        "wf-billing_2026-02-25T16-00-00Z",
    )
    assert "SR818" in codes(out)
    doc = state(repo, "agent-output/billing")
    assert doc["open_findings"] == ["dotagent phase VERIFICATION failed"]
    assert doc["steps"]["3"]["artifacts"] == [
        "memory/state/.archive/wf-billing_2026-02-25T16-00-00Z/execution.json"
    ]
    r = resume(repo, "agent-output/billing")
    assert (r["action"], r["step"]) == ("restart_step", "4")
    assert_valid(repo, "agent-output/billing")
    res = do_import(repo, "dotagent", mem, "agent-output/x", "--archive", "nope")
    assert res.returncode == 2 and "SR800" in res.stderr


def test_dotagent_target_inside_its_state_is_refused_but_memory_project_is_fine(
    repo: Path,
) -> None:
    mem = place("dotagent", "interrupted-no-output", repo)
    res = do_import(repo, "dotagent", mem, str(mem / "state"))
    assert res.returncode == 2 and "SR803" in res.stderr
    # the dotagent workflow's own session_dir pattern is memory/{project}
    before = tree(mem)
    res = run_cli("import", "dotagent", str(mem), "--to", str(mem / "auth"), "--now", NOW, cwd=repo)
    assert res.returncode == 0, res.stderr
    after = tree(mem)
    assert {k: v for k, v in after.items() if not k.startswith("auth")} == before
    assert_valid(repo, str(mem / "auth"))


# --- dotagent: the pure mapping ------------------------------------------------------------------


def _dotagent(phase: dict[str, Any], **kw: Any) -> DotagentSource:
    return DotagentSource(dir="/r/memory", phase=phase, repo_prefix="memory", **kw)


def _template() -> dict[str, Any]:
    steps: dict[str, Any] = load_workflow("dotagent").template_state("p", NOW)["steps"]
    return steps


def _phase(**kw: Any) -> dict[str, Any]:
    base = {
        "workflow_id": "wf",
        "started_at": "2026-03-01T08:00:00Z",
        "last_updated": "2026-03-01T09:00:00Z",
        "current_phase": "REQUIREMENTS",
        "phase_status": "in_progress",
        "completed_phases": [],
        "user_checkpoints": [],
        "interruption_safe": True,
    }
    base.update(kw)
    return base


def test_requirements_in_progress_follows_demand_json() -> None:
    ok = FileFacts(FILE_TIME, True)
    plan = map_dotagent(
        _dotagent(_phase(), facts={"reports/demand.json": ok}),
        now=NOW_DT,
        project="p",
        template_steps=_template(),
    )
    assert plan.document["steps"]["1"]["sub_step"] == "demand_written"
    bad = map_dotagent(
        _dotagent(_phase(), facts={"reports/demand.json": FileFacts(FILE_TIME, False)}),
        now=NOW_DT,
        project="p",
        template_steps=_template(),
    )
    assert bad.document["steps"]["1"]["sub_step"] is None
    assert "SR816" in {d.code for d in bad.diagnostics}


def test_phase_not_started_and_progression_problems() -> None:
    done = [{"phase": "ARCHITECTURE", "completed_at": "2026-03-01T08:30:00Z", "output": "x"}]
    plan = map_dotagent(
        _dotagent(
            _phase(current_phase="IMPLEMENTATION", phase_status="pending", completed_phases=done)
        ),
        now=NOW_DT,
        project="p",
        template_steps=_template(),
    )
    steps = plan.document["steps"]
    assert steps["2"]["status"] == "complete" and steps["3"]["status"] == "pending"
    assert steps["1"]["status"] == "pending"
    assert plan.lease is None
    got = {d.code for d in plan.diagnostics}
    assert {"SR817", "SR816"} <= got


def test_ancient_dotagent_state_is_reported() -> None:
    plan = map_dotagent(
        _dotagent(_phase()),
        now=datetime(2026, 3, 20, tzinfo=UTC),
        project="p",
        template_steps=_template(),
    )
    assert "SR814" in {d.code for d in plan.diagnostics}


def test_bad_current_phase_is_refused() -> None:
    with pytest.raises(ImportRefused) as exc:
        map_dotagent(
            _dotagent(_phase(current_phase="DEPLOY")),
            now=NOW_DT,
            project="p",
            template_steps=_template(),
        )
    assert exc.value.diagnostics[0].code == "SR801"


def test_memory_relative_paths() -> None:
    assert memory_relative("memory/reports/demand.json", "/r/memory") == "reports/demand.json"
    assert memory_relative("/r/memory/tasks/t/output.json", "/r/memory") == "tasks/t/output.json"
    assert memory_relative("reports/x.json", "/r/mem-copy") == "reports/x.json"
    assert memory_relative("mem-copy/reports/x.json", "/r/mem-copy") == "reports/x.json"
    assert memory_relative("/elsewhere/x.json", "/r/memory") is None
    assert memory_relative("../x.json", "/r/memory") is None


# --- sync-todos ----------------------------------------------------------------------------------


def _generic_session(repo: Path, name: str = "todo") -> str:
    d = repo / "agent-output" / name
    d.mkdir(parents=True)
    doc = load_workflow("generic").template_state(name, NOW)
    store.save(d, doc, now=NOW_DT, workflow="generic", event="session_start")
    return f"agent-output/{name}"


def sync(repo: Path, d: str, items: Any, now: str = NOW, *extra: str) -> Any:
    return run_cli(
        "sync-todos",
        d,
        "--now",
        now,
        "--format",
        "json",
        *extra,
        cwd=repo,
        input=json.dumps(items).encode(),
    )


def _steps(repo: Path, d: str) -> dict[str, tuple[str, str]]:
    return {k: (s["name"], s["status"]) for k, s in state(repo, d)["steps"].items()}


@pytest.mark.parametrize("writer_between", [False, True])
def test_sync_todos_merges_once_unless_another_writer_came_between(
    repo: Path, monkeypatch: pytest.MonkeyPatch, writer_between: bool
) -> None:
    """The preview's merge is the write's when the state did not change in between (merge is
    pure); a write in between (here a decision, right after the preview) is merged again."""
    from session_resume.services import importing
    from session_resume.services.context import WriteContext

    d = repo / _generic_session(repo)
    items = todos.parse_list([{"content": f"task {i}", "status": "pending"} for i in range(5)])
    merges: list[int] = []
    real_merge = todos.merge

    def counted(doc: dict[str, Any], its: Any, now: datetime) -> Any:
        merges.append(doc["revision"])
        res = real_merge(doc, its, now)
        if writer_between and len(merges) == 1:
            cur = store.load(d, root=repo).document
            assert cur is not None
            cur["decisions"]["iac_tool"] = "bicep"
            store.save(d, cur, now=NOW_DT, workflow="generic", root=repo)
        return res

    monkeypatch.setattr(todos, "merge", counted)
    ctx = WriteContext(session_dir=d, now=NOW_DT, root=repo)
    res = importing.sync_todos(ctx, items)
    assert res.written is not None
    assert merges == ([1, 2] if writer_between else [1])  # the revisions each merge saw
    doc = state(repo, str(d.relative_to(repo)))
    assert [s["name"] for s in doc["steps"].values()] == [f"task {i}" for i in range(5)]
    assert doc.get("decisions", {}).get("iac_tool") == ("bicep" if writer_between else None)
    assert_valid(repo, str(d.relative_to(repo)))


def test_sync_todowrite_list_merges_without_deleting(repo: Path) -> None:
    d = _generic_session(repo)
    first = [
        {"content": "Read the spec", "status": "completed", "activeForm": "Reading the spec"},
        {"content": "Write the parser", "status": "in_progress", "activeForm": "Writing parser"},
        {"content": "Add tests", "status": "pending", "activeForm": "Adding tests"},
    ]
    res = sync(repo, d, first)
    assert res.returncode == 0, res.stdout + res.stderr
    assert _steps(repo, d) == {
        "1": ("Read the spec", "complete"),
        "2": ("Write the parser", "in_progress"),
        "3": ("Add tests", "pending"),
    }
    assert state(repo, d)["current_step"] == 2
    assert_valid(repo, d)

    # the text of item 2 and 3 changes, a new item appears in the middle, item 1 is dropped
    second = [
        {"content": "Write the JSON parser", "status": "completed", "activeForm": "Writing parser"},
        {"content": "Benchmark it", "status": "pending", "activeForm": "Benchmarking"},
        {"content": "Add unit tests", "status": "in_progress", "activeForm": "Adding unit tests"},
    ]
    res = sync(repo, d, second, "2026-03-02T12:10:00Z")
    assert res.returncode == 0, res.stdout + res.stderr
    assert _steps(repo, d) == {
        "1": ("Read the spec", "complete"),  # not in the list: kept as it is
        "2": ("Write the JSON parser", "complete"),  # renamed, matched by activeForm
        "3": ("Add unit tests", "in_progress"),  # renamed, matched by its place
        "4": ("Benchmark it", "pending"),
    }
    ids = state(repo, d)["x-todo-ids"]
    assert ids["texts"]["Add tests"] == ["3"] and ids["texts"]["Add unit tests"] == ["3"]
    assert ids["order"] == ["2", "4", "3"]
    assert_valid(repo, d, "2026-03-02T12:10:00Z")

    # the same list again: nothing to write
    rev = state(repo, d)["revision"]
    res = sync(repo, d, second, "2026-03-02T12:11:00Z")
    assert json.loads(res.stdout)["written"] is False
    assert state(repo, d)["revision"] == rev

    # a finished step is not reopened by a list; the old text still finds its step
    third = [
        {"content": "Add tests", "status": "completed", "activeForm": "x"},
        {"content": "Write the parser", "status": "pending", "activeForm": "y"},
    ]
    res = sync(repo, d, third, "2026-03-02T12:20:00Z")
    out = json.loads(res.stdout)
    assert "SR832" in {x["code"] for x in out["diagnostics"]}
    assert _steps(repo, d)["2"] == ("Write the JSON parser", "complete")
    assert _steps(repo, d)["3"] == ("Add unit tests", "complete")
    assert len(_steps(repo, d)) == 4
    notes = [e for e in events(repo, d) if e["event"] == "note"]
    assert len(notes) == 3 and all("todo_sync" in e["detail"] for e in notes)
    assert_valid(repo, d, "2026-03-02T12:20:00Z")


def test_sync_tasks_list_keys_by_id(repo: Path) -> None:
    d = _generic_session(repo)
    tasks = [
        {"id": "1", "subject": "Set up CI", "description": "GitHub Actions", "status": "completed"},
        {"id": "7", "subject": "Port the CLI", "status": "in_progress", "activeForm": "Porting"},
    ]
    assert sync(repo, d, tasks).returncode == 0
    assert _steps(repo, d) == {
        "1": ("Set up CI", "complete"),
        "7": ("Port the CLI", "in_progress"),
    }
    tasks = [
        {"id": "7", "subject": "Port the CLI to click", "status": "completed"},
        {"id": "8", "subject": "Drop Python 3.10", "status": "deleted"},
    ]
    res = sync(repo, d, {"tasks": tasks}, "2026-03-02T12:30:00Z")
    assert res.returncode == 0, res.stdout + res.stderr
    steps = state(repo, d)["steps"]
    assert (steps["7"]["name"], steps["7"]["status"]) == ("Port the CLI to click", "complete")
    assert steps["8"]["status"] == "skipped"
    assert steps["8"]["skip_reason"] == "deleted from the todo list"
    assert steps["1"]["status"] == "complete"
    assert_valid(repo, d, "2026-03-02T12:30:00Z")


def test_sync_keeps_one_step_in_progress(repo: Path) -> None:
    d = _generic_session(repo)
    items = [
        {"content": "a", "status": "in_progress"},
        {"content": "b", "status": "in_progress"},
    ]
    out = json.loads(sync(repo, d, items).stdout)
    assert "SR809" in {x["code"] for x in out["diagnostics"]}
    assert _steps(repo, d) == {"1": ("a", "in_progress"), "2": ("b", "pending")}
    items = [{"content": "b", "status": "in_progress"}]  # a is no longer listed
    out = json.loads(sync(repo, d, items, "2026-03-02T12:05:00Z").stdout)
    assert _steps(repo, d) == {"1": ("a", "pending"), "2": ("b", "in_progress")}
    assert_valid(repo, d, "2026-03-02T12:05:00Z")


def test_sync_after_a_tracker_import_finds_the_tracker_steps(repo: Path) -> None:
    src = place("tracker", "crashed", repo)
    import_json(repo, "session-tracker", src, "agent-output/q1")
    d = "agent-output/q1"
    items = [
        {"content": "Extract text from PDF", "status": "completed", "activeForm": "Extracting"},
        {"content": "Analyze figures", "status": "completed", "activeForm": "Analyzing"},
        {"content": "Write the summary docx", "status": "completed", "activeForm": "Writing"},
        {"content": "Review and export", "status": "in_progress", "activeForm": "Reviewing"},
        {"content": "Email it to finance", "status": "pending", "activeForm": "Emailing"},
    ]
    # Tasks-style ids of another tool must not be taken for the tracker's own ids
    items[4]["id"] = "1"
    res = sync(repo, d, items, "2026-03-02T12:05:00Z")
    assert res.returncode == 0, res.stdout + res.stderr
    out = json.loads(res.stdout)
    assert out["lease"] == "takeover"  # the orphaned tracker session is taken over
    assert _steps(repo, d) == {
        "1": ("Extract text from PDF", "complete"),
        "2": ("Analyze figures", "complete"),
        "3": ("Write the summary docx", "complete"),
        "4": ("Review and export", "in_progress"),
        "5": ("Email it to finance", "pending"),
    }
    assert_valid(repo, d, "2026-03-02T12:05:00Z")


def test_sync_refuses_closed_workflows_and_bad_input(repo: Path) -> None:
    d = repo / "agent-output" / "dot"
    d.mkdir(parents=True)
    doc = load_workflow("dotagent").template_state("dot", NOW)
    store.save(d, doc, now=NOW_DT, workflow="dotagent")
    res = sync(repo, "agent-output/dot", [{"content": "x", "status": "pending"}])
    assert res.returncode == 1 and "SR831" in res.stdout
    g = _generic_session(repo)
    for bad in ({"content": "x"}, [1, 2], [{"status": "pending"}]):
        res = sync(repo, g, bad)
        assert res.returncode == 1 and "SR830" in res.stdout, res.stdout
    res = run_cli("sync-todos", g, "--now", NOW, cwd=repo, input=b"not json")
    assert res.returncode == 1 and "SR830" in res.stderr
    res = run_cli("sync-todos", "agent-output/none", "--now", NOW, cwd=repo, input=b"[]")
    assert res.returncode == 2 and "SR100" in res.stderr  # a missing path (docs/spec.md §5)


# --- sync-todos: the pure merge -----------------------------------------------------------------


def _doc() -> dict[str, Any]:
    doc: dict[str, Any] = load_workflow("generic").template_state("p", NOW)
    return doc


def test_merge_duplicates_keep_their_own_steps() -> None:
    items = todos.parse_list(
        [{"content": "check", "status": "pending"}, {"content": "check", "status": "pending"}]
    )
    first = todos.merge(_doc(), items, NOW_DT)
    assert list(first.document["steps"]) == ["1", "2"]
    again = todos.merge(first.document, items, NOW_DT)
    assert list(again.document["steps"]) == ["1", "2"]
    assert not again.changed


def test_merge_never_mutates_its_input_and_accepts_hook_payloads() -> None:
    doc = _doc()
    snapshot = copy.deepcopy(doc)
    payload = {"tool_input": {"todos": [{"content": "x", "status": "completed"}]}}
    res = todos.merge(doc, todos.parse_list(payload), NOW_DT)
    assert doc == snapshot
    assert res.document["steps"]["1"]["status"] == "complete"
    assert res.document["steps"]["1"]["completed"] == NOW


def test_merge_unknown_status_is_kept_aside() -> None:
    res = todos.merge(_doc(), todos.parse_list([{"content": "x", "status": "blocked"}]), NOW_DT)
    step = res.document["steps"]["1"]
    assert step["status"] == "pending"
    assert step["x-legacy"]["todo_status"] == {"original": "blocked", "code": "SR808"}


def test_dotagent_reimport_with_force_sets_the_old_execution_copy_aside(repo: Path) -> None:
    mem = place("dotagent", "interrupted-no-output", repo)
    import_json(repo, "dotagent", mem, "agent-output/auth")
    d = repo / "agent-output/auth"
    old_exec = (d / "state/execution.json").read_bytes()
    res = do_import(repo, "dotagent", mem, "agent-output/auth")
    assert res.returncode == 1 and "SR802" in res.stderr
    out = import_json(repo, "dotagent", mem, "agent-output/auth", "--force")
    arch = Path(out["archived_to"])
    assert (arch / "state/execution.json").read_bytes() == old_exec
    assert (arch / store.STATE).exists()
    assert (d / "state/execution.json").read_bytes() == old_exec  # the same source again
    assert_valid(repo, "agent-output/auth")


# --- properties: any input maps to a valid state, or is refused with a code ------------------


_TS = st.sampled_from(
    [
        "2026-03-01T09:00:00+00:00",
        "2026-03-01T10:00:00Z",
        "2026-03-01T11:00:00",
        "2027-01-01T00:00:00+00:00",
        "not a time",
        None,
        7,
    ]
)
_STATUS = st.sampled_from(
    ["pending", "in_progress", "completed", "skipped", "blocked", "", None, 3, "deleted"]
)
_ID = st.one_of(st.sampled_from(["1", "2", "3", "02", "x", ""]), st.integers(0, 5), st.none())
_TEXT = st.sampled_from(["a", "b", "Write, test", "", "ünïcode ✓"])
_PATH = st.sampled_from(
    ["out/a.md", "/p/out/a.md", "/home/z/my-project/x", "../up", "/etc/passwd", "a\nb", ""]
)


def _valid(doc: dict[str, Any], wf: str) -> list[str]:
    report = validate_document(
        store.serialize({**doc, "revision": 1}),
        options=ValidateOptions(workflow=load_workflow(wf), now=NOW_DT),
    )
    return [f"{d.code} {d.message}" for d in report.errors()]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    todo=st.lists(
        st.fixed_dictionaries(
            {"id": _ID, "content": _TEXT, "status": _STATUS},
            optional={"files": st.lists(_PATH, max_size=2)},
        ),
        max_size=5,
    ),
    files=st.dictionaries(
        _PATH,
        st.fixed_dictionaries({"status": st.sampled_from(["working", "reading", "completed", 1])}),
        max_size=4,
    ),
    log=st.lists(
        st.fixed_dictionaries(
            {
                "ts": _TS,
                "action": st.sampled_from(
                    [
                        "init",
                        "step_start",
                        "step_done",
                        "file_working",
                        "file_reading",
                        "file_done",
                        "sync_update",
                        "session_done",
                        "ping",
                        "weird",
                        None,
                    ]
                ),
                "step_id": _ID,
                "file": _PATH,
                "files": st.lists(_PATH, max_size=2),
                "new_status": _STATUS,
            }
        ),
        max_size=8,
    ),
    status=st.sampled_from(["in_progress", "completed", "odd"]),
    current=_ID,
    sentinel=st.sampled_from([None, "T\ninitialized: 2026-03-01T09:00:00+00:00\n", "junk"]),
    updated=_TS,
)
def test_any_tracker_session_maps_to_a_valid_state(
    todo: list[dict[str, Any]],
    files: dict[str, Any],
    log: list[dict[str, Any]],
    status: str,
    current: Any,
    sentinel: str | None,
    updated: Any,
) -> None:
    st_ = _tracker().state
    st_.update(files=files, status=status, current_step_id=current, updated_at=updated)
    lines = [WorklogLine(i + 1, v, json.dumps(v)) for i, v in enumerate(log)]
    lines.append(WorklogLine(len(lines) + 1, None, '{"ts": "2026-03-01T12:00:00+00:00", "a'))
    src = _tracker(state=st_, todo=todo, worklog=salvage(lines), sentinel=sentinel)
    plan = map_tracker(src, now=NOW_DT, project="p")
    assert _valid(plan.document, "generic") == []
    assert [d.code for d in plan.diagnostics if d.code[:3] != "SR8"] == []
    running = [k for k, s in plan.document["steps"].items() if s["status"] == "in_progress"]
    assert len(running) <= 1
    for ev in plan.events:
        assert ev.event in worklog.EVENTS


@settings(max_examples=150, deadline=None)
@given(
    lists=st.lists(
        st.lists(
            st.fixed_dictionaries(
                {"status": _STATUS},
                optional={
                    "content": _TEXT,
                    "subject": _TEXT,
                    "id": _ID,
                    "activeForm": _TEXT,
                },
            ),
            max_size=5,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_any_sequence_of_todo_lists_keeps_the_state_valid_and_never_loses_a_step(
    lists: list[list[dict[str, Any]]],
) -> None:
    doc = _doc()
    for raw in lists:
        try:
            items = todos.parse_list(raw)
        except todos.TodoListError as exc:
            assert exc.diagnostics[0].code == "SR830"
            continue
        before = set(doc["steps"])
        res = todos.merge(doc, items, NOW_DT)
        assert before <= set(res.document["steps"])  # nothing deleted
        assert len(set(res.keys)) == len(items)  # one step per item
        assert _valid(res.document, "generic") == []
        again = todos.merge(res.document, items, NOW_DT)
        assert again.keys == res.keys  # the same list finds the same steps
        doc = res.document


_PHASE = st.sampled_from(
    ["REQUIREMENTS", "ARCHITECTURE", "IMPLEMENTATION", "VERIFICATION", "REFLECTION", "DEPLOY"]
)


@settings(max_examples=150, deadline=None)
@given(
    current=_PHASE,
    status=st.sampled_from(["pending", "in_progress", "complete", "failed", "odd", None]),
    done=st.lists(
        st.fixed_dictionaries(
            {
                "phase": _PHASE,
                "completed_at": _TS,
                "output": st.sampled_from(
                    ["memory/reports/demand.json", "/abs/x.json", "../x", None, 5]
                ),
            }
        ),
        max_size=6,
    ),
    approvals=st.lists(st.fixed_dictionaries({"phase": _PHASE, "approved_at": _TS}), max_size=3),
    tasks=st.one_of(
        st.none(),
        st.lists(
            st.fixed_dictionaries(
                {
                    "id": st.sampled_from(["task-001", "task-002", "../x", 3]),
                    "status": st.sampled_from(["running", "pending", "verified", "blocked"]),
                    "attempts": st.sampled_from([0, 1, 3, "x", None]),
                }
            ),
            max_size=3,
        ),
    ),
    facts=st.dictionaries(
        st.sampled_from(
            [
                "reports/demand.json",
                "reports/final_design.json",
                "tasks/task-001/output.json",
                "reports/verification.json",
                "reports/designs/a.json",
            ]
        ),
        st.builds(
            FileFacts,
            st.sampled_from([None, FILE_TIME, NOW_DT.timestamp() + 9999]),
            st.booleans(),
            st.sampled_from([None, {"status": "pre_complete"}, {"status": 1}, []]),
        ),
        max_size=4,
    ),
    started=_TS,
    updated=_TS,
)
def test_any_dotagent_checkpoint_maps_to_a_valid_state_or_is_refused(
    current: str,
    status: Any,
    done: list[dict[str, Any]],
    approvals: list[dict[str, Any]],
    tasks: list[dict[str, Any]] | None,
    facts: dict[str, FileFacts],
    started: Any,
    updated: Any,
) -> None:
    phase = _phase(
        current_phase=current,
        phase_status=status,
        completed_phases=done,
        user_checkpoints=approvals,
        started_at=started,
        last_updated=updated,
    )
    src = _dotagent(
        phase,
        execution=None if tasks is None else {"tasks": tasks},
        facts=facts,
        designs=["reports/designs/a.json"],
    )
    try:
        plan = map_dotagent(src, now=NOW_DT, project="p", template_steps=_template())
    except ImportRefused as exc:
        assert current == "DEPLOY" and exc.diagnostics[0].code == "SR801"
        return
    assert _valid(plan.document, "dotagent") == []
    running = [k for k, s in plan.document["steps"].items() if s["status"] == "in_progress"]
    assert len(running) <= 1
    assert (plan.lease is not None) == bool(running)


def test_merge_a_new_list_is_not_taken_for_renames_of_the_old_one() -> None:
    old = todos.merge(
        _doc(),
        todos.parse_list(
            [
                {"content": "Fix login", "status": "completed"},
                {"content": "Ship", "status": "completed"},
            ]
        ),
        NOW_DT,
    )
    assert not todos.merge(old.document, [], NOW_DT).changed
    new = todos.merge(
        old.document,
        todos.parse_list(
            [{"content": "Plan Q3", "status": "pending"}, {"content": "Hire", "status": "pending"}]
        ),
        NOW_DT,
    )
    assert [(k, s["name"]) for k, s in new.document["steps"].items()] == [
        ("1", "Fix login"),
        ("2", "Ship"),
        ("3", "Plan Q3"),
        ("4", "Hire"),
    ]
    renamed = todos.merge(
        old.document,
        todos.parse_list([{"content": "Fix the login", "status": "completed"}]),
        NOW_DT,
    )
    assert renamed.keys == ["1"]  # no anchor, but a look-alike text
