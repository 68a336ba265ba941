"""The plan records the gate's required decisions before `complete` (fresh-agent review: the
commands ended in `complete 2` with Gate 2's required decision unrecorded, and only the
SR717 warning after it said so). Followed literally, each `decide` with the user's choice in
place of VALUE, the step completes with no SR717."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from conftest import run_cli

NOW = ("--now", "2026-03-02T12:00:00Z")
S = ("--project", "demo", "--session", "s1")


def test_following_the_plan_records_the_gate_decisions_before_complete(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for argv in (["init", "demo", "--session", "s1"], ["session", "start", *S], ["start", "1", *S]):
        assert run_cli(*argv, *NOW, cwd=tmp_path).returncode == 0
    answer = json.loads(
        run_cli(
            "resume", "agent-output/demo", "--session", "s1", "--format", "json", *NOW, cwd=tmp_path
        ).stdout
    )
    runs = [c["run"] for c in answer["commands"]]
    complete = next(i for i, r in enumerate(runs) if " complete 1 " in f"{r} ")
    decides = [c for c in answer["commands"][:complete] if " decide " in c["run"]]
    gate = answer["plan"]["gate"]
    required = [d["key"] for d in gate["decisions"] if d["required"] and not d["value"]]
    assert required and [c["run"].split()[2] for c in decides] == required
    for c in decides:
        assert c["when"].startswith("only with the user's choice of"), c
        assert "which replaces VALUE" in c["when"]
    (tmp_path / "agent-output" / "demo" / "01-requirements.md").write_text("# r\n")
    for c in answer["commands"][: complete + 1]:
        argv = shlex.split(c["run"])[1:]
        if argv[0] == "decide":
            allowed = next(d["allowed"] for d in gate["decisions"] if d["key"] == argv[1])
            argv = [(allowed[0] if allowed else "chosen") if w == "VALUE" else w for w in argv]
        if argv[0] == "checkpoint":
            argv += ["--artifact", "agent-output/demo/01-requirements.md"]
        proc = run_cli(*argv, "--format", "json", *NOW, cwd=tmp_path)
        assert proc.returncode == 0, (argv, proc.stdout, proc.stderr)
        codes = [w["code"] for w in json.loads(proc.stdout).get("warnings", [])]
        assert "SR717" not in codes and "SR716" not in codes, (argv, codes)


def _answer(tmp_path: Path, *argv: str) -> dict:
    proc = run_cli("resume", "agent-output/demo", *argv, "--format", "json", *NOW, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out: dict = json.loads(proc.stdout)
    return out


def test_an_open_gate_after_complete_is_never_dropped(tmp_path: Path) -> None:
    """Fresh-agent review: after `complete 2` with Gate 2's required decision empty, `resume
    --step 2` said "nothing to do" (offer_rerun) and the orchestrator's plan started step 3
    "after its decisions are recorded" without a command recording them."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    steps = [["init", "demo", "--session", "s1"], ["session", "start", *S], ["start", "1", *S]]
    steps += [["complete", "1", *S], ["start", "2", *S], ["complete", "2", *S]]
    for argv in steps:
        assert run_cli(*argv, *NOW, cwd=tmp_path).returncode == 0, argv
    decide = "session-resume decide architecture_pattern VALUE --project demo --session s1"

    step_agent = _answer(tmp_path, "--step", "2", "--session", "s1")
    assert step_agent["action"] == "offer_rerun"
    (reason,) = step_agent["reasons"]
    assert "Gate 2 is still open" in reason["message"] and "Gate 2" in reason["hint"]
    approve = "session-resume approve 2 --project demo --session s1"
    end = "session-resume session end --project demo --session s1"
    assert [c["run"] for c in step_agent["commands"]] == [
        decide,
        approve,
        end,
        "session-resume start 2 --force --project demo --session s1",
    ]
    assert step_agent["commands"][0]["when"].startswith("only with the user's choice of")
    assert step_agent["commands"][1]["when"].startswith("after the user approved Gate 2")
    assert step_agent["commands"][2]["when"].startswith(
        "after the approval of Gate 2 is recorded (and the skip of 3 if the user chose it): "
        "this chat ends here"
    )

    orchestrator = _answer(tmp_path, "--session", "s1")
    assert (orchestrator["action"], orchestrator["step"]) == ("start", "3")
    runs = [c["run"] for c in orchestrator["commands"]]
    assert runs[:3] == [
        decide,
        approve,
        "session-resume start 3 --project demo --session s1",
    ]

    # the decision recorded with the user's choice: the gate is still open until approved
    argv = shlex.split(decide.replace("VALUE", "hub-spoke"))[1:]
    assert run_cli(*argv, *NOW, cwd=tmp_path).returncode == 0
    again = _answer(tmp_path, "--step", "2", "--session", "s1")
    assert [c["run"] for c in again["commands"]] == [
        approve,
        end,
        "session-resume start 2 --force --project demo --session s1",
    ]
    # approved: no answer names the gate again
    assert run_cli(*shlex.split(approve)[1:], *NOW, cwd=tmp_path).returncode == 0
    runs = " ".join(c["run"] for c in _answer(tmp_path, "--session", "s1")["commands"])
    assert " decide " not in runs and " approve " not in runs
    after = _answer(tmp_path, "--step", "2", "--session", "s1")
    assert "still open" not in after["reasons"][0]["message"]
    assert [c["run"] for c in after["commands"]] == [
        "session-resume start 2 --force --project demo --session s1"
    ]


def test_the_gate_says_what_passes_it_and_the_tier_where_it_is_decided(tmp_path: Path) -> None:
    """Fresh-agent review 3: after `complete` no command records the gate, and "tier standard
    (complexity unset)" left the agent guessing. The plan's gate says that the user's approval
    passes it and no write records it (the start of a later step passes the gate, the
    offer_rerun hint says); the review audit names
    the gate where its tier is decided; a complete step has no next checkpoint."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for argv in (["init", "demo", "--session", "s1"], ["session", "start", *S]):
        assert run_cli(*argv, *NOW, cwd=tmp_path).returncode == 0
    for argv in (["start", "1"], ["complete", "1"], ["start", "2"]):
        assert run_cli(*argv, *S, *NOW, cwd=tmp_path).returncode == 0
    ans = _answer(tmp_path, "--session", "s1")
    plan = ans["plan"]
    assert plan["gate"]["rule"] == (
        "ask the user's approval once, showing the deliverables and open findings; then record "
        "it with `approve` and the decisions the user gave"
    )
    assert plan["gate"]["approve"] == "session-resume approve 2 --project demo --session s1"
    assert plan["gate"]["approved"] is None
    audit = plan["review_audit"]
    assert (audit["tier"], audit["tier_decided"], audit["tier_gate"]) == (
        "standard",
        False,
        "Gate 2.5",
    )
    text = run_cli("resume", "agent-output/demo", "--session", "s1", *NOW, cwd=tmp_path).stdout
    assert "(tier standard until Gate 2.5 decides complexity: use it as printed)" in text
    assert f"Gate 2 (approval) after `complete`: {plan['gate']['rule']}" in text
    assert "now null" not in text
    assert run_cli("complete", "2", *S, *NOW, cwd=tmp_path).returncode == 0
    done = _answer(tmp_path, "--step", "2", "--session", "s1")
    assert done["action"] == "offer_rerun"
    assert done["briefing"]["next_checkpoint"] is None
    assert "then the approval (`approve`, in the commands)" in done["reasons"][0]["hint"]
