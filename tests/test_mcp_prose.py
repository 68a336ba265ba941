"""Over MCP the resume answer names tools and arguments only (issue 26 point 9): not only its
commands, but its prose too (the codes' words, every `when`, the plan's rules), so that an
agent that knows only the server never meets a CLI command line or option.

The server is a real subprocess (`python -m session_resume mcp`), asked through the MCP SDK's
own client; the sessions are seeded as files or by the real CLI."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from session_resume.storage import store

from conftest import apex_state, dump, run_cli

pytestmark = pytest.mark.mcp

pytest.importorskip("mcp", reason="the optional MCP SDK is not installed (pip install -e '.[mcp]')")

import anyio  # noqa: E402  (installed with mcp)
from mcp import Client, StdioServerParameters  # noqa: E402

# strings that are file paths, kept as recorded
PATH_KEYS = frozenset({"session_dir", "path", "startup_files", "skip_files", "artifacts"})
# a shell command for git (SR708: what changed since the last update) is not a CLI of ours
GIT_SPAN = re.compile(r"`git [^`]*`")
OPTION = re.compile(r"(?<![\w-])--[a-z]")


def _strings(node: Any, key: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for k, v in node.items():
            if k not in PATH_KEYS:
                yield from _strings(v, k)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v, key)
    elif isinstance(node, str):
        yield key, node


def _seed(repo: Path, project: str, doc: dict[str, Any]) -> None:
    d = repo / "agent-output" / project
    d.mkdir(parents=True)
    doc["project"] = project
    (d / store.STATE).write_bytes(dump(doc))


def _sessions(repo: Path) -> list[dict[str, Any]]:
    """Sessions whose answers carry the prose that names commands: a mid-step resume with an
    open finding and a missing deliverable (the plan's findings and artifacts rules, SR715),
    a pending optional step behind an open gate (its skip), another step asked while one
    runs (SR709), a step asked before its prerequisites (SR706), another live session
    (SR511)."""
    (repo / ".git").mkdir(parents=True)
    # a day before a lease goes stale: the live session below stays live while the test runs
    (repo / ".session-resume.yaml").write_text("stale_after_seconds: 86400\n")
    mid = apex_state()
    mid["open_findings"] = ["No RTO stated"]
    _seed(repo, "mid", mid)
    gate = apex_state()
    gate["steps"]["2"].update(status="complete", sub_step=None, completed="2026-03-02T11:00:00Z")
    _seed(repo, "gate", gate)
    _seed(repo, "early", apex_state())
    env = {"SESSION_RESUME_SESSION": ""}
    for argv in (("init", "held"), ("session", "start", "--project", "held")):
        assert run_cli(*argv, "--session", "chat-1", cwd=repo, env=env).returncode == 0
    return [
        {"project": "mid"},
        {"project": "mid", "step": "2"},
        {"project": "gate"},
        {"project": "early", "step": "3"},
        {"project": "early", "step": "4"},
        {"project": "held"},
    ]


def test_an_mcp_resume_answer_names_no_cli_command_or_option(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    asks = _sessions(repo)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "session_resume", "mcp", "--root", str(repo)]
    )

    async def go() -> list[Any]:
        async with Client(params, read_timeout_seconds=60) as c:
            got = [await c.call_tool("resume", {**a, "format": "json"}) for a in asks]
            texts.extend([await c.call_tool("resume", a) for a in asks])
            reports.extend([await c.call_tool("report", {"project": "mid"})])
            return got

    reports: list[Any] = []
    texts: list[Any] = []
    answers = anyio.run(go)
    # the crash report's recommended commands too (they were CLI lines over MCP)
    (rep,) = reports
    assert not rep.is_error, rep.content
    rec = rep.structured_content["recommended"]
    assert rec["commands"] and all("tool" in c and "run" not in c for c in rec["commands"])
    assert rec["commands"][0]["tool"] != "session_start"  # the server holds its session
    for key, s in _strings(rec):
        prose = GIT_SPAN.sub("", s)
        assert "session-resume " not in prose and not OPTION.search(prose), (key, s)
    actions = []
    for ask, res in zip(asks, answers, strict=True):
        assert not res.is_error, res.content
        answer = res.structured_content
        actions.append(answer["action"])
        for key, s in _strings(answer):
            prose = GIT_SPAN.sub("", s)
            assert "session-resume " not in prose, (ask, key, s)
            assert not OPTION.search(prose), (ask, key, s)
    assert actions == [
        "resume_from_checkpoint",
        "resume_from_checkpoint",
        "start",
        "prerequisites_incomplete",
        "prerequisites_incomplete",
        "session_active",
    ], actions
    # the default answer, what a host hands the model: the plan as text alone (no structured
    # content, which hosts show instead of the text), its commands the same tool calls
    for ask, res, js in zip(asks, texts, answers, strict=True):
        assert not res.is_error and res.structured_content is None, (ask, res)
        (text,) = [x.text for x in res.content]
        assert text.startswith(f"action: {js.structured_content['action']}"), (ask, text)
        for c in js.structured_content["commands"]:
            assert f"{c['tool']} {json.dumps(c['arguments'])}" in text, (ask, c, text)
        prose = GIT_SPAN.sub("", text)
        assert "session-resume " not in prose and not OPTION.search(prose), (ask, text)
        # the text is well under the JSON (0.65: the plan's text now also carries the gate's
        # approval write, the pause and the next chat's hand-over)
        ratio = len(text) / len(json.dumps(js.structured_content))
        assert ratio < (0.65 if js.structured_content["plan"] else 0.8), (ask, ratio)
    plan = answers[0].structured_content["plan"]
    assert '`finding {"action": "resolve", "title": "TITLE"}`' in plan["open_findings"]["rule"]
    assert "`artifacts: [PATH]`" in plan["artifacts_rule"]
