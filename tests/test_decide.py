"""The resume decision: every situation of DESIGN §6, pure (Snapshot in, JSON out), and the
`resume` command on real session directories. Every output validates against
schema/decision/2.json."""

from __future__ import annotations

import copy
import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from session_resume import load_workflow
from session_resume.core.resume_decision import ACTIONS, Options, Snapshot, decide
from session_resume.storage import store

from conftest import REPO, apex_state, dump, run_cli

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
APEX = load_workflow("apex")
SCHEMA = json.loads((REPO / "schema" / "decision" / "2.json").read_text())


def codes(entries: list[dict[str, str]]) -> list[str]:
    """The codes of a decision's ``reasons`` or ``warnings`` (each ``{code, message, hint}``)."""
    return [e["code"] for e in entries]


def run(snap: Snapshot, step: str | None = None, **opts: Any) -> dict[str, Any]:
    out = decide(snap, step, NOW, APEX, Options(**opts))
    jsonschema.Draft202012Validator(SCHEMA).validate(out)
    return out


def ok(doc: dict[str, Any], **kw: Any) -> Snapshot:
    return Snapshot(state_status="ok", document=doc, **kw)


def test_no_state_file() -> None:
    assert run(Snapshot("absent"))["action"] == "fresh_start"


def test_absent_state_with_good_backup_needs_recovery() -> None:
    assert run(Snapshot("absent", backup_usable=True))["action"] == "needs_recovery"


@pytest.mark.parametrize("codes", [("SR110",), ("SR111",), ("SR120",), ("SR121",)])
@pytest.mark.parametrize("bak", [True, False])
def test_corrupt(codes: tuple[str, ...], bak: bool) -> None:
    out = run(Snapshot("corrupt", state_codes=codes, backup_usable=bak))
    assert out["action"] == "needs_recovery"
    assert out["reasons"][0]["code"] == codes[0]
    assert ("SR130" in [r["code"] for r in out["reasons"]]) is bak
    assert [c["run"] for c in out["commands"]] == [
        "session-resume recover DIR",
        "session-resume resume DIR",
    ]
    assert out["commands"][0]["when"] == "now"


@pytest.mark.parametrize(
    "status,action",
    [
        ("needs_migration", "migrate_first"),
        ("too_new", "refuse_newer_version"),
        ("bad_version", "invalid_state"),
        ("invalid", "invalid_state"),
        ("refused", "invalid_state"),
    ],
)
def test_unusable_states(status: str, action: str) -> None:
    assert run(Snapshot(status))["action"] == action


def _with(step: str, **fields: Any) -> dict[str, Any]:
    doc = apex_state()
    doc["steps"][step].update(fields)
    return doc


def test_status_by_sub_step_matrix() -> None:
    doc = apex_state()
    # step 2 in_progress at a checkpoint
    out = run(ok(doc), "2")
    assert out["action"] == "resume_from_checkpoint" and out["sub_step"] == "phase_2_waf"
    assert out["next_checkpoint"] == "phase_3_cost"
    # in_progress, sub_step null
    doc2 = _with("2", sub_step=None)
    assert run(ok(doc2), "2")["action"] == "restart_step"
    # complete
    assert run(ok(doc), "1")["action"] == "offer_rerun"
    # pending with prerequisites done
    doc3 = _with("2", status="complete", sub_step=None, completed="2026-03-02T10:10:00Z")
    out = run(ok(doc3), "3")
    assert out["action"] == "start" and out["startup_files"] == [
        "00-session-state.json",
        "02-architecture-assessment.md",
    ]
    # skipped → next step
    doc3["steps"]["3"]["status"] = "skipped"
    out = run(ok(doc3), "3")
    assert out["action"] == "next_step" and out["next_step"] == "3_5"


def test_skip_files_are_the_context_already_loaded() -> None:
    doc = _with(
        "2",
        context_files_used=[
            "agent-output/demo/00-session-state.json",
            "agent-output/demo/01-requirements.md",
        ],
    )
    out = run(ok(doc), "2")
    assert out["skip_files"] == [
        "agent-output/demo/00-session-state.json",
        "agent-output/demo/01-requirements.md",
    ]


def test_direct_invocation_with_incomplete_prerequisites() -> None:
    out = run(ok(apex_state()), "4")
    assert out["action"] == "prerequisites_incomplete"
    assert out["incomplete"] == ["2", "3", "3_5"]
    assert "SR709" in codes(out["warnings"])  # step 2 is in progress


def test_orchestrator_picks_the_step_in_progress() -> None:
    out = run(ok(apex_state()))
    assert (out["action"], out["step"]) == ("resume_from_checkpoint", "2")


def test_orchestrator_skips_skipped_optional_steps() -> None:
    doc = _with("2", status="complete", sub_step=None, completed="2026-03-02T10:10:00Z")
    doc["steps"]["3"]["status"] = "skipped"
    out = run(ok(doc))
    assert (out["action"], out["step"]) == ("start", "3_5")


def test_orchestrator_workflow_complete() -> None:
    doc = apex_state()
    for st in doc["steps"].values():
        st.update(
            status="complete",
            sub_step=None,
            started="2026-03-02T09:00:00Z",
            completed="2026-03-02T09:30:00Z",
        )
    out = run(ok(doc))
    assert out["action"] == "workflow_complete" and out["step"] is None


def test_unknown_step() -> None:
    assert run(ok(apex_state()), "9")["action"] == "unknown_step"


def _lease(age: timedelta, session: str = "s-1", pid: int | None = None) -> dict[str, Any]:
    hb = (NOW - age).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "v": 1,
        "session": session,
        "owner": "agent",
        "pid": pid,
        "host": "h",
        "started": hb,
        "heartbeat": hb,
    }


def test_live_session_is_not_an_orphan() -> None:
    out = run(ok(apex_state(), sentinel=_lease(timedelta(seconds=30))), "2")
    assert out["action"] == "session_active" and out["orphan"] is None
    assert out["lease"]["state"] == "live"


def test_own_live_session_is_not_blocked() -> None:
    out = run(ok(apex_state(), sentinel=_lease(timedelta(seconds=30))), "2", session="s-1")
    assert out["action"] == "resume_from_checkpoint"


def test_orphaned_session_gets_resume_action_plus_report() -> None:
    events = (
        {
            "v": 1,
            "ts": "2026-03-02T10:00:00Z",
            "seq": 1,
            "session": "s-1",
            "event": "step_start",
            "step": "2",
        },
        {
            "v": 1,
            "ts": "2026-03-02T10:15:00Z",
            "seq": 2,
            "session": "s-1",
            "event": "checkpoint",
            "step": "2",
            "sub_step": "phase_2_waf",
        },
    )
    doc = _with("2", artifacts=["agent-output/demo/02-a.md", "agent-output/demo/02-b.md"])
    snap = ok(
        doc,
        sentinel=_lease(timedelta(hours=2)),
        last_events=events,
        artifacts={
            "agent-output/demo/02-a.md": None,
            "agent-output/demo/02-b.md": datetime(2026, 3, 2, 10, 20, tzinfo=UTC).timestamp(),
        },
    )
    out = run(snap)
    assert out["action"] == "resume_from_checkpoint" and "SR512" in codes(out["warnings"])
    orphan = out["orphan"]
    assert orphan["reason"] == "heartbeat_stale" and orphan["step"] == "2"
    assert orphan["sub_step"] == "phase_2_waf" and len(orphan["last_events"]) == 2
    assert orphan["possibly_incomplete"] == [
        {"path": "agent-output/demo/02-a.md", "why": "missing"},
        {"path": "agent-output/demo/02-b.md", "why": "modified after the last checkpoint"},
    ]


def test_dead_owner_is_an_orphan_even_with_fresh_heartbeat() -> None:
    out = run(ok(apex_state(), sentinel=_lease(timedelta(seconds=5), pid=4242), owner_alive=False))
    assert out["orphan"]["reason"] == "owner_dead"


def test_ended_session_is_not_an_orphan() -> None:
    out = run(ok(apex_state(), sentinel=_lease(timedelta(hours=2)), session_ended=True))
    assert out["orphan"] is None and "SR513" in codes(out["warnings"])


def test_old_state_warns() -> None:
    doc = apex_state()
    out = decide(ok(doc), "2", NOW + timedelta(days=8), APEX)
    assert "SR708" in codes(out["warnings"])
    assert "SR708" not in codes(run(ok(doc), "2")["warnings"])


def test_decide_is_deterministic_and_pure() -> None:
    doc = apex_state()
    frozen = copy.deepcopy(doc)
    a = run(ok(doc))
    b = run(ok(doc))
    assert a == b and doc == frozen


def test_every_action_is_reachable() -> None:
    """Guards the table above: each documented action is produced by some test input."""
    seen = {
        run(Snapshot("absent"))["action"],
        run(Snapshot("corrupt"))["action"],
        run(Snapshot("needs_migration"))["action"],
        run(Snapshot("too_new"))["action"],
        run(Snapshot("invalid"))["action"],
        run(ok(apex_state()), "1")["action"],
        run(ok(apex_state()), "2")["action"],
        run(ok(_with("2", sub_step=None)), "2")["action"],
        run(ok(apex_state()), "4")["action"],
        run(ok(apex_state()), "9")["action"],
        run(ok(apex_state(), sentinel=_lease(timedelta(seconds=1))))["action"],
    }
    own = _with("2", sub_step=None)
    started = (
        {
            "v": 1,
            "ts": "2026-03-02T11:00:00Z",
            "seq": 1,
            "session": "s-1",
            "event": "step_start",
            "step": "2",
        },
    )
    lease = _lease(timedelta(seconds=1))
    seen.add(
        run(ok(own, sentinel=lease, last_events=started), "2", session=lease["session"])["action"]
    )
    doc = _with("2", status="complete", sub_step=None, completed="2026-03-02T10:10:00Z")
    seen.add(run(ok(doc), "3")["action"])
    doc["steps"]["3"]["status"] = "skipped"
    seen.add(run(ok(doc), "3")["action"])
    for st in doc["steps"].values():
        st.update(
            status="complete",
            sub_step=None,
            started="2026-03-02T09:00:00Z",
            completed="2026-03-02T09:30:00Z",
        )
    seen.add(run(ok(doc))["action"])
    assert seen == set(ACTIONS)


# --- the command on real directories ---------------------------------------------------------


def _resume(d: Path, *args: str) -> dict[str, Any]:
    proc = run_cli(
        "resume", str(d), "--format", "json", "--now", "2026-03-02T12:00:00Z", *args, cwd=d
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    jsonschema.Draft202012Validator(SCHEMA).validate(out)
    return out


def test_resume_cli_on_real_files(session_dir: Path) -> None:
    assert _resume(session_dir)["action"] == "fresh_start"
    (session_dir / store.STATE).write_bytes(b"")
    assert _resume(session_dir)["action"] == "needs_recovery"
    (session_dir / store.STATE).write_bytes(dump({**apex_state(), "schema_version": "2.0"}))
    assert _resume(session_dir)["action"] == "migrate_first"
    (session_dir / store.STATE).write_bytes(dump(apex_state()))
    out = _resume(session_dir, "--step", "2")
    assert out["action"] == "resume_from_checkpoint"
    # named the way the skill teaches: --project for the project's own directory, and the
    # session the first command takes
    sid = out["session"]["id"]
    assert out["session"]["new"] is True
    assert out["commands"][0] == {
        "run": f"session-resume session start --project demo --session {sid}",
        "when": "now",
    }
    # the workflow's deliverable drafted by phase_2_waf is listed by no checkpoint: the next
    # write records it (and SR714 says it is not on disk: the work redoes it first)
    assert out["commands"][1] == {
        "run": "session-resume checkpoint 2 phase_3_cost"
        " --artifact agent-output/demo/02-architecture-assessment.md"
        f" --project demo --session {sid}",
        "when": "after cost estimate produced",
    }
    assert "SR714" in [w["code"] for w in out["warnings"]]
    (session_dir / "02-architecture-assessment.md").write_text("# WAF draft\n")
    # the commands are runnable as printed, and the checkpoint records the next checkpoint
    import shlex

    for c in out["commands"][:2]:
        proc = run_cli(*shlex.split(c["run"])[1:], "--now", "2026-03-02T12:00:00Z", cwd=session_dir)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    state = json.loads((session_dir / store.STATE).read_text())
    assert state["steps"]["2"]["sub_step"] == "phase_3_cost"


def test_resume_cli_orphan_from_files(session_dir: Path) -> None:
    (session_dir / store.STATE).write_bytes(dump(apex_state()))
    (session_dir / "00-session.active").write_text(json.dumps(_lease(timedelta(hours=3))))
    (session_dir / "00-worklog.jsonl").write_text(
        '{"v":1,"ts":"2026-03-02T09:00:00Z","seq":1,"session":"s-1","event":"session_start"}\n'
    )
    out = _resume(session_dir)
    assert out["orphan"]["session"] == "s-1"
    # the same lease after a session_end is not an orphan
    with open(session_dir / "00-worklog.jsonl", "a") as fh:
        fh.write(
            '{"v":1,"ts":"2026-03-02T09:10:00Z","seq":2,"session":"s-1","event":"session_end"}\n'
        )
    assert _resume(session_dir)["orphan"] is None


def test_resume_text_output_names_the_command(session_dir: Path) -> None:
    doc = apex_state()  # the deliverable drafted by phase_2_waf, listed: no --artifact again
    doc["steps"]["2"]["artifacts"] = ["agent-output/demo/02-architecture-assessment.md"]
    (session_dir / store.STATE).write_bytes(dump(doc))
    proc = run_cli("resume", str(session_dir), "--now", "2026-03-02T12:00:00Z", cwd=session_dir)
    assert "action: resume_from_checkpoint" in proc.stdout
    assert "session-resume checkpoint 2 phase_3_cost --project demo --session " in proc.stdout
    assert "[after cost estimate produced]" in proc.stdout


def test_resume_missing_dir_outside_the_repository_is_usage_error(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    proc = run_cli("resume", str(tmp_path / "nope"), cwd=tmp_path / "repo")
    assert proc.returncode == 2 and "SR100" in proc.stderr
    assert not (tmp_path / "nope").exists()


def test_resume_of_a_missing_dir_under_a_link_out_of_the_repository_is_sr100(
    tmp_path: Path,
) -> None:
    """A fresh start only for a directory `init` may create inside the repository: a parent
    linked to a decoy outside it stays SR100, and nothing is created there or here."""
    repo, decoy = tmp_path / "repo", tmp_path / "decoy"
    decoy.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "agent-output").symlink_to(decoy)
    proc = run_cli("resume", "agent-output/harbor", cwd=repo)
    assert proc.returncode == 2 and "SR100" in proc.stderr
    proc = run_cli("resume", "--project", "harbor", cwd=repo)
    assert proc.returncode == 2 and "SR100" in proc.stderr
    assert list(decoy.iterdir()) == []
    fresh = run_cli("resume", "elsewhere/harbor", cwd=repo)  # a real parent: the fresh start
    assert fresh.returncode == 0 and fresh.stdout.startswith("action: fresh_start, step 1")
    assert "--session-dir elsewhere/harbor" in fresh.stdout


def test_lifecycle_example_script(tmp_path: Path) -> None:
    """examples/lifecycle.sh (the README's life cycle) ends in a crash that resume explains."""
    import os
    import subprocess
    import sys

    bindir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", "")}
    proc = subprocess.run(
        ["bash", str(REPO / "examples" / "lifecycle.sh"), str(tmp_path / "w")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    # the crash is labelled as the simulation it is, and the shell reports no killed job
    assert "simulated crash: the agent's stand-in process (sleep 600" in proc.stderr
    assert "Killed" not in proc.stdout + proc.stderr
    out = proc.stdout
    assert "action: resume_from_checkpoint" in out
    assert "action: resume_from_checkpoint, step 2" in out
    assert "step 2 (Architecture) is in progress after checkpoint phase_2_waf" in out
    assert "orphaned session" in out and "(owner_dead)" in out
    assert "CRASHED: session" in out
    assert "session-resume checkpoint 2 phase_3_cost" in out
    assert "modified after the last checkpoint" not in out  # written before its checkpoint
