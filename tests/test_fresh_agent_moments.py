"""Scripted fresh agents for the moments of an agent's life that each have a record and an
answer: a fresh start through `resume`, a gate the user approved then a new chat, a session
break into an optional step, a stop mid-step then a new chat. Each agent knows only what
`session-resume resume --format json` returns and runs its commands literally, in order (the
user, asked at a gate, approves); every assertion is about what the files and the next answer
say afterwards."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from session_resume.storage import store

from conftest import run_cli

# Test tier (README "Test tiers"): whole agent life cycles through the CLI.
pytestmark = pytest.mark.slow

T0 = datetime(2026, 3, 2, 11, 0, tzinfo=UTC)


class Agent:
    """A new chat in a shell that keeps no variables: it asks `resume` (naming its session
    once a command it ran named one), reads nothing but the answer, and runs each command
    whose `when` it can meet, as printed. A checkpoint's work writes a line in the step's
    deliverable and every file its write names with `--artifact`."""

    def __init__(self, repo: Path, d: Path, clock: list[datetime]) -> None:
        self.repo, self.d, self.clock = repo, d, clock
        self.session: str | None = None
        self.ran: list[str] = []

    def _cli(self, *argv: str) -> subprocess.CompletedProcess[str]:
        self.clock[0] += timedelta(minutes=1)
        stamp = self.clock[0].strftime("%Y-%m-%dT%H:%M:%SZ")
        return run_cli(*argv, "--now", stamp, cwd=self.repo, env={"SESSION_RESUME_SESSION": ""})

    def ask(self, *extra: str) -> dict[str, Any]:
        argv = ["resume", self.d.relative_to(self.repo).as_posix(), "--format", "json", *extra]
        if self.session:
            argv += ["--session", self.session]
        res = self._cli(*argv)
        assert res.returncode == 0, res.stdout + res.stderr
        out: dict[str, Any] = json.loads(res.stdout)
        for e in out["reasons"] + out["warnings"]:
            assert e["message"] and e["hint"], e
        return out

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        argv = shlex.split(command)
        assert argv[0] == "session-resume", command
        res = self._cli(*argv[1:])
        assert res.returncode == 0, f"{command}\n{res.stdout}{res.stderr}"
        self.ran.append(command)
        if "--session" in argv and argv[1] not in ("resume", "report"):
            self.session = argv[argv.index("--session") + 1]
        return res

    def work(self, command: str) -> None:
        """The work a checkpoint's write records, done before it."""
        argv = shlex.split(command)
        for i, a in enumerate(argv):
            if a == "--artifact":
                path = self.repo / argv[i + 1]
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("a") as fh:
                    fh.write(f"work of {argv[3]}\n")

    def follow(self, ans: dict[str, Any], *, stop_after: str | None = None) -> list[str]:
        """The commands in order: `now` and `after …` ones (the user approves when asked);
        `only …` ones need a choice this agent does not make. ``stop_after``: the checkpoint
        after whose write it must stop (its context runs out)."""
        done = []
        for c in ans["commands"]:
            if c["when"].startswith("only"):
                continue
            if " checkpoint " in c["run"]:
                self.work(c["run"])
            self.run(c["run"])
            done.append(c["run"])
            if stop_after is not None and f" {stop_after} " in c["run"]:
                break
        return done

    def events(self) -> list[dict[str, Any]]:
        lines = (self.d / "00-worklog.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def state(self) -> dict[str, Any]:
        out: dict[str, Any] = json.loads((self.d / store.STATE).read_text())
        return out

    def valid(self) -> None:
        # not --strict: the handoff the last approval rendered is older than later writes
        # (SR606, a warning: the next gate renders it again)
        res = run_cli("validate", str(self.d), cwd=self.repo)
        assert res.returncode == 0, res.stdout + res.stderr


def _repo(tmp_path: Path) -> tuple[Path, Path, list[datetime]]:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path, tmp_path / "agent-output" / "harbor", [T0]


def _through_gate_2(repo: Path, d: Path, clock: list[datetime]) -> Agent:
    """A first chat from nothing: steps 1 and 2 by their plans, Gates 1 and 2 approved."""
    a = Agent(repo, d, clock)
    a.follow(a.ask())  # step 1 from the fresh start
    ans = a.ask()
    assert (ans["action"], ans["step"]) == ("start", "2")
    a.follow(ans)
    return a


def test_a_fresh_start_answers_through_resume_and_its_plan_creates_the_state(
    tmp_path: Path,
) -> None:
    repo, d, clock = _repo(tmp_path)
    a = Agent(repo, d, clock)
    ans = a.ask()
    assert not d.exists()  # resume wrote nothing
    assert (ans["action"], ans["step"], ans["plan"]["step"]) == ("fresh_start", "1", "1")
    assert [r["code"] for r in ans["reasons"]] == ["SR700"]
    sid = ans["session"]["id"]
    first, second = ans["commands"][0], ans["commands"][1]
    assert first == {
        "run": f"session-resume init harbor --workflow apex --session {sid}",
        "when": "now",
    }
    assert second["run"] == f"session-resume start 1 --project harbor --session {sid}"
    assert not any(" session start" in c["run"] for c in ans["commands"])  # init takes it
    # init says which id the rest of the plan names and that it took the lease
    init = a.run(first["run"])
    assert f"session {sid} holds the lease" in init.stdout and f"--session {sid}" in init.stdout
    lease = json.loads((d / "00-session.active").read_text())
    assert lease["session"] == sid and "implicit" not in lease
    for c in ans["commands"][1:]:
        if not c["when"].startswith("only"):
            if " checkpoint " in c["run"]:
                a.work(c["run"])
            a.run(c["run"])
    a.valid()
    doc = a.state()
    assert doc["steps"]["1"]["status"] == "complete"
    (entry,) = doc["decision_log"]
    assert (entry["gate"], entry["choice"], entry["agent"]) == ("Gate 1", "approved", "user")
    assert (d / "00-handoff.md").is_file()  # the approval rendered it
    assert "00-session.active" not in {p.name for p in d.iterdir()}  # the session ended
    # the next chat: step 2, and nothing says Gate 1 is open or asks for it
    b = Agent(repo, d, clock)
    nxt = b.ask()
    assert (nxt["action"], nxt["step"], nxt["plan"]["open_gate"]) == ("start", "2", None)
    runs = " ".join(c["run"] for c in nxt["commands"])
    assert "approve 1 " not in runs and "decide region" not in runs


@pytest.mark.mcp  # the real server, through the SDK's client
def test_a_fresh_start_over_mcp_is_the_same_plan_as_tool_calls(tmp_path: Path) -> None:
    """The MCP `resume` tool answers the same fresh start with this server's tool calls,
    `init` first (the server owns the session: no id); calling them in order creates the
    state and records the step, the gate's approval included."""
    pytest.importorskip("mcp", reason="the optional MCP SDK is not installed ('.[mcp]')")
    import anyio
    from mcp import Client, StdioServerParameters

    repo, d, _ = _repo(tmp_path)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "session_resume", "mcp", "--root", str(repo)],
        cwd=str(repo),
    )

    async def go() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=60) as c:
            ans = await c.call_tool("resume", {"project": "harbor", "format": "json"})
            out: dict[str, Any] = ans.structured_content
            assert not d.exists()
            for call in out["commands"]:
                if call["when"].startswith("only"):
                    continue
                args = dict(call["arguments"])
                if call["tool"] == "checkpoint":
                    for p in args.get("artifacts", []):
                        (repo / p).write_text("work\n")
                r = await c.call_tool(call["tool"], args)
                assert not r.is_error, (call, r.content)
            return out

    ans = anyio.run(go)
    assert (ans["action"], ans["step"]) == ("fresh_start", "1")
    tools = [c["tool"] for c in ans["commands"]]
    assert tools[:2] == ["init", "start"] and tools[-2:] == ["approve", "session_end"]
    assert ans["commands"][0]["arguments"] == {"project": "harbor", "workflow": "apex"}
    assert all("session" not in c["arguments"] for c in ans["commands"])
    doc = json.loads((d / store.STATE).read_text())
    assert doc["steps"]["1"]["status"] == "complete"
    assert [e["gate"] for e in doc["decision_log"]] == ["Gate 1"]


def test_a_gate_approved_then_a_new_chat_never_asks_again(tmp_path: Path) -> None:
    repo, d, clock = _repo(tmp_path)
    a = _through_gate_2(repo, d, clock)
    approvals = [e for e in a.events() if e["event"] == "gate_approved"]
    assert [(e["step"], e["detail"]["gate"]) for e in approvals] == [
        ("1", "Gate 1"),
        ("2", "Gate 2"),
    ]
    assert [e["gate"] for e in a.state()["decision_log"]] == ["Gate 1", "Gate 2"]
    # the plan's own order: complete, the approval, then this chat's end (Gate 2 breaks)
    tail = [shlex.split(c)[1] for c in a.ran[-3:]]
    assert tail == ["complete", "approve", "session"]
    b = Agent(repo, d, clock)
    for extra in ((), ("--step", "2")):
        ans = b.ask(*extra)
        text = json.dumps(ans)
        assert "still open" not in text and "approve 2" not in text, extra
    assert b.ask("--step", "2")["action"] == "offer_rerun"


def test_a_session_break_hands_the_optional_step_to_the_next_chat(tmp_path: Path) -> None:
    repo, d, clock = _repo(tmp_path)
    a = Agent(repo, d, clock)
    a.follow(a.ask())
    at_2 = a.ask()
    plan = at_2["plan"]
    assert plan["gate"]["session_break"] and plan["next_step"]["by"] == "next_chat"
    # no command carries this chat's id for the work the next chat owns
    assert "--session" not in plan["next_step"]["start"]
    assert not any(" start 3 " in c["run"] for c in at_2["commands"])
    end = at_2["commands"][-1]
    assert end["run"].startswith("session-resume session end ")
    assert "this chat ends here; the next chat starts step 3 under its own session" in end["when"]
    a.follow(at_2)
    # the next chat: a new session, the optional step's choice is its own
    b = Agent(repo, d, clock)
    ans = b.ask()
    assert (ans["action"], ans["step"], ans["plan"]["open_gate"]) == ("start", "3", None)
    sid = ans["session"]["id"]
    assert sid != a.session and ans["commands"][0]["run"].startswith("session-resume session start")
    assert all(a.session not in c["run"] for c in ans["commands"] + ans["alternatives"])
    b.run(ans["commands"][0]["run"])  # its session first, then the user's choice: skip 3
    skip = ans["alternatives"][0]
    assert skip["run"].startswith("session-resume skip 3 ") and f"--session {sid}" in skip["run"]
    b.run(skip["run"])
    after = b.ask()
    assert (after["action"], after["step"]) == ("start", "3_5")
    assert b.state()["steps"]["3"]["status"] == "skipped"
    b.valid()


def test_a_stop_mid_step_is_a_pause_the_next_chat_continues(tmp_path: Path) -> None:
    repo, d, clock = _repo(tmp_path)
    a = Agent(repo, d, clock)
    ans = a.ask()
    (pause,) = [c for c in ans["alternatives"] if "--reason paused" in c["run"]]
    assert pause["when"].startswith("only if you must stop before the step is complete")
    a.follow(ans, stop_after="phase_2_workload")
    a.run(pause["run"])  # the context runs out: the one command the answer names
    end = a.events()[-1]
    assert (end["event"], end["detail"]) == ("session_end", {"reason": "paused"})
    b = Agent(repo, d, clock)
    clock[0] += timedelta(hours=2)  # long after any heartbeat: still no crash
    nxt = b.ask()
    assert (nxt["action"], nxt["sub_step"]) == ("resume_from_checkpoint", "phase_2_workload")
    codes = [r["code"] for r in nxt["reasons"]]
    assert codes == ["SR703", "SR720"]
    assert "paused at checkpoint phase_2_workload" in nxt["reasons"][1]["message"]
    assert nxt["orphan"] is None and not [w for w in nxt["warnings"] if w["code"] == "SR512"]
    b.follow(nxt)
    doc = b.state()
    assert doc["steps"]["1"]["status"] == "complete" and doc["steps"]["1"]["attempts"] == 1
    b.valid()
    text = run_cli("resume", "agent-output/harbor", "--now", "2026-03-02T20:00:00Z", cwd=repo)
    assert "SR720" not in text.stdout  # a later answer: the pause is over
