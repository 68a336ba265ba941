"""Issue 12, point 7: a scripted fresh agent per situation. It knows only what
`session-resume resume --format json` returns: it acts on `action`, reads the files in
`briefing.load`, runs each suggested command as printed (a real subprocess of the installed
CLI), and uses the briefing's checkpoints for its own work. Each test asserts the briefing's
content and a valid state at the end."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from session_resume.storage import store

from conftest import apex_state, dump, run_cli

# Test tier (README "Test tiers"): whole agent life cycles through the CLI.
pytestmark = pytest.mark.slow

T0 = datetime(2026, 3, 2, 11, 0, tzinfo=UTC)


class FreshAgent:
    """A new chat: no memory, a stateless shell; one session directory."""

    def __init__(self, repo: Path, d: Path, step: str | None = None) -> None:
        self.repo, self.d, self.step = repo, d, step
        self.now = T0
        self.session: str | None = None
        self.followed: list[str] = []
        self.read: list[str] = []

    def _cli(self, *argv: str) -> subprocess.CompletedProcess[str]:
        self.now += timedelta(minutes=1)
        stamp = self.now.strftime("%Y-%m-%dT%H:%M:%SZ")
        return run_cli(*argv, "--now", stamp, cwd=self.repo, env={"SESSION_RESUME_SESSION": ""})

    def ask(self) -> dict[str, Any]:
        argv = ["resume", str(self.d.relative_to(self.repo)), "--format", "json"]
        if self.step:
            argv += ["--step", self.step]
        if self.session:
            argv += ["--session", self.session]
        res = self._cli(*argv)
        assert res.returncode == 0, res.stdout + res.stderr
        out: dict[str, Any] = json.loads(res.stdout)
        return out

    def follow(self, command: str) -> subprocess.CompletedProcess[str]:
        """Run a suggested command exactly as printed."""
        argv = shlex.split(command)
        assert argv[0] == "session-resume", command
        res = self._cli(*argv[1:])
        assert res.returncode == 0, f"{command}\n{res.stdout}{res.stderr}"
        self.followed.append(command)
        return res

    def take_lease(self) -> None:
        res = self._cli("session", "start", "--session-dir", str(self.d))
        assert res.returncode == 0, res.stderr
        self.session = res.stdout.strip()

    def work(self, key: str, checkpoint: str) -> str:
        """The agent's own work towards ``checkpoint``: a deliverable, then the write."""
        art = f"{self.d.relative_to(self.repo).as_posix()}/step-{key}.md"
        with open(self.repo / art, "a") as fh:
            fh.write(f"work up to {checkpoint}\n")
        argv = ["checkpoint", key, checkpoint, "--artifact", art, "--session-dir", str(self.d)]
        res = self._cli(*argv, *(["--session", self.session] if self.session else []))
        assert res.returncode == 0, res.stderr
        return art

    def run_step(self, *, skip_optional: bool = False, limit: int = 20) -> dict[str, Any]:
        """Act on the answers until the step the first answer names is complete (or
        skipped); returns the first answer."""
        first = None
        key = None
        for _ in range(limit):
            ans = self.ask()
            first = first or ans
            action = ans["action"]
            if action in ("needs_recovery", "migrate_first"):
                assert ans["briefing"] is None
                self.follow(ans["commands"][0])
                continue
            assert action != "session_active", ans
            b = ans["briefing"]
            assert b is not None and b["step"] == ans["step"]
            if key is None:
                key = ans["step"]
                if self.session is None:
                    self.take_lease()
            elif ans["step"] != key or action in ("offer_rerun", "workflow_complete"):
                return first
            for f in b["load"]:  # read exactly what the briefing says
                assert (self.repo / f["path"]).is_file(), f
                self.read.append(f["path"])
            if action in ("start", "restart_step"):
                skip = [c for c in ans["commands"] if " skip " in c]
                if skip_optional and b["optional"]:
                    self.follow(skip[0])
                    return first
                nxt = b["next_checkpoint"]["id"]
                self.follow(ans["commands"][0])
                self.work(key, nxt)
            elif action == "resume_from_checkpoint":
                cmd = ans["commands"][0]
                if " checkpoint " in cmd:
                    self.work(key, b["next_checkpoint"]["id"])
                else:
                    self.follow(cmd)  # complete
                    return first
            else:
                raise AssertionError(f"unexpected action {action}: {ans}")
        raise AssertionError("the agent did not finish its step")

    def assert_valid(self) -> None:
        res = run_cli("validate", str(self.d), "--strict", cwd=self.repo)
        assert res.returncode == 0, res.stdout + res.stderr

    def state(self) -> dict[str, Any]:
        out: dict[str, Any] = json.loads((self.d / store.STATE).read_text())
        return out


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / ".git").mkdir()
    d = tmp_path / "agent-output" / "demo"
    d.mkdir(parents=True)
    (d / "01-requirements.md").write_text("requirements\n")
    return tmp_path, d


def _seed(d: Path, doc: dict[str, Any] | None = None) -> dict[str, Any]:
    doc = doc or apex_state()
    doc["decisions"]["region"] = "swedencentral"
    doc["open_findings"] = ["No RTO stated"]
    doc["decision_log"] = [
        {
            "id": "D001",
            "step": "1",
            "title": "Region",
            "choice": "swedencentral",
            "rationale": "data residency",
            "timestamp": "2026-03-02T09:20:00Z",
        }
    ]
    (d / store.STATE).write_bytes(dump(doc))
    return doc


def test_crash_mid_step_with_a_killed_owner(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    _seed(d)
    owner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        stamp = (T0 - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
        res = run_cli(
            "session",
            "start",
            "--session-dir",
            str(d),
            "--session",
            "crashed-1",
            "--pid",
            str(owner.pid),
            "--now",
            stamp,
            cwd=repo,
        )
        assert res.returncode == 0, res.stderr
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    agent = FreshAgent(repo, d)
    first = agent.run_step()
    assert first["action"] == "resume_from_checkpoint" and first["step"] == "2"
    assert first["orphan"]["reason"] == "owner_dead"
    b = first["briefing"]
    assert b["decisions"]["region"] == "swedencentral"
    assert b["open_findings"] == ["No RTO stated"]
    assert [e["id"] for e in b["decision_log"]] == ["D001"]
    assert b["last_checkpoint"]["id"] == "phase_2_waf" and b["last_checkpoint"]["after"]
    assert b["next_checkpoint"]["id"] == "phase_3_cost"
    # no partial deliverable yet: the step's startup input within the budget, never the state
    assert [f["path"] for f in b["load"]] == ["agent-output/demo/01-requirements.md"]
    assert "agent-output/demo/00-session-state.json" in [f["path"] for f in b["skip"]]
    state = agent.state()
    assert state["steps"]["2"]["status"] == "complete"
    assert agent.session is not None and agent.session != "crashed-1"
    agent.assert_valid()


def test_corrupt_state_with_a_good_bak(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    good = _seed(d)
    (d / store.BAK).write_bytes(dump({**good, "revision": 2}))
    (d / store.STATE).write_bytes(b"")
    agent = FreshAgent(repo, d)
    first = agent.run_step()
    assert first["action"] == "needs_recovery" and first["briefing"] is None
    assert agent.followed[0].startswith("session-resume recover ")
    assert agent.state()["steps"]["2"]["status"] == "complete"
    assert agent.state()["open_findings"] == ["No RTO stated"]
    agent.assert_valid()


def test_old_version_is_migrated_first(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    doc = apex_state()
    doc["schema_version"] = "2.0"
    _seed(d, doc)
    agent = FreshAgent(repo, d)
    first = agent.run_step()
    assert first["action"] == "migrate_first"
    assert agent.followed[0].startswith("session-resume migrate ")
    assert agent.state()["schema_version"] == "3.0"
    assert agent.state()["steps"]["2"]["status"] == "complete"
    agent.assert_valid()


def test_another_live_session_is_left_alone(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    _seed(d)
    stamp = T0.strftime("%Y-%m-%dT%H:%M:%SZ")
    res = run_cli(
        "session", "start", "--session-dir", str(d), "--session", "other", "--now", stamp, cwd=repo
    )
    assert res.returncode == 0
    before = (d / store.STATE).read_bytes()
    agent = FreshAgent(repo, d)
    agent.session = "mine"
    ans = agent.ask()
    assert (ans["action"], ans["reasons"], ans["briefing"]) == ("session_active", ["SR511"], None)
    assert ans["lease"]["session"] == "other"
    # the agent writes nothing; the suggested command is an explicit, logged takeover
    assert ans["commands"] == [
        "session-resume session start --takeover --project demo --session mine"
    ]
    assert (d / store.STATE).read_bytes() == before
    # the other session ends: now the agent resumes
    res = run_cli(
        "session", "end", "--session-dir", str(d), "--session", "other", "--now", stamp, cwd=repo
    )
    assert res.returncode == 0, res.stderr
    agent.session = None
    first = agent.run_step()
    assert first["action"] == "resume_from_checkpoint"
    assert agent.state()["steps"]["2"]["status"] == "complete"
    agent.assert_valid()


def _handed_over_at_gate_2(repo: Path, d: Path) -> None:
    """The previous agent completes step 2 and starts (optional) step 3 in one `transition`
    at gate 2 (a session break is recommended there), then its chat ends without `session
    end`: its lease goes stale."""
    _seed(d)
    stamp = T0.strftime("%Y-%m-%dT%H:%M:%SZ")
    res = run_cli(
        "transition",
        "--complete",
        "2",
        "--start",
        "3",
        "--session-dir",
        str(d),
        "--session",
        "prev",
        "--now",
        stamp,
        cwd=repo,
        env={"SESSION_RESUME_SESSION": ""},
    )
    assert res.returncode == 0, res.stderr


def test_gate_handover_is_a_start_of_the_step(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    _handed_over_at_gate_2(repo, d)
    attempts = json.loads((d / store.STATE).read_text())["steps"]["3"]["attempts"]
    agent = FreshAgent(repo, d)
    agent.now = T0 + timedelta(hours=2)
    first = agent.run_step()
    assert (first["action"], first["step"], first["reasons"]) == ("start", "3", ["SR712"])
    assert "SR512" in first["warnings"]  # the previous chat left its lease
    b = first["briefing"]
    assert b["optional"] is True and b["last_checkpoint"] is None
    assert b["next_checkpoint"]["id"] == "phase_1_prereqs"
    assert b["open_findings"] == ["No RTO stated"]
    state = agent.state()
    assert state["steps"]["3"]["status"] == "complete"
    assert state["steps"]["3"]["attempts"] == attempts  # the handover cost no attempt
    agent.assert_valid()


def test_optional_next_step_is_skipped_with_the_suggested_command(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    _handed_over_at_gate_2(repo, d)
    agent = FreshAgent(repo, d)
    agent.now = T0 + timedelta(hours=2)
    first = agent.run_step(skip_optional=True)
    assert (first["action"], first["step"]) == ("start", "3")
    assert any(c.startswith("session-resume skip 3 ") for c in first["commands"])
    assert agent.state()["steps"]["3"]["status"] == "skipped"
    ans = agent.ask()
    assert (ans["action"], ans["step"]) == ("start", "3_5")
    assert ans["briefing"]["optional"] is False
    assert not [c for c in ans["commands"] if " skip " in c]
    agent.assert_valid()
