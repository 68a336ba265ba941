"""The handoff's Skill Context agrees with the state and the workflow (issue 26 point 11): the
complexity tier a review audit recorded when the decision is unset, one agent per step (the
state's, the one for the decided IaC tool, or the workflow's own id, never an older alias),
and the open must-fix findings that block the next gate.

Every command runs the real CLI in a subprocess."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from session_resume.storage import store

from conftest import apex_state, dump, run_cli

NOW = ("--now", "2026-03-02T12:00:00Z")
ENV = {"SESSION_RESUME_SESSION": ""}


def _ok(repo: Path, *argv: str) -> None:
    res = run_cli(*argv, *NOW, cwd=repo, env=ENV)
    assert res.returncode == 0, res.stdout + res.stderr


def _handoff(repo: Path) -> list[str]:
    _ok(repo, "render", "handoff", "agent-output/demo")
    return (repo / "agent-output" / "demo" / "00-handoff.md").read_text().splitlines()


def _seeded(tmp_path: Path, doc: dict[str, Any]) -> Path:
    (tmp_path / ".git").mkdir(parents=True)
    d = tmp_path / "agent-output" / "demo"
    d.mkdir(parents=True)
    (d / store.STATE).write_bytes(dump(doc))
    return tmp_path


def test_the_tier_a_review_audit_recorded_is_the_complexity(tmp_path: Path) -> None:
    repo = _seeded(tmp_path, apex_state())
    assert "- Complexity: standard (not set)" in _handoff(repo)  # nothing recorded yet
    audit = ("--complexity", "complex", "--passes-planned", "3", "--passes-executed", "3")
    _ok(repo, "review-audit", "2", *audit, "--model", "m1", "--project", "demo")
    lines = _handoff(repo)
    assert "- Complexity: complex (recorded by the review audit of step 2)" in lines, lines
    decided = apex_state()
    decided["decisions"]["complexity"] = "simple"
    assert "- Complexity: simple" in _handoff(_seeded(tmp_path / "d", decided))


def test_one_agent_per_step(tmp_path: Path) -> None:
    doc = apex_state()
    doc["steps"]["2"].update(status="complete", sub_step=None, completed="2026-03-02T11:00:00Z")
    doc["steps"]["3"]["agent"] = ""  # apex names two agents for step 3: the state records none
    lines = _handoff(_seeded(tmp_path / "design", doc))
    assert "- Step 3 agent: 04-Design" in lines, lines
    for key in ("1", "2", "3", "3_5"):
        doc["steps"][key].update(status="complete", sub_step=None, completed=doc["updated"])
    doc["steps"]["4"].update(status="complete", sub_step=None, completed=doc["updated"])
    doc["decisions"]["deployment_strategy"] = "single-phase"
    undecided = _handoff(_seeded(tmp_path / "undecided", doc))
    assert (
        "- Step 5 agent: 06b-Bicep CodeGen or 06t-Terraform CodeGen (by iac_tool, not decided yet)"
        in undecided
    ), undecided
    doc["decisions"]["iac_tool"] = doc["iac_tool"] = "Terraform"
    assert "- Step 5 agent: 06t-Terraform CodeGen" in _handoff(_seeded(tmp_path / "tf", doc))


def test_open_must_fix_findings_block_the_next_gate(tmp_path: Path) -> None:
    doc = apex_state()
    doc["open_findings"] = ["No RTO stated", "No budget alert"]
    text = "\n".join(_handoff(_seeded(tmp_path, doc)))
    assert (
        "2 open must_fix findings to fix, or to show the user at the gate if only the user "
        "can settle it." in text
    )
