"""Issue 12: a fresh agent resumes from the CLI alone. The lease never blocks its own user
(an implicit lease is adopted), and a scripted agent acts only on `resume --format json`."""

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

from session_resume.storage import lease_file as sentinel
from session_resume.storage import worklog

from conftest import run_cli

# Test tier (README "Test tiers"): whole agent life cycles through the CLI.
pytestmark = pytest.mark.slow

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _ts(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


class Shell:
    """A stateless agent shell: no environment variable survives between calls."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.now = T0

    def run(self, *args: str, ok: bool = True) -> Any:
        self.now += timedelta(minutes=1)
        res = run_cli(
            *args,
            "--now",
            _ts(self.now),
            cwd=self.repo,
            env={"SESSION_RESUME_SESSION": "", "USER": "tester"},
        )
        if ok:
            assert res.returncode == 0, res.stdout + res.stderr
        return res


def _events(d: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (d / worklog.WORKLOG).read_text().splitlines() if x.strip()]


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / ".git").mkdir()
    return tmp_path, tmp_path / "agent-output" / "demo"


def test_init_then_session_start_adopts_the_implicit_lease(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    sh = Shell(repo)
    sh.run("init", "demo")
    implicit = json.loads((d / sentinel.SENTINEL).read_text())
    assert implicit["implicit"] is True
    res = sh.run("session", "start", "--project", "demo")
    sid = res.stdout.strip()
    assert sid == implicit["session"]
    assert "adopted" in res.stderr
    lease = json.loads((d / sentinel.SENTINEL).read_text())
    assert "implicit" not in lease and lease["session"] == sid
    start = [e for e in _events(d) if e["event"] == "session_start"]
    assert start[-1]["detail"]["adopted"] == sid
    # the lease is now an explicit session's: a write naming no session is refused (issue
    # 26), with the command that names it; naming it, the write goes on under it
    res = sh.run("start", "1", "--project", "demo", ok=False)
    assert res.returncode == 1 and "SR511" in res.stderr
    assert "`session-resume start 1 --project demo --now " in res.stderr
    assert f" --session {sid}`" in res.stderr
    res = sh.run("start", "1", "--project", "demo", "--session", sid)
    assert f"session {sid}" in res.stdout


def test_session_start_with_an_id_adopts_and_renames(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    sh = Shell(repo)
    sh.run("init", "demo")
    old = json.loads((d / sentinel.SENTINEL).read_text())["session"]
    res = sh.run("session", "start", "--project", "demo", "--session", "agent-7")
    assert res.stdout.strip() == "agent-7"
    assert json.loads((d / sentinel.SENTINEL).read_text())["session"] == "agent-7"
    res = sh.run("start", "1", "--project", "demo", "--session", "agent-7")
    assert "session agent-7" in res.stdout
    assert any(e.get("detail", {}).get("adopted") == old for e in _events(d))


def test_session_start_then_init_and_writes_name_the_session(tmp_path: Path) -> None:
    """`session start` takes an explicit lease: the writes after it name its id (a write
    naming none is refused, issue 26), and go on under it."""
    repo, d = _repo(tmp_path)
    sh = Shell(repo)
    sid = sh.run("session", "start", "--project", "demo").stdout.strip()
    res = sh.run("init", "demo", ok=False)
    assert res.returncode == 1 and "SR511" in res.stderr
    assert not (d / "00-session-state.json").exists()
    sh.run("init", "demo", "--session", sid)
    res = sh.run("start", "1", "--project", "demo", "--session", sid)
    assert f"session {sid}" in res.stdout
    assert json.loads((d / sentinel.SENTINEL).read_text())["session"] == sid


def test_writes_without_session_start_never_refuse_themselves(tmp_path: Path) -> None:
    repo, _d = _repo(tmp_path)
    sh = Shell(repo)
    sh.run("init", "demo")
    sh.run("start", "1", "--project", "demo")
    sh.run("checkpoint", "1", "phase_1_discovery", "--project", "demo")
    res = sh.run("report", "agent-output/demo")
    assert "SR511" not in res.stdout + res.stderr


def test_another_live_explicit_session_is_still_refused(tmp_path: Path) -> None:
    repo, _d = _repo(tmp_path)
    sh = Shell(repo)
    sh.run("init", "demo")
    sh.run("session", "start", "--project", "demo", "--session", "agent-1")
    res = sh.run("session", "start", "--project", "demo", "--session", "agent-2", ok=False)
    assert res.returncode == 1 and "SR511" in res.stderr
    res = sh.run("start", "1", "--project", "demo", "--session", "agent-2", ok=False)
    assert res.returncode == 1 and "SR511" in res.stderr
    res = sh.run("resume", "agent-output/demo", "--format", "json", "--session", "agent-2")
    assert json.loads(res.stdout)["action"] == "session_active"


def _decision(sh: Shell, *extra: str) -> dict[str, Any]:
    res = sh.run("resume", "agent-output/demo", "--format", "json", *extra)
    out: dict[str, Any] = json.loads(res.stdout)
    return out


def _interrupted_in_step_2(repo: Path, d: Path) -> Shell:
    """Step 1 done with a decision and a finding; step 2 at phase_2_waf with a draft."""
    sh = Shell(repo)
    sh.run("init", "demo")
    (d / "01-requirements.md").write_text("requirements\n")
    p = ("--project", "demo")
    sh.run("start", "1", *p)
    sh.run("decide", "region", "westeurope", *p)
    sh.run("decide", "--log", "--title", "Region", "--choice", "westeurope", "--rationale", "x", *p)
    sh.run("finding", "add", "No DR target", *p)
    sh.run("complete", "1", *p)
    sh.run("start", "2", *p)
    (d / "02-architecture-assessment.md").write_text("draft\n")
    sh.run("checkpoint", "2", "phase_1_prereqs", *p)
    art = "agent-output/demo/02-architecture-assessment.md"
    sh.run("checkpoint", "2", "phase_2_waf", "--artifact", art, *p)
    return sh


def test_briefing_carries_the_state_and_what_to_read(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    sh = _interrupted_in_step_2(repo, d)
    out = _decision(sh)
    assert out["action"] == "resume_from_checkpoint"
    b = out["briefing"]
    assert b["decisions"]["region"] == "westeurope"
    assert b["open_findings"] == ["No DR target"]
    assert [e["title"] for e in b["decision_log"]] == ["Region"]
    assert b["review_audit"] is None and b["review_audited"] is True
    art = "agent-output/demo/02-architecture-assessment.md"
    assert b["artifacts"] == [{"path": art, "exists": True}]
    assert b["last_checkpoint"]["id"] == "phase_2_waf" and b["last_checkpoint"]["after"]
    assert b["next_checkpoint"]["id"] == "phase_3_cost" and b["next_checkpoint"]["after"]
    assert b["last_events"][-1]["sub_step"] == "phase_2_waf"
    # the partial deliverable first, then the requirements: the state is replaced by the
    # briefing and never counts against the budget (2)
    assert [f["path"] for f in b["load"]] == [art, "agent-output/demo/01-requirements.md"]
    skipped = {f["path"]: f["reason"] for f in b["skip"]}
    assert "briefing" in skipped["agent-output/demo/00-session-state.json"]
    # the commands name the project and the session the first one takes, as the skill does
    sid = out["session"]["id"]
    assert out["commands"][:2] == [
        {"run": f"session-resume session start --project demo --session {sid}", "when": "now"},
        {
            "run": f"session-resume checkpoint 2 phase_3_cost --project demo --session {sid}",
            "when": "after cost estimate produced",
        },
    ]
    # the text output shows the same briefing and plan
    text = sh.run("resume", "agent-output/demo").stdout
    assert "No DR target" in text and "checkpoint 2 phase_3_cost" in text
    assert f"{art} (partial: continue it)" in text  # under "read now", listed once
    assert "already loaded" not in text


def test_gate_handover_is_a_start_and_costs_no_attempt(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    sh = Shell(repo)
    p = ("--project", "demo")
    sh.run("init", "demo")
    sh.run("start", "1", *p)
    sh.run("transition", "--complete", "1", "--start", "2", *p)
    # the chat ends at the gate without `session end`: the lease goes stale (an orphan)
    sh.now += timedelta(hours=2)
    out = _decision(sh)
    codes = [r["code"] for r in out["reasons"]]
    assert (out["action"], codes, out["step"]) == ("start", ["SR712"], "2")
    assert out["briefing"]["next_checkpoint"]["id"] == "phase_1_prereqs"
    before = json.loads((d / "00-session-state.json").read_text())["steps"]["2"]["attempts"]
    assert out["commands"][0]["run"].startswith("session-resume session start ")
    sh.run(*out["commands"][0]["run"].split()[1:])
    sh.run(*out["commands"][1]["run"].split()[1:])
    state = json.loads((d / "00-session-state.json").read_text())
    assert state["steps"]["2"]["attempts"] == before
    assert _events(d)[-1]["detail"].get("handover") is True


def test_optional_next_step_names_the_skip_command(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    sh = Shell(repo)
    p = ("--project", "demo")
    sh.run("init", "demo")
    sh.run("start", "1", *p)
    sh.run("transition", "--complete", "1", "--start", "2", *p)
    sh.run("complete", "2", *p)
    out = _decision(sh)
    assert (out["action"], out["step"]) == ("start", "3")
    assert out["briefing"]["optional"] is True
    assert not [c for c in out["commands"] if " skip 3 " in c["run"]]
    skip = [c["run"] for c in out["alternatives"] if " skip 3 " in c["run"]]
    assert skip, out["alternatives"]
    sh.run(*shlex.split(skip[0])[1:])
    out = _decision(sh, "--session", shlex.split(skip[0])[-1])  # the session the skip took
    assert (out["action"], out["step"]) == ("start", "3_5")
    assert out["briefing"]["optional"] is False
    assert (
        json.loads((d / "00-session-state.json").read_text())["steps"]["3"]["status"] == "skipped"
    )


def test_review_audit_write_moment(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    sh = Shell(repo)
    p = ("--project", "demo")
    sh.run("init", "demo")
    sh.run("start", "1", *p)
    audit = ("review-audit", "1", "--complexity", "standard", "--passes-planned", "2")
    sh.run(*audit, "--passes-executed", "1", "--model", "gpt-5", *p)
    res = sh.run(
        "review-audit", "1", "--skipped-pass", "2", "--skip-reason", "pass 1: 0 must_fix", *p
    )
    assert "1 of 2 passes run (standard)" in res.stdout and "session " in res.stdout
    state = json.loads((d / "00-session-state.json").read_text())
    assert state["review_audit"]["step_1"] == {
        "complexity": "standard",
        "passes_planned": 2,
        "passes_executed": 1,
        "skipped": [2],
        "skip_reasons": ["pass 1: 0 must_fix"],
        "models_used": ["gpt-5"],
    }
    ev = _events(d)[-1]
    assert (ev["event"], ev["step"], ev["detail"]["skipped"]) == ("review_audit", "1", [2])
    assert run_cli("validate", str(d), "--strict", cwd=repo).returncode == 0
    # checked against the workflow; a refusal writes nothing
    before = (d / "00-session-state.json").read_bytes()
    for args, code in (
        (("review-audit", "3", "--complexity", "simple"), "SR710"),  # step 3 is not reviewed
        (("review-audit", "1", "--complexity", "huge"), "SR420"),
        (("review-audit", "1", "--skipped-pass", "3", "--skip-reason", "x"), "SR710"),
        (("review-audit", "1", "--passes-executed", "2"), "SR710"),  # 2 run + 1 skipped > 2
    ):
        res = sh.run(*args, *p, ok=False)
        assert res.returncode == 1 and code in res.stderr, (args, res.stderr)
    assert (d / "00-session-state.json").read_bytes() == before
    # the briefing and the handoff show it
    b = _decision(sh, "--step", "1")["briefing"]
    assert b["review_audit"]["models_used"] == ["gpt-5"]
    sh.run("render", "handoff", "agent-output/demo")
    handoff = (d / "00-handoff.md").read_text()
    assert "review_audit.step_1: 1 of 2 passes run (standard; models gpt-5" in handoff


def test_recover_says_in_one_line_what_it_did(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    sh = Shell(repo)
    sh.run("init", "demo")
    sh.run("start", "1", "--project", "demo")
    (d / "00-session-state.json").write_bytes(b"")
    res = sh.run("recover", "agent-output/demo")
    lines = res.stdout.splitlines()
    assert len(lines) == 1 and res.stderr == ""
    assert "restored 00-session-state.json from .bak" in lines[0] and "SR110" in lines[0]
    assert "corrupt file is kept as 00-session-state.json.corrupt-" in lines[0]
    assert "error" not in res.stdout
    # nothing usable at all: recreated, and it says why
    (d / "00-session-state.json").write_bytes(b"{")
    (d / "00-session-state.json.bak").write_bytes(b"{")
    res = sh.run("recover", "agent-output/demo")
    assert len(res.stdout.splitlines()) == 1
    assert "no usable .bak: created a fresh state" in res.stdout and "SR" in res.stdout


def test_report_on_a_corrupt_state_says_so_and_lists_missing_artifacts(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    sh = Shell(repo)
    p = ("--project", "demo")
    sh.run("init", "demo")
    sh.run("start", "1", *p)
    (d / "01-requirements.md").write_text("req\n")
    sh.run(
        "checkpoint",
        "1",
        "phase_1_discovery",
        "--artifact",
        "agent-output/demo/01-requirements.md",
        *p,
    )
    sh.run("complete", "1", *p)
    sh.run("start", "2", *p)
    sh.run("session", "end", *p)
    (d / "01-requirements.md").unlink()  # a completed step's artifact gone
    res = sh.run("report", "agent-output/demo", "--format", "json")
    rep = json.loads(res.stdout)
    assert rep["state_problem"] is None
    assert rep["possibly_incomplete"] == [
        {
            "path": "agent-output/demo/01-requirements.md",
            "why": "missing (listed by step 1, complete)",
        }
    ]
    (d / "00-session-state.json").write_bytes(b"")
    rep = json.loads(sh.run("report", "agent-output/demo", "--format", "json").stdout)
    assert rep["state"] == "corrupt" and rep["state_problem"]["codes"] == ["SR110"]
    assert rep["state_problem"]["from_backup"] is True
    assert [f["path"] for f in rep["possibly_incomplete"]] == [
        "agent-output/demo/01-requirements.md"
    ]
    text = sh.run("report", "agent-output/demo").stdout
    assert "STATE FILE CORRUPT (SR110)" in text and "01-requirements.md" in text
    assert rep["recommended"]["action"] == "needs_recovery"


def _readme_life_cycle() -> str:
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### An agent's life cycle") :]
    return section[section.index("```sh\n") + 6 : section.index("\n```", section.index("```sh"))]


def test_readme_life_cycle_runs_as_written(tmp_path: Path) -> None:
    """The README's block, run with bash in a fresh repository: a real owner process is
    killed, and the final `resume` explains the crash and what to do."""
    block = _readme_life_cycle()
    assert "jq" not in block and "$AGENT_PID" not in block
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "SESSION_RESUME_SESSION": "",
    }
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "SR511" not in proc.stdout + proc.stderr
    tail = proc.stdout[proc.stdout.index("action: ") :]
    assert tail.startswith("action: resume_from_checkpoint")
    assert "after checkpoint phase_2_waf" in tail and "orphaned session" in tail
    assert (
        "No RTO stated" in tail and "02-architecture-assessment.md (partial: continue it)" in tail
    )
    d = tmp_path / "agent-output" / "shop"
    assert run_cli("validate", str(d), "--strict", cwd=tmp_path).returncode == 0
