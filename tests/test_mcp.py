"""`session-resume mcp`: driven by the MCP SDK's own client over stdio, the server a real
subprocess (`python -m session_resume mcp`), real SIGKILL, no mocks.

The tool list and every input schema; a whole life cycle with a valid state and matching
worklog events after every call; the lease owned by the server process (SIGKILL → orphan at
once; eight servers on one session → one writer, seven `session_active` refusals, no update
lost); malformed arguments and hostile files → coded tool errors with the server still
answering; the skill docs as resources and the `resume` prompt; no SDK import at the CLI's
start-up.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REPO, run_cli

# Test tier (README "Test tiers"): `session-resume mcp` servers and the SDK's client.
pytestmark = pytest.mark.mcp

pytest.importorskip("mcp", reason="the optional MCP SDK is not installed (pip install -e '.[mcp]')")

import anyio  # noqa: E402  (installed with mcp)
from mcp import Client, StdioServerParameters  # noqa: E402

from session_resume import validate_file  # noqa: E402
from session_resume.mcp.schemas import INPUT_SCHEMAS  # noqa: E402
from session_resume.mcp.tools import tools  # noqa: E402
from session_resume.rendering.mcp_docs import mcp_tool_names  # noqa: E402

STATE = "00-session-state.json"
SENTINEL = "00-session.active"
WORKLOG = "00-worklog.jsonl"
TOOLS = {
    "resume",
    "init",
    "start",
    "checkpoint",
    "complete",
    "skip",
    "review_audit",
    "decide",
    "finding",
    "transition",
    "approve",
    "validate",
    "migrate",
    "recover",
    "render_handoff",
    "budget",
    "report",
    "session_start",
    "session_end",
}


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def _params(root: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "session_resume", "mcp", "--root", str(root), *extra],
        cwd=str(root),
    )


@asynccontextmanager
async def server(root: Path, *extra: str) -> AsyncIterator[Client]:
    async with Client(_params(root, *extra), read_timeout_seconds=60) as client:
        yield client


def run(fn: Callable[[], Awaitable[Any]]) -> Any:
    return anyio.run(fn)


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def _codes(result: Any) -> list[str]:
    return [d["code"] for d in (result.structured_content or {}).get("diagnostics", [])]


def _worklog(d: Path) -> list[dict[str, Any]]:
    p = d / WORKLOG
    if not p.exists():
        return []
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]


def _assert_valid(d: Path) -> None:
    report = validate_file(d / STATE)
    assert report.ok(), [x.to_json() for x in report.diagnostics]


# --- the CLI's start-up and the missing extra ------------------------------------------------


@pytest.mark.parametrize("args", [["--version"], ["validate", "--help"]])
def test_cli_start_up_imports_no_mcp(tmp_path: Path, args: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "session_resume.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    modules = [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line]
    assert "session_resume.cli" in modules  # the measurement itself works
    leaked = [m for m in modules if m.split(".")[0] in ("mcp", "mcp_types", "starlette", "anyio")]
    leaked += [m for m in modules if m.startswith("session_resume.mcp")]
    assert not leaked


def test_cli_validate_imports_no_mcp(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    shutil_src = REPO / "examples" / "agent-output" / "contoso-portal" / STATE
    (tmp_path / STATE).write_bytes(shutil_src.read_bytes())
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "session_resume.cli.main", "validate", STATE],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    modules = [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line]
    assert "session_resume.services.validation" in modules
    assert not [m for m in modules if m.split(".")[0] in ("mcp", "mcp_types")]
    assert not [m for m in modules if m.startswith("session_resume.mcp")]


def test_mcp_command_without_the_extra_is_a_coded_usage_error(tmp_path: Path) -> None:
    # sys.modules["mcp"] = None is how Python itself marks a module as not importable.
    code = (
        "import sys; sys.modules['mcp'] = None; "
        "from session_resume.cli.main import main; sys.exit(main(['mcp']))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert proc.returncode == 2
    assert "SR181" in proc.stderr and "session-resume[mcp]" in proc.stderr
    assert "Traceback" not in proc.stderr


# --- tools, resources, prompt --------------------------------------------------------------


def test_tool_list_and_each_input_schema(tmp_path: Path) -> None:
    from jsonschema import Draft202012Validator

    root = _repo(tmp_path)

    async def go() -> Any:
        async with server(root) as c:
            return await c.list_tools()

    listed = run(go).tools
    assert {t.name for t in listed} == TOOLS
    for t in listed:
        assert t.input_schema == INPUT_SCHEMAS[t.name], t.name
        Draft202012Validator.check_schema(t.input_schema)
        assert t.input_schema["type"] == "object"
        assert t.input_schema["additionalProperties"] is False
        assert t.description
    schemas = {t.name: t.input_schema for t in listed}
    for name in ("start", "checkpoint", "complete", "budget", "skip"):
        assert "step" in schemas[name]["required"]
    assert schemas["checkpoint"]["required"] == ["step", "sub_step"]
    assert schemas["checkpoint"]["properties"]["artifacts"]["type"] == "array"
    assert schemas["checkpoint"]["properties"]["context_files"]["type"] == "array"
    assert "dry_run" in schemas["migrate"]["properties"]
    for name in TOOLS - {"init"}:
        assert {"project", "session_dir"} <= set(schemas[name]["properties"]), name


def test_mcp_help_names_every_tool_the_server_lists(tmp_path: Path) -> None:
    """`session-resume mcp --help` lists the tools from the server's registry: exactly the
    ones the SDK's client is given (it once omitted review_audit)."""
    root = _repo(tmp_path)

    async def go() -> Any:
        async with server(root) as c:
            return await c.list_tools()

    listed = [t.name for t in run(go).tools]
    proc = run_cli("mcp", "--help", cwd=root)
    assert proc.returncode == 0, proc.stderr
    flat = " ".join(proc.stdout.split())  # argparse wraps lines at spaces only
    named = flat.split("Serve the session-resume tools (", 1)[1].split(")", 1)[0].split(", ")
    assert named == listed and "review_audit" in named


def test_reference_names_the_sdk_attribute_of_a_tool_error() -> None:
    """The reference says how a refusal looks from the Python SDK too: `is_error`, the name
    its `CallToolResult` gives the protocol's `isError`."""
    from mcp_types import CallToolResult

    assert "is_error" in CallToolResult.model_fields
    ref = (REPO / "docs" / "skills" / "apex" / "references" / "mcp-tools.md").read_text()
    assert "tool error (`isError`; the Python SDK's `CallToolResult.is_error`)" in ref


def test_skill_reference_names_only_real_tools() -> None:
    assert mcp_tool_names() <= set(tools())
    assert {"start", "checkpoint", "complete", "decide", "finding", "transition"} <= (
        mcp_tool_names()
    )


def test_resources_and_resume_prompt(tmp_path: Path) -> None:
    root = _repo(tmp_path)

    async def go() -> tuple[Any, str, str, Any]:
        async with server(root) as c:
            listed = await c.list_resources()
            skill = await c.read_resource("session-resume://skills/apex/SKILL.md")
            ref = await c.read_resource("session-resume://skills/apex/references/mcp-tools.md")
            prompts = await c.list_prompts()
            prompt = await c.get_prompt("resume", {"project": "demo"})
            return listed, skill.contents[0].text, ref.contents[0].text, (prompts, prompt)

    listed, skill, ref, (prompts, prompt) = run(go)
    uris = {str(r.uri) for r in listed.resources}
    for wf in ("apex", "dotagent", "generic"):
        for rel in ("SKILL.md", "references/mcp-tools.md", "references/recovery-protocol.md"):
            assert f"session-resume://skills/{wf}/{rel}" in uris
    on_disk = (REPO / "docs" / "skills" / "apex" / "SKILL.md").read_text()
    assert skill == on_disk
    assert "references/mcp-tools.md" in skill
    assert ".vscode/mcp.json" in ref and "mcpServers" in ref
    assert [p.name for p in prompts.prompts] == ["resume"]
    text = prompt.messages[0].content.text
    # no session yet: the prompt is the fresh start's plan, `init` first
    assert text.startswith("Resume the session of project demo") and "fresh_start" in text
    assert 'init {"project": "demo", "workflow": "apex"}' in text


def test_prompt_arguments_and_resource_errors_have_the_specified_codes(tmp_path: Path) -> None:
    """The MCP specification (2025-11-25, prompts and resources): a missing required prompt
    argument, an invalid one and an unknown prompt are JSON-RPC -32602; an unknown resource
    -32002; resources/templates/list answers (a template every built-in workflow expands)."""
    from mcp.shared.exceptions import MCPError

    root = _repo(tmp_path)

    async def go() -> tuple[dict[str, tuple[int, str]], Any, str]:
        codes: dict[str, tuple[int, str]] = {}
        async with server(root) as c:
            for label, name, args in (
                ("missing", "resume", None),
                ("empty", "resume", {"project": ""}),
                ("step only", "resume", {"step": "1"}),
                ("unknown argument", "resume", {"project": "demo", "colour": "red"}),
                ("invalid project", "resume", {"project": "../elsewhere"}),
                ("unknown prompt", "nope", {"project": "demo"}),
            ):
                try:
                    await c.get_prompt(name, args)
                except MCPError as exc:
                    codes[label] = (exc.code, exc.message)
            try:
                await c.read_resource("session-resume://skills/nope/SKILL.md")
            except MCPError as exc:
                codes["resource"] = (exc.code, exc.message)
            templates = await c.list_resource_templates()
            (t,) = templates.resource_templates
            expanded = t.uri_template.replace("{workflow}", "generic")
            text = (await c.read_resource(expanded)).contents[0].text
        return codes, templates, text

    codes, _, text = run(go)
    assert {k: v[0] for k, v in codes.items()} == {
        "missing": -32602,
        "empty": -32602,
        "step only": -32602,
        "unknown argument": -32602,
        "invalid project": -32602,
        "unknown prompt": -32602,
        "resource": -32002,
    }
    assert codes["missing"][1] == "Missing required arguments: project"
    assert "colour" in codes["unknown argument"][1]
    assert text == (REPO / "docs" / "skills" / "generic" / "SKILL.md").read_text()


# --- a whole life cycle --------------------------------------------------------------------


LIFE_CYCLE: list[tuple[str, dict[str, Any], str | None]] = [
    ("init", {"workflow": "apex"}, "session_start"),  # the write takes the lease
    ("start", {"step": "1"}, "step_start"),
    (
        "checkpoint",
        {
            "step": "1",
            "sub_step": "phase_1_discovery",
            "artifacts": ["agent-output/demo/01-requirements.md"],
            "context_files": ["agent-output/demo/00-session-state.json"],
        },
        "checkpoint",
    ),
    ("checkpoint", {"step": "1", "sub_step": "phase_2_workload"}, "checkpoint"),
    ("decide", {"key": "complexity", "value": "standard"}, "decision"),
    (
        "review_audit",
        {
            "step": "1",
            "complexity": "standard",
            "passes_planned": 2,
            "passes_executed": 2,
            "models": ["challenger-model"],
        },
        "review_audit",
    ),
    (
        "decide",
        {"title": "Region", "choice": "swedencentral", "rationale": "data residency"},
        "decision",
    ),
    ("finding", {"action": "add", "title": "No backup policy"}, "finding_add"),
    ("complete", {"step": "1"}, "step_complete"),
    ("approve", {"step": "1", "decisions": {"region": "swedencentral"}}, "gate_approved"),
    ("transition", {"complete": "2", "start": "3"}, None),  # 2 is pending: refused, see below
    ("start", {"step": "2"}, "step_start"),
    ("finding", {"action": "resolve", "title": "No backup policy"}, "finding_resolve"),
    ("transition", {"complete": "2", "start": "3"}, "step_start"),  # one write, one event
]


def test_whole_life_cycle(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    d = root / "agent-output" / "demo"
    seen: list[tuple[str, bool, list[str]]] = []

    async def go() -> None:
        async with server(root) as c:
            first = await c.call_tool("resume", {"project": "demo"})  # no directory yet
            assert not first.is_error and _text(first).startswith("action: fresh_start")
            assert not d.exists()  # resume reads only
            for tool, args, event in LIFE_CYCLE:
                before = _worklog(d)
                r = await c.call_tool(tool, {"project": "demo", **args})
                seen.append((tool, bool(r.is_error), _codes(r)))
                after = _worklog(d)
                if event is None:  # a refused write changes nothing
                    assert r.is_error and "SR" in _text(r)
                    assert after == before
                    continue
                assert not r.is_error, _text(r)
                s = r.structured_content
                assert s["ok"] is True and s["session"].startswith("mcp-")
                _assert_valid(d)
                state = json.loads((d / STATE).read_text())
                assert s["revision"] == state["revision"]
                new = after[len(before) :]
                assert new == s["events"], (tool, new, s["events"])
                assert new[-1]["event"] == event
                assert all(e["session"] == s["session"] for e in new)
            lease = json.loads((d / SENTINEL).read_text())
            assert lease["pid"] != os.getpid() and lease["session"].startswith("mcp-")
            ask = {"project": "demo", "step": "3", "format": "json"}
            resumed = await c.call_tool("resume", ask)
            # step 3 was started at the gate (the transition) by this server's own live
            # session and did no work yet: continue it (first checkpoint next), never a loop
            assert resumed.structured_content["action"] == "continue_step"
            assert [r["code"] for r in resumed.structured_content["reasons"]] == ["SR713"]
            assert resumed.structured_content["lease"]["state"] == "live"
            end = await c.call_tool("session_end", {"project": "demo"})
            assert end.structured_content["action"] == "ended"
            assert not (d / SENTINEL).exists()

    run(go)
    state = json.loads((d / STATE).read_text())
    assert state["steps"]["1"]["status"] == "complete"
    assert state["steps"]["2"]["status"] == "complete"
    assert state["steps"]["3"]["status"] == "in_progress"
    assert state["decisions"]["complexity"] == "standard"
    # the region's entry, Gate 1's approval, and Gate 2's that the transition recorded
    assert [(e["id"], e.get("gate")) for e in state["decision_log"]] == [
        ("D001", None),
        ("D002", "Gate 1"),
        ("D003", "Gate 2"),
    ]
    assert (d / "00-handoff.md").is_file()  # the approval rendered it
    assert state["open_findings"] == []
    assert state["steps"]["1"]["artifacts"] == ["agent-output/demo/01-requirements.md"]
    events = [e["event"] for e in _worklog(d)]
    assert events[0] == "session_start" and events[-1] == "session_end"
    assert events.count("session_start") == 1 and events.count("session_end") == 1
    refused = [x for x in seen if x[1]]
    assert [x[0] for x in refused] == ["transition"] and refused[0][2]


def test_migrate_recover_handoff_budget_report(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    old = root / "agent-output" / "old"
    old.mkdir(parents=True)
    (old / STATE).write_text(json.dumps({"project": "old", "steps": {}}))
    bad = root / "agent-output" / "bad"
    bad.mkdir(parents=True)
    (bad / STATE).write_bytes(b"{ torn")
    got: dict[str, Any] = {}

    async def go() -> None:
        async with server(root) as c:
            got["first"] = await c.call_tool("resume", {"project": "old", "format": "json"})
            got["dry"] = await c.call_tool("migrate", {"project": "old", "dry_run": True})
            got["dry_bytes"] = (old / STATE).read_bytes()
            got["migrate"] = await c.call_tool("migrate", {"project": "old"})
            got["typo"] = await c.call_tool("recover", {"project": "typo"})
            got["recover"] = await c.call_tool("recover", {"project": "bad"})
            got["handoff"] = await c.call_tool("render_handoff", {"project": "old"})
            got["budget"] = await c.call_tool("budget", {"project": "old", "step": "1"})
            got["report"] = await c.call_tool("report", {"project": "bad"})

    run(go)
    assert got["first"].structured_content["action"] == "migrate_first"
    dry = got["dry"].structured_content
    assert dry["dry_run"] is True and dry["outcomes"][0]["status"] == "would_migrate"
    assert dry["outcomes"][0]["patch"] and got["dry_bytes"] == b'{"project": "old", "steps": {}}'
    assert got["migrate"].structured_content["outcomes"][0]["status"] == "migrated"
    _assert_valid(old)
    assert got["typo"].is_error and _codes(got["typo"]) == ["SR100"]
    assert not (root / "agent-output" / "typo").exists()  # a repair never creates a session
    rec = got["recover"].structured_content
    assert rec["action"] == "recreated" and rec["corrupt_kept_as"]
    _assert_valid(bad)
    handoff = got["handoff"].structured_content
    assert Path(handoff["path"]) == old / "00-handoff.md" and handoff["text"].startswith("#")
    assert got["budget"].structured_content["max_startup_files"] == 1
    assert got["report"].structured_content["state"] == "ok"


def test_closing_stdin_ends_the_session_and_the_heartbeat_is_kept(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    d = root / "agent-output" / "demo"

    async def go() -> tuple[str, str]:
        async with server(root, "--heartbeat", "0.2") as c:
            r = await c.call_tool("session_start", {"project": "demo"})
            assert not r.is_error, _text(r)
            first = json.loads((d / SENTINEL).read_text())["heartbeat"]
            later = first
            for _ in range(200):  # the heartbeat has one-second resolution
                await anyio.sleep(0.1)
                later = json.loads((d / SENTINEL).read_text())["heartbeat"]
                if later != first:
                    break
            return first, later

    first, later = run(go)
    assert later > first  # refreshed by the background task, with no call in between
    events = _worklog(d)
    assert [e["event"] for e in events] == ["session_start", "session_end"]
    assert events[0]["detail"]["pid"] != os.getpid()
    assert not (d / SENTINEL).exists()


@pytest.mark.parametrize(
    ("interval", "writes_beat"),
    [("60", False), ("151", True)],  # the stale threshold is 300 s: half of it is 150
)
def test_writes_leave_the_heartbeat_to_the_timer(
    tmp_path: Path, interval: str, writes_beat: bool
) -> None:
    root = _repo(tmp_path)
    d = root / "agent-output" / "demo"
    run_cli("init", "demo", "--workflow", "apex", "--root", str(root), cwd=root)
    run_cli("session", "end", "--project", "demo", "--root", str(root), cwd=root)

    async def go() -> tuple[bytes, list[bytes]]:
        async with server(root, "--heartbeat", interval) as c:
            r = await c.call_tool("session_start", {"project": "demo"})
            assert not r.is_error, _text(r)
            taken = (d / SENTINEL).read_bytes()
            after = []
            for value in ("simple", "standard", "complex"):
                await anyio.sleep(1.1)  # the heartbeat has one-second resolution
                w = await c.call_tool(
                    "decide", {"project": "demo", "key": "complexity", "value": value}
                )
                assert not w.is_error, _text(w)
                after.append((d / SENTINEL).read_bytes())
            return taken, after

    taken, after = run(go)
    beats = [json.loads(b)["heartbeat"] for b in after]
    if writes_beat:  # a timer slower than half the threshold: every write refreshes it
        assert beats == sorted(set(beats)) and beats[0] > json.loads(taken)["heartbeat"]
    else:  # the timer's: three writes, the sentinel untouched
        assert after == [taken] * 3
    assert [e["event"] for e in _worklog(d)].count("decision") == 3
    _assert_valid(d)


def test_a_write_refreshes_a_heartbeat_its_timer_let_grow_old(tmp_path: Path) -> None:
    """A suspended machine or a busy loop holds the 60 s timer up: a write still revives a
    heartbeat older than half the stale threshold (300 s), and leaves a younger one alone."""
    root = _repo(tmp_path)
    d = root / "agent-output" / "demo"
    run_cli("init", "demo", "--workflow", "apex", "--root", str(root), cwd=root)
    run_cli("session", "end", "--project", "demo", "--root", str(root), cwd=root)

    def age(seconds: int) -> str:
        sent = json.loads((d / SENTINEL).read_text())
        then = datetime.now(UTC) - timedelta(seconds=seconds)
        sent["heartbeat"] = then.strftime("%Y-%m-%dT%H:%M:%SZ")
        tmp = d / "sentinel.tmp"
        tmp.write_text(json.dumps(sent))
        tmp.replace(d / SENTINEL)  # as the server's own timer would have left it
        return str(sent["heartbeat"])

    async def go() -> list[tuple[str, str]]:
        seen = []
        async with server(root) as c:
            r = await c.call_tool("session_start", {"project": "demo"})
            assert not r.is_error, _text(r)
            for seconds, value in ((100, "simple"), (200, "standard")):
                planted = age(seconds)
                w = await c.call_tool(
                    "decide", {"project": "demo", "key": "complexity", "value": value}
                )
                assert not w.is_error, _text(w)
                seen.append((planted, json.loads((d / SENTINEL).read_text())["heartbeat"]))
        return seen

    (young, after_young), (old, after_old) = run(go)
    assert after_young == young  # 100 s: the timer's business
    assert after_old > old  # 200 s: revived by the write
    now = datetime.now(UTC)
    assert now - datetime.fromisoformat(after_old.replace("Z", "+00:00")) < timedelta(seconds=60)


# --- the lease: SIGKILL, eight servers ------------------------------------------------------


def test_sigkill_mid_session_is_an_orphan_at_once(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    d = root / "agent-output" / "demo"
    run_cli("init", "demo", "--workflow", "apex", "--root", str(root), cwd=root)
    run_cli("session", "end", "--project", "demo", "--root", str(root), cwd=root)
    proc = subprocess.Popen(
        [sys.executable, "-m", "session_resume", "mcp", "--root", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=root,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        rpc = _RawClient(proc.stdin, proc.stdout)
        rpc.initialize()
        for tool, args in [
            ("start", {"step": "1"}),
            ("checkpoint", {"step": "1", "sub_step": "phase_1_discovery"}),
        ]:
            res = rpc.call_tool(tool, {"project": "demo", **args})
            assert not res.get("isError"), res
        lease = json.loads((d / SENTINEL).read_text())
        assert lease["pid"] == proc.pid
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    # The CLI: no wait for a stale heartbeat (it was refreshed a moment ago).
    out = run_cli("resume", str(d), "--step", "1", "--format", "json", "--root", str(root))
    decision = json.loads(out.stdout)
    assert decision["orphan"] is not None, decision
    assert decision["orphan"]["reason"] == "owner_dead"
    assert decision["orphan"]["sub_step"] == "phase_1_discovery"
    assert decision["lease"]["state"] == "dead_owner"

    # A new MCP server: resume reports it too, and its first write takes the session over.
    async def go() -> tuple[Any, Any]:
        async with server(root) as c:
            r = await c.call_tool("resume", {"project": "demo", "step": "1", "format": "json"})
            w = await c.call_tool(
                "checkpoint", {"project": "demo", "step": "1", "sub_step": "phase_2_workload"}
            )
            return r, w

    r, w = run(go)
    assert r.structured_content["orphan"]["reason"] == "owner_dead"
    assert not w.is_error, _text(w)
    takeover = [e for e in _worklog(d) if e["event"] == "takeover"]
    assert len(takeover) == 1 and takeover[0]["detail"]["orphaned"] is True
    _assert_valid(d)


def test_sigterm_ends_the_session(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    d = root / "agent-output" / "demo"
    proc = subprocess.Popen(
        [sys.executable, "-m", "session_resume", "mcp", "--root", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=root,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        rpc = _RawClient(proc.stdin, proc.stdout)
        rpc.initialize()
        res = rpc.call_tool("session_start", {"project": "demo"})
        assert res["structuredContent"]["action"] == "created", res
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0
    assert [e["event"] for e in _worklog(d)] == ["session_start", "session_end"]
    assert not (d / SENTINEL).exists()


class _RawClient:
    """JSON-RPC over the server's pipes, for the one test that must know the server's pid
    to SIGKILL it (the SDK's client keeps its subprocess to itself)."""

    def __init__(self, stdin: Any, stdout: Any) -> None:
        self.stdin, self.stdout, self.seq = stdin, stdout, 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.seq += 1
        msg = {"jsonrpc": "2.0", "id": self.seq, "method": method, "params": params}
        self.stdin.write(json.dumps(msg).encode() + b"\n")
        self.stdin.flush()
        while True:
            line = self.stdout.readline()
            assert line, "the server closed stdout"
            reply = json.loads(line)
            if reply.get("id") == self.seq:
                assert "error" not in reply, reply
                result: dict[str, Any] = reply["result"]
                return result

    def initialize(self) -> None:
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

        self.request(
            "initialize",
            {
                "protocolVersion": sorted(HANDSHAKE_PROTOCOL_VERSIONS)[-1],
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        )
        self.stdin.write(
            json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode() + b"\n"
        )
        self.stdin.flush()

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments})


def test_eight_servers_one_lease_no_update_lost(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    d = root / "agent-output" / "demo"
    run_cli("init", "demo", "--workflow", "apex", "--root", str(root), cwd=root)
    run_cli("session", "end", "--project", "demo", "--root", str(root), cwd=root)
    n = 8
    results: dict[int, list[Any]] = {i: [] for i in range(n)}

    async def one(i: int, ready: list[int], go: anyio.Event, done: list[int]) -> None:
        async with server(root) as c:
            await c.list_tools()
            ready.append(i)
            await go.wait()
            for k in range(3):
                r = await c.call_tool(
                    "decide",
                    {
                        "project": "demo",
                        "title": f"server {i} decision {k}",
                        "choice": "yes",
                        "rationale": "test",
                    },
                )
                results[i].append(r)
            after = await c.call_tool("resume", {"project": "demo", "format": "json"})  # answers
            results[i].append(after)
            done.append(i)
            while len(done) < n:  # the holder keeps its lease until every call is made
                await anyio.sleep(0.05)

    async def main() -> None:
        ready: list[int] = []
        done: list[int] = []
        go = anyio.Event()
        async with anyio.create_task_group() as tg:
            for i in range(n):
                tg.start_soon(one, i, ready, go, done)
            while len(ready) < n:
                await anyio.sleep(0.05)
            go.set()

    run(main)
    writers = [i for i in range(n) if not results[i][0].is_error]
    assert len(writers) == 1, {i: _text(results[i][0]) for i in range(n)}
    w = writers[0]
    assert all(not r.is_error for r in results[w][:3])
    for i in set(range(n)) - {w}:
        for r in results[i][:3]:
            assert r.is_error and _codes(r) == ["SR511"], _text(r)
            assert "SR511 session-active" in _text(r) and "hint:" in _text(r)
        ans = results[i][3].structured_content
        assert ans["action"] == "session_active"
        # the holder is never this server's session: wait (a read at the stale time) or
        # take over with consent; no call or hint names a CLI option
        assert [(c["tool"], c["when"].split(" (")[0]) for c in ans["commands"]] == [
            ("resume", f"at or after {ans['commands'][0]['when'].split()[3]}"),
            (
                "session_start",
                "only with the user's consent, after telling them session "
                f"{ans['lease']['session']} is live",
            ),
        ]
        assert ans["commands"][1]["arguments"]["takeover"] is True
        assert "--session" not in ans["reasons"][0]["hint"]
    state = json.loads((d / STATE).read_text())
    titles = [e["title"] for e in state["decision_log"]]
    assert titles == [f"server {w} decision {k}" for k in range(3)]  # no update lost
    _assert_valid(d)
    events = _worklog(d)
    starts = [
        e for e in events if e["event"] == "session_start" and e["session"].startswith("mcp-")
    ]
    assert len(starts) == 1
    assert [e["event"] for e in events if e["event"] == "decision"] == ["decision"] * 3
    assert not (d / SENTINEL).exists()  # the writer ended its session when it closed


# --- bad arguments, hostile files ----------------------------------------------------------


BAD_ARGUMENTS: list[tuple[str, Any]] = [
    ("checkpoint", {"project": "demo", "step": "1"}),
    ("checkpoint", {"project": "demo", "step": 1, "sub_step": "x"}),
    ("checkpoint", {"project": "demo", "step": "1", "sub_step": "x", "artifacts": "a.md"}),
    ("start", {"project": "demo", "step": "1", "bogus": True}),
    ("start", {"step": "1"}),
    ("start", {"project": "demo", "session_dir": "agent-output/demo", "step": "1"}),
    ("start", {"project": "../../etc", "step": "1"}),
    ("start", {"session_dir": "../outside", "step": "1"}),
    ("start", {"session_dir": "/etc", "step": "1"}),
    ("start", {"project": "demo", "step": ""}),
    ("decide", {"project": "demo", "key": "complexity"}),
    ("decide", {"project": "demo", "key": "k", "value": 1, "title": "t"}),
    ("decide", {"project": "demo", "title": "t"}),
    ("finding", {"project": "demo", "action": "delete", "title": "t"}),
    ("transition", {"project": "demo", "complete": "1", "start": "2", "decisions": []}),
    ("init", {"project": "demo", "workflow": "no-such-workflow"}),
    ("budget", {"project": "demo", "step": "99"}),
    ("no_such_tool", {}),
    ("resume", {"project": "x" * 500}),
    ("resume", {"project": "demo", "step": None}),
    ("migrate", {"project": "demo", "dry_run": "yes"}),
]


def test_malformed_arguments_are_coded_tool_errors(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    outside = tmp_path / "outside"

    async def go() -> list[tuple[str, Any, Any]]:
        out = []
        async with server(root) as c:
            init = await c.call_tool("init", {"project": "demo", "workflow": "apex"})
            assert not init.is_error, _text(init)
            for tool, args in BAD_ARGUMENTS:
                out.append((tool, args, await c.call_tool(tool, args)))
                alive = await c.call_tool("resume", {"project": "demo"})
                assert not alive.is_error, _text(alive)
        return out

    for tool, args, r in run(go):
        assert r.is_error, (tool, args)
        codes = _codes(r)
        assert codes and all(c.startswith("SR") and c != "SR900" for c in codes), (tool, codes)
        for code in codes:
            assert code in _text(r)
        assert "hint:" in _text(r)
    assert not outside.exists()
    assert not (Path("/etc") / STATE).exists()
    _assert_valid(root / "agent-output" / "demo")


def _hostile_cases() -> dict[str, Callable[[Path], None]]:
    from test_bad_input import BYTE_CASES

    cases: dict[str, Callable[[Path], None]] = {}
    for name, (data, _code) in BYTE_CASES.items():
        cases[f"state-{name}"] = lambda d, data=data: (d / STATE).write_bytes(data)

    def fifo(d: Path) -> None:
        os.mkfifo(d / STATE)

    def escaping_link(d: Path) -> None:
        target = d.parents[2] / "secret.json"
        target.write_text('{"schema_version": "3.0"}')
        (d / STATE).symlink_to(target)

    def sentinel_dir(d: Path) -> None:
        (d / SENTINEL).mkdir()

    def sentinel_garbage(d: Path) -> None:
        (d / SENTINEL).write_bytes(b"\x00\xff{not json")

    def worklog_garbage(d: Path) -> None:
        (d / WORKLOG).write_bytes(b"garbage\n" * 3 + b'{"v": 1}\n')

    def worklog_is_dir(d: Path) -> None:
        (d / WORKLOG).mkdir()

    def state_is_dir(d: Path) -> None:
        (d / STATE).mkdir()

    def old_version(d: Path) -> None:
        (d / STATE).write_text('{"project": "x", "steps": {}}')

    def newer_version(d: Path) -> None:
        (d / STATE).write_text('{"schema_version": "99.0", "project": "x"}')

    for f in (
        fifo,
        escaping_link,
        sentinel_dir,
        sentinel_garbage,
        worklog_garbage,
        worklog_is_dir,
        state_is_dir,
        old_version,
        newer_version,
    ):
        cases[f.__name__] = f
    return cases


HOSTILE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("resume", {}),
    ("report", {}),
    ("validate", {}),
    ("checkpoint", {"step": "1", "sub_step": "phase_1_discovery"}),
    ("start", {"step": "1"}),
    ("render_handoff", {"write": False}),
    ("budget", {"step": "1"}),
    ("migrate", {"dry_run": True}),
]


def test_hostile_files_are_coded_tool_errors(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    cases = _hostile_cases()
    for name, make in cases.items():
        d = root / "agent-output" / name
        d.mkdir(parents=True)
        make(d)
    outcomes: list[tuple[str, str, Any]] = []

    async def go() -> None:
        async with server(root) as c:
            for name in cases:
                for tool, args in HOSTILE_CALLS:
                    args = {"session_dir": f"agent-output/{name}", **args}
                    r = await c.call_tool(tool, args)
                    outcomes.append((name, tool, r))
            alive = await c.call_tool("validate", {"session_dir": "agent-output/state-nan"})
            assert alive.structured_content["ok"] is False

    run(go)
    refused = 0
    for name, tool, r in outcomes:
        codes = _codes(r)
        assert "SR900" not in codes and "Traceback" not in _text(r), (name, tool, _text(r))
        if r.is_error:
            refused += 1
            assert codes and all(c.startswith("SR") for c in codes), (name, tool)
            assert codes[0] in _text(r)
    assert refused >= len(cases)  # at least the write on each hostile session is refused
    secret = tmp_path / "secret.json"
    assert secret.read_text() == '{"schema_version": "3.0"}'  # never written through the link


_JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(["", "demo", "demo\n", "x" * 130, "1", "a/b", "D001", "apex", "3_5"]),
    st.text(max_size=5),
)
_JSON = st.recursive(
    _JSON_LEAF,
    lambda kids: (
        st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=4), kids, max_size=3)
    ),
    max_leaves=6,
)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_the_fast_argument_check_agrees_with_the_reference(data: st.DataObject) -> None:
    """Arguments are accepted by the fast check (jsonschema_rs) and explained by the reference
    engine (jsonschema): both give one verdict for every tool's schema, on arguments made of
    the tool's own property names (and a stray one) with values of every JSON type."""
    from session_resume.core import schemas
    from session_resume.mcp import tools as mcp_tools

    name = data.draw(st.sampled_from(sorted(INPUT_SCHEMAS)))
    schema = INPUT_SCHEMAS[name]
    keys = [*schema.get("properties", {}), "stray"]
    args = data.draw(st.dictionaries(st.sampled_from(keys), _JSON, max_size=len(keys)))
    fast = mcp_tools._fast(name)(args)
    assert fast == schemas.reference_for(schema).is_valid(args), (name, args)
    assert (mcp_tools.check_arguments(name, args) == []) == fast


def test_refusal_words_name_tools_not_cli_commands() -> None:
    from session_resume.mcp.calls import tool_call, tool_text

    said = tool_text(
        "run `session-resume start 2` before recording checkpoints, or take over with "
        "`session-resume session start --takeover` (logged)"
    )
    assert "session-resume" not in said
    assert "the `start` tool" in said and "the `session_start` tool with `takeover: true`" in said
    call = tool_call(
        "session-resume review-audit 2 --complexity standard --passes-planned 2 "
        "--passes-executed 2 --project demo --session s1",
        {"project": "demo"},
    )
    assert call == {
        "tool": "review_audit",
        "arguments": {
            "project": "demo",
            "step": "2",
            "complexity": "standard",
            "passes_planned": 2,
            "passes_executed": 2,
        },
    }
