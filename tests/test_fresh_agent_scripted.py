"""Issue 12, point 7: a scripted fresh agent per situation. It knows only what
`session-resume resume --format json` returns: it acts on `action`, reads the files in
`briefing.load`, runs each suggested command as printed (a real subprocess of the installed
CLI), and uses the briefing's checkpoints for its own work. Each test asserts the briefing's
content and a valid state at the end."""

from __future__ import annotations

import json
import re
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
    """A new chat: no memory, a stateless shell; one session directory. It follows the
    answer's ``commands`` literally, in order: a command whose ``when`` is ``now`` at once; one
    whose ``when`` is ``after <work>`` once it has done that work (its deliverable gets a
    line naming the checkpoint); never one that needs the user's consent or a condition."""

    def __init__(self, repo: Path, d: Path, step: str | None = None) -> None:
        self.repo, self.d, self.step = repo, d, step
        self.now = T0
        self.session: str | None = None
        self.followed: list[str] = []
        self.read: list[str] = []
        self.worked: list[str] = []  # checkpoint ids whose work is done, in order
        self.recorded: list[str] = []  # checkpoint ids written, in order

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
        for e in out["reasons"] + out["warnings"]:  # every code carries its words
            assert e["message"] and e["hint"], e
        return out

    def follow(self, command: str, *extra: str) -> subprocess.CompletedProcess[str]:
        """Run a suggested command exactly as printed (plus ``extra`` options)."""
        argv = shlex.split(command)
        assert argv[0] == "session-resume", command
        res = self._cli(*argv[1:], *extra)
        assert res.returncode == 0, f"{command}\n{res.stdout}{res.stderr}"
        self.followed.append(command)
        if "--session" in argv and argv[1] not in ("resume", "report"):
            self.session = argv[argv.index("--session") + 1]  # the session it took
        return res

    def deliverable(self, key: str) -> str:
        return f"{self.d.relative_to(self.repo).as_posix()}/step-{key}.md"

    def do_work(self, key: str, what: str) -> None:
        """The agent's own work: a line in its deliverable."""
        with open(self.repo / self.deliverable(key), "a") as fh:
            fh.write(f"work: {what}\n")
        self.worked.append(what)

    def follow_plan(self, ans: dict[str, Any]) -> None:
        """Every command in order, literally; the work its ``when`` names first."""
        key = ans["step"]
        for c in ans["commands"]:
            when, argv = c["when"], shlex.split(c["run"])
            if when.startswith("only"):
                continue  # needs the user's consent or a condition this agent cannot meet
            wait = re.match(r"at or after (\S+) ", when)
            if wait:  # it waits (writing nothing) until then; only a read may be waited for
                assert argv[1] == "resume", c
                until = datetime.strptime(wait[1], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
                self.now = max(self.now, until)
            if self.session is not None and argv[1] not in ("resume", "recover", "migrate"):
                assert argv[argv.index("--session") + 1] == self.session, c  # names it
            extra: tuple[str, ...] = ()
            if argv[1] == "checkpoint":
                assert when.startswith("after "), c  # never "now": its work comes first
                self.do_work(key, argv[3])
                extra = ("--artifact", self.deliverable(key))
                self.recorded.append(argv[3])
            elif argv[1] == "complete":
                assert when.startswith("after "), c
            self.follow(c["run"], *extra)

    def run_step(self, *, skip_optional: bool = False, limit: int = 8) -> dict[str, Any]:
        """Act on the answers until the step the first answer names is complete (or
        skipped); returns the first answer."""
        first = None
        for _ in range(limit):
            ans = self.ask()
            first = first or ans
            action = ans["action"]
            if action in ("needs_recovery", "migrate_first"):
                assert ans["briefing"] is None and ans["plan"] is None
                assert [c["when"] for c in ans["commands"]][0] == "now"
                self.follow(ans["commands"][0]["run"])  # then ask again, as the next says
                continue
            assert action != "session_active", ans
            if action not in ("start", "restart_step", "resume_from_checkpoint", "continue_step"):
                return first
            b, plan = ans["briefing"], ans["plan"]
            assert b is not None and plan is not None and plan["step"] == ans["step"]
            for f in b["load"]:  # read exactly what the briefing says
                assert (self.repo / f["path"]).is_file(), f
                self.read.append(f["path"])
            # the plan's checkpoints are what the commands record, in the same order
            planned = [c["id"] for c in plan["checkpoints"]]
            in_commands = [
                shlex.split(c["run"])[3] for c in ans["commands"] if " checkpoint " in c["run"]
            ]
            assert in_commands == planned
            if skip_optional and plan["optional"]:
                self.follow(ans["alternatives"][0]["run"])
                return first
            self.follow_plan(ans)
            return first
        raise AssertionError("the agent did not finish its step")

    def assert_no_early_checkpoint(self) -> None:
        """Every checkpoint the agent recorded had its work done first, and the worklog holds
        them in the order of the work."""
        assert self.recorded == self.worked
        events = [
            json.loads(line)
            for line in (self.d / "00-worklog.jsonl").read_text().splitlines()
            if line.strip()
        ]
        mine = [e["sub_step"] for e in events if e["event"] == "checkpoint"]
        assert mine[-len(self.recorded) :] == self.recorded if self.recorded else True
        for cp in self.recorded:  # its work is in the deliverable
            text = (self.repo / self.deliverable(self.state_key())).read_text()
            assert f"work: {cp}" in text

    def state_key(self) -> str:
        return next(
            k for k, s in self.state()["steps"].items() if any("step-" in a for a in s["artifacts"])
        )

    def assert_valid(self, strict: bool = True) -> None:
        res = run_cli("validate", str(self.d), *(["--strict"] if strict else []), cwd=self.repo)
        assert res.returncode == 0, res.stdout + res.stderr

    def state(self) -> dict[str, Any]:
        out: dict[str, Any] = json.loads((self.d / store.STATE).read_text())
        return out


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / ".git").mkdir()
    d = tmp_path / "agent-output" / "demo"
    d.mkdir(parents=True)
    (d / "01-requirements.md").write_text("requirements\n")
    # step 2 is at phase_2_waf (conftest.apex_state): the workflow's deliverable is drafted
    (d / "02-architecture-assessment.md").write_text("# WAF draft\n")
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
    # the workflow's deliverable drafted by phase_2_waf (recorded as no artifact) first, then
    # the step's startup input within the budget, never the state
    assert [f["path"] for f in b["load"]] == [
        "agent-output/demo/02-architecture-assessment.md",
        "agent-output/demo/01-requirements.md",
    ]
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
    codes = [r["code"] for r in ans["reasons"]]
    assert (ans["action"], codes, ans["briefing"]) == ("session_active", ["SR511"], None)
    assert ans["lease"]["session"] == "other"
    # the agent writes nothing: a condition it checks in its own conversation (the id is not
    # there), a read once the lease goes stale, a takeover only with the user's consent
    stale = (T0 + timedelta(seconds=300)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert [c["when"] for c in ans["commands"]] == [
        "only if the id other appears earlier in this conversation or in your notes, printed "
        "by a `session start` you ran; if you cannot find it there, it is not yours",
        f"at or after {stale} (when the lease goes stale unless its holder writes again); "
        "write nothing to this session before; then follow the new answer (the same session "
        "still live then: ask the user whether to wait longer or take over)",
        "only with the user's consent, after telling them session other is live (its last "
        f"heartbeat {ans['lease']['age_seconds']} s ago) and may be working now",
    ]
    assert [shlex.split(c["run"])[1] for c in ans["commands"]] == ["resume", "resume", "session"]
    assert ans["commands"][2]["run"] == (
        "session-resume session start --takeover --project demo --session mine"
    )
    agent.follow_plan(ans)  # a literal agent waits until the lease goes stale, then asks
    assert len(agent.followed) == 1 and agent.now > T0 + timedelta(seconds=300)
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
    codes = [r["code"] for r in first["reasons"]]
    assert (first["action"], first["step"], codes) == ("start", "3", ["SR712"])
    assert "SR512" in [w["code"] for w in first["warnings"]]  # the previous chat left its lease
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
    assert not any(" skip " in c["run"] for c in first["commands"])
    assert first["alternatives"][0]["run"].startswith("session-resume skip 3 ")
    assert agent.state()["steps"]["3"]["status"] == "skipped"
    ans = agent.ask()
    assert (ans["action"], ans["step"]) == ("start", "3_5")
    assert ans["briefing"]["optional"] is False
    assert not [c for c in ans["commands"] + ans["alternatives"] if " skip " in c["run"]]
    agent.assert_valid()


def test_mid_step_resume_records_nothing_before_its_work(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    _seed(d)
    (d / "02-architecture-assessment.md").write_text("draft\n")
    doc = json.loads((d / store.STATE).read_text())
    doc["steps"]["2"]["artifacts"] = ["agent-output/demo/02-architecture-assessment.md"]
    (d / store.STATE).write_bytes(dump(doc))
    agent = FreshAgent(repo, d)
    first = agent.run_step()
    assert first["action"] == "resume_from_checkpoint" and first["warnings"] == []
    plan = first["plan"]
    assert [c["id"] for c in plan["checkpoints"]] == [
        "phase_3_cost",
        "phase_4_challenger",
        "phase_5_artifact",
    ]
    assert plan["review_audit"]["passes"] == 2 and plan["gate"]["id"] == "Gate 2"
    assert plan["next_step"]["key"] == "3" and plan["next_step"]["optional"] is True
    # the partial deliverable first, then the requirements: the state costs no budget
    assert [f["path"] for f in first["briefing"]["load"]] == [
        "agent-output/demo/02-architecture-assessment.md",
        "agent-output/demo/01-requirements.md",
    ]
    agent.assert_no_early_checkpoint()
    state = agent.state()
    assert state["steps"]["2"]["status"] == "complete"
    assert state["review_audit"]["step_2"]["passes_executed"] == 2
    assert not (d / "00-session.active").exists()  # the last command ended the session
    agent.assert_valid()


def test_missing_partial_deliverable_is_a_coded_warning(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    doc = _seed(d)
    doc["steps"]["2"]["artifacts"] = ["agent-output/demo/02-architecture-assessment.md"]
    (d / store.STATE).write_bytes(dump(doc))
    (d / "02-architecture-assessment.md").unlink()
    agent = FreshAgent(repo, d)
    first = agent.run_step()
    (w,) = [w for w in first["warnings"] if w["code"] == "SR714"]
    assert "02-architecture-assessment.md" in w["message"] and "phase_2_waf" in w["hint"]
    assert first["briefing"]["load"] == [
        {"path": "agent-output/demo/01-requirements.md", "why": ANY_WHY}
    ] or [f["path"] for f in first["briefing"]["load"]] == ["agent-output/demo/01-requirements.md"]
    agent.assert_no_early_checkpoint()
    assert agent.state()["steps"]["2"]["status"] == "complete"
    agent.assert_valid()


ANY_WHY = "startup input of this step (workflow budget)"


def test_a_deliverable_never_recorded_and_missing_is_a_coded_warning(tmp_path: Path) -> None:
    """Fresh-agent review 4's blocking gap: the state is past phase_2_waf (the checkpoint
    whose work drafts 02-architecture-assessment.md, per the workflow's `deliverables`) but
    records no artifact, and the file is gone: SR714 names it, the briefing says it is not on
    disk, and the plan's writes record it from then on."""
    repo, d = _repo(tmp_path)
    _seed(d)
    (d / "02-architecture-assessment.md").unlink()
    ans = FreshAgent(repo, d).ask()
    assert ans["action"] == "resume_from_checkpoint"
    (w,) = [w for w in ans["warnings"] if w["code"] == "SR714"]
    assert "agent-output/demo/02-architecture-assessment.md" in w["message"]
    assert "record no checkpoint before it exists" in w["hint"]
    # the work to redo is named: the step's checkpoints up to the recorded one, in order
    assert "redo the work of checkpoints phase_1_prereqs, phase_2_waf that wrote it" in w["hint"], w
    skip = {f["path"]: f["reason"] for f in ans["briefing"]["skip"]}
    assert skip["agent-output/demo/02-architecture-assessment.md"] == "listed but not on disk"
    # with the draft back, no warning, and it is the first file to read
    (d / "02-architecture-assessment.md").write_text("# WAF draft\n")
    ans = FreshAgent(repo, d).ask()
    assert "SR714" not in [w["code"] for w in ans["warnings"]]
    assert ans["briefing"]["load"][0] == {
        "path": "agent-output/demo/02-architecture-assessment.md",
        "why": "partial deliverable of this step: continue it",
    }


def test_the_plan_s_write_records_the_deliverable_its_work_writes(tmp_path: Path) -> None:
    """A fresh start of step 2: the write of phase_2_waf (whose work drafts the workflow's
    deliverable) carries `--artifact agent-output/demo/02-architecture-assessment.md`, the
    form every path of the answer has; followed, the state lists the file in that form."""
    repo, d = _repo(tmp_path)
    doc = _seed(d)
    doc["steps"]["2"].update(status="pending", sub_step=None, started=None)
    (d / store.STATE).write_bytes(dump(doc))
    agent = FreshAgent(repo, d, step="2")
    ans = agent.ask()
    writes = {c["id"]: c["write"] for c in ans["plan"]["checkpoints"]}
    assert writes["phase_2_waf"].startswith(
        "session-resume checkpoint 2 phase_2_waf"
        " --artifact agent-output/demo/02-architecture-assessment.md "
    )
    assert "--artifact" not in writes["phase_3_cost"]
    agent.run_step()
    state = agent.state()
    assert "agent-output/demo/02-architecture-assessment.md" in state["steps"]["2"]["artifacts"]
    agent.assert_valid()


def test_own_session_without_session_is_told_how_to_know(tmp_path: Path) -> None:
    """The agent takes the session (the plan's first command), then asks again forgetting
    `--session`: its own lease looks live; the answer names the id to check, and asked with
    it, the step goes on (no loop, no self-takeover)."""
    repo, d = _repo(tmp_path)
    _seed(d)
    agent = FreshAgent(repo, d, step="2")
    ans = agent.ask()
    agent.follow(ans["commands"][0]["run"])  # session start --session ID
    mine = agent.session
    agent.session = None  # forgets to pass it
    again = agent.ask()
    assert again["action"] == "session_active"
    assert mine is not None and f"--session {mine}" in again["reasons"][0]["hint"]
    assert again["commands"][0]["run"].endswith(f"--session {mine} --format json")
    agent.session = mine  # the id its own `session start` printed
    first = agent.run_step()
    assert first["action"] == "resume_from_checkpoint"
    assert first["commands"][0]["run"].startswith("session-resume checkpoint 2 ")
    agent.assert_no_early_checkpoint()
    assert agent.state()["steps"]["2"]["status"] == "complete"
    agent.assert_valid()


def test_resume_right_after_own_start_continues(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    doc = _seed(d)
    doc["steps"]["2"].update(status="pending", sub_step=None, started=None)
    doc["current_step"] = 1
    (d / store.STATE).write_bytes(dump(doc))
    agent = FreshAgent(repo, d, step="2")
    ans = agent.ask()
    assert ans["action"] == "start"
    agent.follow(ans["commands"][0]["run"])  # session start
    assert " approve 1 " in ans["commands"][1]["run"]  # Gate 1, still open: the user approved
    agent.follow(ans["commands"][1]["run"])
    agent.follow(ans["commands"][2]["run"])  # start 2
    again = agent.ask()  # with --session: continue, never a second start
    assert (again["action"], [r["code"] for r in again["reasons"]]) == ("continue_step", ["SR713"])
    assert not [c for c in again["commands"] if shlex.split(c["run"])[1] == "start"]
    agent.run_step()
    assert agent.state()["steps"]["2"]["attempts"] == 1
    agent.assert_no_early_checkpoint()
    agent.assert_valid()


def _plain(repo: Path, now: datetime, *argv: str) -> subprocess.CompletedProcess[str]:
    """A person at a shell, as the README's Quick start: no `session start`, no session."""
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    res = run_cli(*argv, "--now", stamp, cwd=repo, env={"SESSION_RESUME_SESSION": ""})
    assert res.returncode == 0, res.stdout + res.stderr
    return res


def test_an_implicit_lease_gone_quiet_is_idle_not_a_crash(tmp_path: Path) -> None:
    """Issue 27 point 5: writes naming no session take an implicit lease; silent, it is idle
    (no crash report, no SR512), and the next write goes on with it without "took over"."""
    repo, d = _repo(tmp_path)
    p = ("--project", "demo")
    _plain(repo, T0, "init", "demo")
    _plain(repo, T0, "start", "1", *p)
    later = T0 + timedelta(minutes=10)
    rep = json.loads(_plain(repo, later, "report", "agent-output/demo", "--format", "json").stdout)
    assert rep["crashed"] is False and rep["lease"]["state"] == "idle"
    text = _plain(repo, later, "report", "agent-output/demo").stdout
    assert "CRASHED" not in text and "None" not in text
    ans = json.loads(_plain(repo, later, "resume", "agent-output/demo", "--format", "json").stdout)
    assert "SR512" not in [w["code"] for w in ans["warnings"]] and ans["orphan"] is None
    res = _plain(repo, later, "checkpoint", "1", "phase_1_discovery", *p)
    assert "took over" not in res.stdout + res.stderr
    events = [json.loads(x) for x in (d / "00-worklog.jsonl").read_text().splitlines()]
    assert "takeover" not in [e["event"] for e in events]
    assert len({e["session"] for e in events}) == 1  # one session throughout


def test_an_explicit_session_gone_silent_is_still_an_orphan(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    p = ("--project", "demo")
    _plain(repo, T0, "init", "demo")
    _plain(repo, T0, "session", "start", *p, "--session", "chat-1")
    _plain(repo, T0, "start", "1", *p, "--session", "chat-1")
    later = T0 + timedelta(minutes=10)
    rep = json.loads(_plain(repo, later, "report", "agent-output/demo", "--format", "json").stdout)
    assert rep["crashed"] is True and rep["lease"]["state"] == "stale"


@pytest.mark.mcp  # the real server, through the SDK's client
def test_mid_step_resume_over_the_mcp_sdk_client(tmp_path: Path) -> None:
    """The same agent over MCP: the answer's commands are this server's tool calls
    ``{tool, arguments, when}``; it calls them in order, literally, the work first."""
    pytest.importorskip("mcp", reason="the optional MCP SDK is not installed ('.[mcp]')")
    import anyio
    from mcp import Client, StdioServerParameters

    repo, d = _repo(tmp_path)
    _seed(d)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "session_resume", "mcp", "--root", str(repo)],
        cwd=str(repo),
    )
    worked: list[str] = []
    recorded: list[str] = []
    art = "agent-output/demo/step-2.md"

    async def go() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=60) as c:
            ask = {"project": "demo", "format": "json"}
            ans = (await c.call_tool("resume", ask)).structured_content
            assert ans["action"] == "resume_from_checkpoint"
            for e in ans["reasons"] + ans["warnings"]:
                assert e["message"] and e["hint"] and "session-resume " not in e["hint"]
            for call in ans["commands"]:
                assert set(call) == {"tool", "arguments", "when"}, call
                assert call["arguments"].get("project") == "demo" or call["tool"] == "resume"
                if call["when"].startswith("only"):
                    continue
                args = dict(call["arguments"])
                if call["tool"] == "checkpoint":
                    assert call["when"].startswith("after "), call
                    with open(repo / art, "a") as fh:  # the work, then its write
                        fh.write(f"work: {args['sub_step']}\n")
                    worked.append(args["sub_step"])
                    args["artifacts"] = [art]
                    recorded.append(args["sub_step"])
                r = await c.call_tool(call["tool"], args)
                assert not r.is_error, (call, r.content)
            out: dict[str, Any] = ans
            return out

    ans = anyio.run(go)
    # the server owns the session: no call names one, the first write takes the lease
    # the review audit just before the checkpoint whose work includes the passes
    # (the seeded state is months old: SR708's `finding add`, only if the user is away)
    assert [c["tool"] for c in ans["commands"]] == [
        "finding",
        "checkpoint",
        "review_audit",
        "checkpoint",
        "checkpoint",
        "complete",
        "approve",
        "session_end",
    ]
    assert all("session" not in c["arguments"] for c in ans["commands"])
    assert recorded == worked == ["phase_3_cost", "phase_4_challenger", "phase_5_artifact"]
    state = json.loads((d / store.STATE).read_text())
    assert state["steps"]["2"]["status"] == "complete"
    assert state["steps"]["2"]["artifacts"] == [art]
    res = run_cli("validate", str(d), "--strict", cwd=repo)
    assert res.returncode == 0, res.stdout + res.stderr


def test_the_text_answer_of_a_mid_step_resume_is_short(tmp_path: Path) -> None:
    """The text answer (what `resume` prints, and what a host's session-start hook injects:
    services.resume.plan_text) shows the plan in at most 3,300 characters, the same content
    as the JSON. (It was 2,500 before the answer carried the gate's approval write, the
    pause at a stop mid-step and the next chat's hand-over; what a fresh agent reads before
    its first edit stays far under 8,000 characters.)"""
    repo, d = _repo(tmp_path)
    _seed(d)
    argv = ("resume", "agent-output/demo", "--now", "2026-03-02T12:00:00Z")
    text = run_cli(*argv, cwd=repo, env={"SESSION_RESUME_SESSION": ""}).stdout
    assert len(text) <= 3300, len(text)
    ans = json.loads(
        run_cli(*argv, "--format", "json", cwd=repo, env={"SESSION_RESUME_SESSION": ""}).stdout
    )
    for c in ans["plan"]["checkpoints"]:
        assert f"checkpoint 2 {c['id']} " in text
    assert "[after cost estimate produced]" in text
    assert "No RTO stated" in text and "Gate 2" in text and "next step: 3 (Design)" in text
    assert " None" not in text.replace('"None"', "")  # a value, never a missing field


def test_handoff_and_report_agree_with_resume_after_a_gate(tmp_path: Path) -> None:
    """Issue 26 point 11: a step handed over at a gate is a start for the handoff too, never
    "Restart"; the report prints no None."""
    repo, d = _repo(tmp_path)
    _handed_over_at_gate_2(repo, d)
    later = T0 + timedelta(hours=2)
    _plain(repo, later, "render", "handoff", "agent-output/demo")
    handoff = (d / "00-handoff.md").read_text()
    assert "Start step 3 (Design)" in handoff and "Restart" not in handoff
    report = _plain(repo, later, "report", "agent-output/demo").stdout
    assert "None" not in report and "step: 3" in report


def test_v2_state_with_bare_artifact_names_keeps_one_form(tmp_path: Path) -> None:
    """Issue 26 points 7 and 12: a v2 state listing a bare name is migrated first; the first
    write stores it repository-relative, and naming it in that form adds no second entry."""
    repo, d = _repo(tmp_path)
    doc = apex_state()
    doc["schema_version"] = "2.0"
    doc["steps"]["2"]["artifacts"] = ["02-architecture-assessment.md"]
    _seed(d, doc)
    (d / "02-architecture-assessment.md").write_text("draft\n")
    agent = FreshAgent(repo, d)
    first = agent.run_step()
    assert first["action"] == "migrate_first"
    agent.assert_no_early_checkpoint()
    arts = agent.state()["steps"]["2"]["artifacts"]
    assert arts == ["agent-output/demo/02-architecture-assessment.md", agent.deliverable("2")]
    agent.assert_valid()


def test_a_path_named_in_another_form_adds_no_second_entry() -> None:
    from session_resume import load_workflow
    from session_resume.core.write_moments import checkpoint

    doc = apex_state()
    doc["steps"]["2"]["artifacts"] = ["02-architecture-assessment.md"]
    new = checkpoint(
        doc,
        load_workflow("apex"),
        "2",
        "phase_3_cost",
        ["./agent-output/demo//02-architecture-assessment.md", "notes.md"],
        base="agent-output/demo",
    )
    assert new["steps"]["2"]["artifacts"] == [
        "agent-output/demo/02-architecture-assessment.md",
        "agent-output/demo/notes.md",
    ]


def test_migration_keeps_the_staleness_of_the_original_updated(tmp_path: Path) -> None:
    """Issue 26 point 8: a v2 state last updated months ago, migrated: the next resume still
    warns SR708 (its message names the original date); the first write makes it fresh."""
    repo, d = _repo(tmp_path)
    doc = apex_state()
    doc["schema_version"] = "2.0"
    _seed(d, doc)  # updated 2026-03-02T10:15:00Z
    later = T0 + timedelta(days=90)
    _plain(repo, later, "migrate", "agent-output/demo")
    ans = json.loads(_plain(repo, later, "resume", "agent-output/demo", "--format", "json").stdout)
    (w,) = [w for w in ans["warnings"] if w["code"] == "SR708"]
    assert "2026-03-02T10:15:00Z" in w["message"] and "ask the user" in w["hint"]
    _plain(repo, later, "checkpoint", "2", "phase_3_cost", "--project", "demo")
    ans = json.loads(_plain(repo, later, "resume", "agent-output/demo", "--format", "json").stdout)
    assert "SR708" not in [w["code"] for w in ans["warnings"]]


def test_migration_keeps_the_pre_migration_file_and_one_path_form(tmp_path: Path) -> None:
    """Issue 26 points 7 and 8: `migrate` stores a v2 state's bare artifact name once,
    repository-relative, and keeps the v2 file for good as 00-session-state.v2.0.json (not a
    state file: validate sees one); the next writes rotate `.bak` but never touch it, a
    checkpoint naming the file in another form adds no entry, and a second migration from
    2.0 keeps the first copy."""
    repo, d = _repo(tmp_path)
    doc = apex_state()
    doc["schema_version"] = "2.0"
    doc["steps"]["2"]["artifacts"] = [
        "02-architecture-assessment.md",
        "./02-architecture-assessment.md",
    ]
    _seed(d, doc)
    original = (d / store.STATE).read_bytes()
    (d / "02-architecture-assessment.md").write_text("draft\n")
    _plain(repo, T0, "migrate", "agent-output/demo")
    kept = d / "00-session-state.v2.0.json"
    assert kept.read_bytes() == original
    art = "agent-output/demo/02-architecture-assessment.md"
    assert json.loads((d / store.STATE).read_text())["steps"]["2"]["artifacts"] == [art]
    res = _plain(repo, T0, "validate", "agent-output", "--format", "json")
    assert [f["path"] for f in json.loads(res.stdout)["files"]] == [
        "agent-output/demo/00-session-state.json"
    ]
    p = ("--project", "demo")
    for i, form in enumerate((f"./{art}", art, "02-architecture-assessment.md")):
        cp = ("phase_3_cost", "phase_4_challenger", "phase_5_artifact")[i]
        _plain(repo, T0 + timedelta(minutes=i + 1), "checkpoint", "2", cp, "--artifact", form, *p)
    state = json.loads((d / store.STATE).read_text())
    assert state["steps"]["2"]["artifacts"] == [art]
    assert kept.read_bytes() == original  # the .bak rotated three times; the copy stayed
    assert (d / store.BAK).read_bytes() != original
    doc["project"] = "demo"
    doc["updated"] = "2026-03-03T10:00:00Z"
    (d / store.STATE).write_bytes(dump(doc))  # another 2.0 file, migrated again
    _plain(repo, T0 + timedelta(hours=1), "migrate", "agent-output/demo")
    assert kept.read_bytes() == original


def test_migration_keeps_the_staleness_of_an_offset_updated(tmp_path: Path) -> None:
    """Issue 26 point 8: the original `updated` in offset form (kept so under x-legacy) still
    drives SR708 after the migration rewrote `updated`."""
    repo, d = _repo(tmp_path)
    doc = apex_state()
    doc["schema_version"] = "2.0"
    doc["updated"] = "2026-03-02T11:15:00+01:00"
    _seed(d, doc)
    later = T0 + timedelta(days=90)
    _plain(repo, later, "migrate", "agent-output/demo")
    state = json.loads((d / store.STATE).read_text())
    assert state["x-legacy"]["updated"] == "2026-03-02T11:15:00+01:00"
    assert state["updated"] == later.strftime("%Y-%m-%dT%H:%M:%SZ")
    ans = json.loads(_plain(repo, later, "resume", "agent-output/demo", "--format", "json").stdout)
    (w,) = [w for w in ans["warnings"] if w["code"] == "SR708"]
    assert "2026-03-02T10:15:00Z" in w["message"] and "90 days" in w["message"]


REPO = Path(__file__).resolve().parents[1]


def test_the_bundled_example_s_text_answer_is_at_most_3300_characters() -> None:
    """The mid-step resume of the bundled example, as `nox -s demo` asks it (`--root
    examples`; the clock pinned to the example's week, so that no SR708 grows it), is at most
    3,300 characters (see the test above for why not 2,500) and still holds every part of the
    plan: each remaining
    checkpoint's work and write, the review audit, `complete`, the gate with its decision and
    allowed values, the next step's start and skip, the findings rule."""
    argv = ("resume", "examples/agent-output/contoso-portal", "--root", "examples")
    now = ("--now", "2026-11-21T09:00:00Z", "--session", "s1")
    text = run_cli(*argv, *now, cwd=REPO).stdout
    ans = json.loads(run_cli(*argv, *now, "--format", "json", cwd=REPO).stdout)
    assert ans["action"] == "resume_from_checkpoint" and ans["warnings"] == []
    assert len(text) <= 3300, len(text)
    for c in ans["commands"]:  # each command, with its condition, as printed
        assert f"[{c['when']}] {c['run']}" in text
    kinds = [shlex.split(c["run"])[1] for c in ans["commands"]]
    assert kinds.count("checkpoint") == len(ans["plan"]["checkpoints"]) == 3
    assert "review-audit" in kinds and "complete" in kinds
    plan = ans["plan"]
    # Gate 2 is a session break: the next chat starts step 3 under its own session, so the
    # answer prints no start for this chat, only the hand-over and this chat's skip
    assert plan["next_step"]["by"] == "next_chat"
    assert plan["next_step"]["start"] not in text and plan["next_step"]["skip"] in text
    assert "the next chat starts step 3 under its own session" in text
    assert plan["open_findings"]["rule"] in text and plan["artifacts_rule"] in text
    gate = plan["gate"]
    assert f"{gate['id']} ({gate['kind']}" in text
    for d in gate["decisions"]:
        assert f"decide {d['key']} (" in text
    for f in ans["briefing"]["load"]:
        assert f["path"] in text
    # every line the answer prints runs from where the user stands (here: --root examples)
    assert "--root examples" in plan["next_step"]["start"]


def _complete_step_2(repo: Path, d: Path) -> None:
    """The previous agent completed step 2 with `complete` (not `transition`): gate 2 is
    still open."""
    doc = _seed(d)
    doc["steps"]["2"]["sub_step"] = "phase_5_artifact"
    (d / store.STATE).write_bytes(dump(doc))
    _plain(repo, T0, "complete", "2", "--project", "demo")


def test_start_after_an_open_gate_waits_for_it(tmp_path: Path) -> None:
    """Issue 26 point 4a: after `complete 2` (no `transition`), the answer for step 3 puts
    gate 2 first: `start 3` is not `now` but after the user approved Gate 2 and its decisions
    are recorded; the plan names the open gate with its decisions and allowed values."""
    repo, d = _repo(tmp_path)
    _complete_step_2(repo, d)
    agent = FreshAgent(repo, d)
    ans = agent.ask()
    assert (ans["action"], ans["step"]) == ("start", "3")
    gate = ans["plan"]["open_gate"]
    assert (gate["step"], gate["id"], gate["kind"]) == ("2", "Gate 2", "approval")
    assert [x["key"] for x in gate["decisions"]] == ["architecture_pattern"]
    runs = [(c["when"], shlex.split(c["run"])[1:3]) for c in ans["commands"]]
    assert runs[0] == ("now", ["session", "start"])
    # its decision is recorded; its approval is the write before the start
    assert gate["decisions"][0]["value"]
    when, (verb, key) = runs[1]
    assert (verb, key) == ("approve", "2") and when.startswith("after the user approved Gate 2")
    when, (verb, key) = runs[2]
    assert (verb, key) == ("start", "3")
    assert when == (
        "after the approval of Gate 2 of step 2 is recorded (above), and the user chose to run "
        "this optional step rather than skip it (ask once)"
    )
    text = _plain(repo, T0, "resume", "agent-output/demo").stdout
    assert text.index("Gate 2 (approval") < text.index("session-resume start 3")
    assert "decide architecture_pattern (free text)" in text
    # the agent follows it: the user approves, then it starts; the step is done in order
    agent.run_step()
    assert agent.state()["steps"]["3"]["status"] == "complete"
    # not --strict: the handoff Gate 2's approval rendered is older than step 3's writes
    # (SR606, a warning the next gate's approval clears)
    agent.assert_valid(strict=False)


def test_a_handover_by_transition_has_no_open_gate(tmp_path: Path) -> None:
    repo, d = _repo(tmp_path)
    _handed_over_at_gate_2(repo, d)
    agent = FreshAgent(repo, d)
    agent.now = T0 + timedelta(hours=2)
    ans = agent.ask()
    assert ans["plan"]["open_gate"] is None
    assert [c["when"] for c in ans["commands"]][:2] == ["now", "now"]


def test_complete_with_gaps_warns_with_the_commands(tmp_path: Path) -> None:
    """Issue 26 point 4b: `complete 1` with 1 of 5 checkpoints recorded and gate 1's
    required decisions empty is written, with SR716 and SR717 naming what is missing and the
    command that records it (JSON `warnings`; text on stderr)."""
    repo, d = _repo(tmp_path)
    p = ("--project", "demo")
    _plain(repo, T0, "init", "demo")
    _plain(repo, T0, "start", "1", *p)
    _plain(repo, T0, "checkpoint", "1", "phase_1_discovery", *p)
    res = _plain(repo, T0, "complete", "1", *p, "--format", "json")
    out = json.loads(res.stdout)
    assert out["ok"] is True and out["step"]["status"] == "complete"
    by = {w["code"]: w for w in out["warnings"]}
    assert set(by) == {"SR716", "SR717"}
    assert "1 of its 5 checkpoints" in by["SR716"]["message"]
    assert "phase_2_workload" in by["SR716"]["message"]
    assert "`session-resume start 1 --force --project demo`" in by["SR716"]["hint"]
    assert "region" in by["SR717"]["message"] and "Gate 1" in by["SR717"]["message"]
    assert "`session-resume decide region VALUE --project demo`" in by["SR717"]["hint"]
    # every step recorded and decided: no warning
    _plain(repo, T0, "start", "2", *p)
    for cp in ("phase_1_prereqs", "phase_2_waf", "phase_3_cost", "phase_4_challenger"):
        _plain(repo, T0, "checkpoint", "2", cp, *p)
    _plain(repo, T0, "checkpoint", "2", "phase_5_artifact", *p)
    res = _plain(repo, T0, "complete", "2", *p)
    assert "SR716" not in res.stderr
    assert "SR717 warning" in res.stderr and "architecture_pattern" in res.stderr


def test_a_checkpoint_the_restored_bak_lost_is_named(tmp_path: Path) -> None:
    """Issue 26 point 4c: the agent recorded phase_3_cost, then the state was lost and
    `recover` restored the older `.bak` (phase_2_waf): the answer warns SR718 with the
    checkpoint the worklog holds and the command to record it again after checking the
    deliverable, which is on disk."""
    repo, d = _repo(tmp_path)
    _seed(d)
    p = ("--project", "demo", "--session", "a1")
    _plain(repo, T0, "session", "start", *p)
    art = "agent-output/demo/02-architecture-assessment.md"
    (repo / art).write_text("cost: 400\n")
    _plain(repo, T0, "checkpoint", "2", "phase_3_cost", "--artifact", art, *p)
    (d / store.STATE).write_bytes(b"{")  # the state is lost; .bak holds phase_2_waf
    _plain(repo, T0, "recover", "agent-output/demo")
    assert json.loads((d / store.STATE).read_text())["steps"]["2"]["sub_step"] == "phase_2_waf"
    ans = json.loads(
        _plain(
            repo, T0, "resume", "agent-output/demo", "--session", "a1", "--format", "json"
        ).stdout
    )
    assert ans["action"] == "resume_from_checkpoint" and ans["sub_step"] == "phase_2_waf"
    (w,) = [w for w in ans["warnings"] if w["code"] == "SR718"]
    assert "phase_3_cost" in w["message"] and "phase_2_waf" in w["message"]
    # the hint points at the plan's own line for it (one command form, with the session)
    assert "the `checkpoint 2 phase_3_cost` line of the commands" in w["hint"]
    (line,) = [c["run"] for c in ans["commands"] if " checkpoint 2 phase_3_cost " in c["run"]]
    assert line.endswith("--project demo --session a1")
    text = _plain(repo, T0, "resume", "agent-output/demo", "--session", "a1").stdout
    assert "warning SR718" in text
    # recorded again, as the hint says: the warning is gone
    _plain(repo, T0, "checkpoint", "2", "phase_3_cost", "--artifact", art, *p)
    ans = json.loads(
        _plain(
            repo, T0, "resume", "agent-output/demo", "--session", "a1", "--format", "json"
        ).stdout
    )
    assert "SR718" not in [w["code"] for w in ans["warnings"]]


def test_every_when_starts_with_its_lower_case_word() -> None:
    """Issue 26 point 4d: one form for `when`, as the decision schema says: `now`, `after`,
    `only` or `when` first; the work's capitalised first word lowered, an acronym kept."""
    from session_resume import load_workflow
    from session_resume.core import plan as plan_rules
    from session_resume.core.workflow import BUILTINS

    seen = 0
    for wf_id in BUILTINS:
        wf = load_workflow(wf_id)
        doc = {"steps": {s.key: {"status": "pending"} for s in wf.steps}, "decisions": {}}
        for s in wf.steps:
            plan = plan_rules.build(doc, s.key, wf, action="start", sub=None)
            for c in plan_rules.commands(plan, "start") + plan_rules.alternatives(plan, "start"):
                seen += 1
                first = c["when"].split()[0]
                assert first in ("now", "after", "only", "when"), c
                rest = c["when"].split()[1:2]
                if first == "after" and rest and rest[0][:1].isupper():
                    assert not rest[0][1:].isalpha() or not rest[0][1:].islower(), c
    assert seen > 50
    assert plan_rules.after("QA wrote the report", "x") == "after QA wrote the report"
    assert plan_rules.after("IaC plan written", "x") == "after IaC plan written"
    assert plan_rules.after("Prerequisites checked", "x") == "after prerequisites checked"


def test_the_skill_says_which_files_are_never_edited_by_hand() -> None:
    """Issue 26 point 4e: the session-resume files (`00-*`) are never opened or edited by
    hand; the deliverables beside them are the agent's."""
    for wf_id in ("apex", "generic", "dotagent"):
        text = (REPO / "docs" / "skills" / wf_id / "SKILL.md").read_text(encoding="utf-8")
        assert "`00-*` files" in text and "never open or edit them by hand" in text
        assert "deliverables there are yours to read and write" in text
        assert len(text) <= 3500
