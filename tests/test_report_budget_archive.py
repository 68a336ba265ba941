"""`report`, `budget`, `archive` and the session-integrity checks of `validate`."""

from __future__ import annotations

import json
from pathlib import Path

from session_resume.storage import store

from conftest import apex_state, dump, run_cli

NOW = "2026-03-02T12:00:00Z"


def _crashed_session(d: Path) -> None:
    doc = apex_state()
    doc["steps"]["2"]["artifacts"] = ["agent-output/demo/02-architecture-assessment.md"]
    (d / store.STATE).write_bytes(dump(doc))
    (d / "00-session.active").write_text(
        json.dumps(
            {
                "v": 1,
                "session": "s-7",
                "owner": "copilot",
                "pid": None,
                "host": "h",
                "started": "2026-03-02T09:00:00Z",
                "heartbeat": "2026-03-02T10:15:00Z",
            }
        )
    )
    lines = [
        {
            "v": 1,
            "ts": "2026-03-02T09:00:00Z",
            "seq": 1,
            "session": "s-7",
            "event": "session_start",
        },
        {
            "v": 1,
            "ts": "2026-03-02T10:00:00Z",
            "seq": 2,
            "session": "s-7",
            "event": "step_start",
            "step": "2",
        },
        {
            "v": 1,
            "ts": "2026-03-02T10:15:00Z",
            "seq": 3,
            "session": "s-7",
            "event": "checkpoint",
            "step": "2",
            "sub_step": "phase_2_waf",
        },
    ]
    (d / "00-worklog.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_report_on_crashed_session(session_dir: Path) -> None:
    _crashed_session(session_dir)
    root = session_dir.parents[1]
    proc = run_cli("report", str(session_dir), "--now", NOW, "--format", "json", cwd=root)
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    assert rep["crashed"] is True
    assert rep["orphan"]["session"] == "s-7" and rep["orphan"]["silent_seconds"] == 6300
    assert rep["current_step"] == "2" and rep["sub_step"] == "phase_2_waf"
    assert [e["seq"] for e in rep["last_events"]] == [1, 2, 3]
    assert rep["possibly_incomplete"] == [
        {"path": "agent-output/demo/02-architecture-assessment.md", "why": "missing"},
        # a completed step's artifact missing on disk is listed too
        {
            "path": "agent-output/demo/01-requirements.md",
            "why": "missing (listed by step 1, complete)",
        },
    ]
    assert rep["recommended"]["action"] == "resume_from_checkpoint"
    sid = rep["recommended"]["commands"][0]["run"].split()[-1]
    assert rep["recommended"]["commands"][:2] == [
        {"run": f"session-resume session start --project demo --session {sid}", "when": "now"},
        {
            "run": f"session-resume checkpoint 2 phase_3_cost --project demo --session {sid}",
            "when": "after cost estimate produced",
        },
    ]
    assert len(rep["steps"]) == 8
    text = run_cli("report", str(session_dir), "--now", NOW, cwd=root).stdout
    assert "CRASHED: session s-7" in text and "session-resume checkpoint 2 phase_3_cost" in text
    assert "None" not in text


def test_report_on_healthy_session(session_dir: Path) -> None:
    (session_dir / store.STATE).write_bytes(dump(apex_state()))
    rep = json.loads(
        run_cli(
            "report", str(session_dir), "--now", NOW, "--format", "json", cwd=session_dir
        ).stdout
    )
    assert rep["crashed"] is False and rep["orphan"] is None


def test_budget_from_workflow_and_state(session_dir: Path) -> None:
    doc = apex_state()
    doc["steps"]["1"]["context_files_used"] = ["a.md", "b.md"]
    (session_dir / store.STATE).write_bytes(dump(doc))
    proc = run_cli(
        "budget", "1", "--session-dir", str(session_dir), "--format", "json", cwd=session_dir
    )
    out = json.loads(proc.stdout)
    assert out["max_startup_files"] == 1
    assert out["startup_files"] == ["00-session-state.json"]
    assert out["do_not_reread"] == ["a.md", "b.md"]
    assert out["warnings"] == ["SR415"]
    proc = run_cli("budget", "2", "--format", "json", cwd=session_dir)
    assert json.loads(proc.stdout)["max_startup_files"] == 2
    proc = run_cli("budget", "9", cwd=session_dir)
    assert proc.returncode == 1 and "SR711" in proc.stderr


def test_archive_moves_session_files_and_prunes(session_dir: Path) -> None:
    artifact = session_dir / "01-requirements.md"
    artifact.write_text("deliverable")
    for i in range(7):
        (session_dir / store.STATE).write_bytes(dump(apex_state()))
        (session_dir / "00-worklog.jsonl").write_text(f'{{"seq": {i}}}\n')
        stamp = f"2026-03-0{1 + i // 3}T1{i % 3}:00:00Z"
        proc = run_cli(
            "archive",
            str(session_dir),
            "--keep",
            "5",
            "--now",
            stamp,
            "--format",
            "json",
            cwd=session_dir,
        )
        assert proc.returncode == 0, proc.stderr
        res = json.loads(proc.stdout)
        assert res["moved"] == [store.STATE, "00-worklog.jsonl"]
    archives = sorted(p.name for p in (session_dir / ".archive").iterdir())
    assert len(archives) == 5
    assert archives[0].startswith("20260301T120000Z")  # the two oldest were pruned
    assert artifact.read_text() == "deliverable"  # artifacts are never touched
    assert not (session_dir / store.STATE).exists()
    kept = session_dir / ".archive" / archives[-1] / "00-worklog.jsonl"
    assert kept.read_text() == '{"seq": 6}\n'


def test_validate_reports_session_integrity(session_dir: Path) -> None:
    (session_dir / store.STATE).write_bytes(dump(apex_state()))
    (session_dir / ".00-session-state.json.abc123.tmp").write_text("{")
    (session_dir / "00-worklog.jsonl").write_text(
        '{"v":1,"seq":1,"event":"note"}\n<<<<<<< HEAD\n{"v":1,"seq":1,"event":"note"}\n'
        '{"v":1,"seq":3,"ev'
    )
    (session_dir / "00-session.active").write_text("{}")
    proc = run_cli("validate", "--format", "json", "--now", NOW, str(session_dir), cwd=session_dir)
    diags = json.loads(proc.stdout)["files"][0]["diagnostics"]
    found = {(d["code"], d["line"]) for d in diags}
    assert ("SR170", None) in found
    assert ("SR503", 2) in found  # garbage mid-file, with its line number
    assert ("SR504", 3) in found  # seq went backwards
    assert ("SR502", 4) in found  # torn last line: info
    assert ("SR510", None) in found
    assert proc.returncode == 0  # all warnings/info: still valid unless --strict
    strict = run_cli("validate", "--strict", "--now", NOW, str(session_dir), cwd=session_dir)
    assert strict.returncode == 1


def test_worklog_tail_is_read_from_the_end(tmp_path: Path) -> None:
    from session_resume.storage import worklog

    log = tmp_path / "00-worklog.jsonl"
    with open(log, "wb") as fh:
        fh.write(b"garbage that a full scan would report\n")
        for i in range(1, 20001):
            fh.write(json.dumps({"v": 1, "seq": i, "event": "note"}).encode() + b"\n")
    tail = worklog.read_tail(log, 3)
    assert [e["seq"] for e in tail.events] == [19998, 19999, 20000]
    assert tail.last_seq == 20000
    assert tail.diagnostics == []  # the garbage at the top was never read


def test_torn_line_terminated_by_next_append_stays_info(tmp_path: Path) -> None:
    from session_resume.storage import worklog

    log = tmp_path / worklog.WORKLOG
    log.write_bytes(
        b'{"v":1,"ts":"2026-03-02T10:00:00Z","seq":1,"session":"s","event":"note"}\n'
        b'{"v":1,"ts":"2026-03-02T10:0'
    )  # a crash mid-append
    worklog.append(tmp_path, "note", ts="2026-03-02T10:01:00Z", session="s")
    assert [(d.code, d.line) for d in worklog.scan(log)] == [("SR502", 2)]
    assert worklog.read_tail(log, 5).last_seq == 2


def test_budget_never_tells_a_new_chat_it_loaded_anything(session_dir: Path) -> None:
    """Issue 26 point 4: `context_files_used` is what the earlier session recorded, not what
    the caller (a new chat) has loaded."""
    doc = apex_state()
    doc["steps"]["2"]["context_files_used"] = ["agent-output/demo/01-requirements.md"]
    (session_dir / store.STATE).write_bytes(dump(doc))
    text = run_cli("budget", "2", "--session-dir", str(session_dir), cwd=session_dir).stdout
    assert "already loaded" not in text and "do not re-read" not in text
    assert "a new chat has loaded none of them" in text
