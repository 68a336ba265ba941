"""A refused write writes nothing, over MCP as on the command line: every write tool of
`session-resume mcp`, called through the MCP SDK's own client with arguments it refuses (no
such session, no such step or checkpoint, an unknown decision key, a session that exists
already), leaves the repository's tree byte for byte as it was: no session directory, lock,
lease or worklog line. Its refusal's hint names the caller's own arguments (the project it
gave), never a placeholder for them."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli

# Test tier (README "Test tiers"): `session-resume mcp` servers and the SDK's client.
pytestmark = pytest.mark.mcp

pytest.importorskip("mcp", reason="the optional MCP SDK is not installed (pip install -e '.[mcp]')")

import anyio  # noqa: E402  (installed with mcp)
from mcp import Client, StdioServerParameters  # noqa: E402

from session_resume.mcp.write_tools import WRITE_TOOLS  # noqa: E402

NOW = "2026-11-22T12:00:00Z"


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and directory (None) under ``root``, but git's own."""
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        rel = Path(dirpath).relative_to(root).as_posix()
        out[rel + "/"] = None
        for f in filenames:
            out[f"{rel}/{f}"] = (Path(dirpath) / f).read_bytes()
    return out


# Each write tool with arguments it refuses: on a project that has no session ("nope"), and
# on the session "P" (which exists) with a step, checkpoint, key or finding it lacks.
REFUSED: list[tuple[str, dict[str, Any]]] = [
    ("init", {"project": "P"}),
    ("start", {"project": "nope", "step": "1"}),
    ("checkpoint", {"project": "nope", "step": "1", "sub_step": "phase_1_discovery"}),
    ("complete", {"project": "nope", "step": "1"}),
    ("skip", {"project": "nope", "step": "1", "reason": "not needed"}),
    ("review_audit", {"project": "nope", "step": "1", "complexity": "simple"}),
    ("decide", {"project": "nope", "key": "region", "value": "swedencentral"}),
    ("finding", {"project": "nope", "action": "add", "title": "No RTO"}),
    ("transition", {"project": "nope", "complete": "1", "start": "2"}),
    ("approve", {"project": "nope", "step": "1"}),
    ("start", {"project": "P", "step": "99"}),
    ("start", {"project": "P", "step": "3"}),
    ("checkpoint", {"project": "P", "step": "1", "sub_step": "not_a_checkpoint"}),
    ("complete", {"project": "P", "step": "2"}),
    ("skip", {"project": "P", "step": "99", "reason": "r"}),
    ("decide", {"project": "P", "key": "regoin", "value": "x"}),
    ("finding", {"project": "P", "action": "resolve", "title": "never added"}),
    ("transition", {"project": "P", "complete": "5", "start": "6"}),
    ("review_audit", {"project": "P", "step": "99", "complexity": "simple"}),
    ("approve", {"project": "P", "step": "1"}),  # step 1 is not complete: SR710
    # the other tools that write: no session, or a directory that is no session's
    ("recover", {"session_dir": "."}),
    ("recover", {"project": "nope"}),
    ("migrate", {"project": "nope"}),
]


def test_every_write_tool_is_covered() -> None:
    assert {t.name for t in WRITE_TOOLS} <= {name for name, _ in REFUSED}


def test_a_refused_write_tool_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".git").mkdir()
    assert run_cli("init", "P", "--now", NOW, cwd=root).returncode == 0
    assert run_cli("session", "end", "--project", "P", "--now", NOW, cwd=root).returncode == 0
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "session_resume", "mcp", "--root", str(root)],
        cwd=str(root),
    )
    wrote: list[str] = []
    placeholders: list[str] = []
    refused: list[str] = []

    async def calls() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            for name, args in REFUSED:
                before = tree(root)
                result = await client.call_tool(name, args)
                after = tree(root)
                shown = json.dumps(args)
                if not result.is_error:
                    refused.append(f"{name} {shown} was not refused")
                if after != before:
                    changed = sorted(
                        k for k in {*before, *after} if before.get(k, 0) != after.get(k, 0)
                    )
                    wrote.append(f"{name} {shown} changed {changed}")
                text = "\n".join(getattr(c, "text", "") for c in result.content)
                if '"PROJECT"' in text or "PROJECT" in text.split():
                    placeholders.append(f"{name} {shown}: {text}")

    before_all = tree(root)
    anyio.run(calls)
    assert not refused, refused
    assert not wrote, "\n".join(wrote)
    assert not placeholders, "\n".join(placeholders)
    assert tree(root) == before_all  # nor when the server ended: no lease was held
    assert not (root / "agent-output" / "nope").exists()


def test_a_refusal_names_the_callers_project(tmp_path: Path) -> None:
    """The refusal of a write to a session that does not exist names the project the caller
    gave in the call that creates it."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".git").mkdir()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "session_resume", "mcp", "--root", str(root)],
        cwd=str(root),
    )

    async def call() -> str:
        async with Client(params, read_timeout_seconds=60) as client:
            result = await client.call_tool("start", {"project": "nope", "step": "1"})
            assert result.is_error
            return "\n".join(getattr(c, "text", "") for c in result.content)

    text = anyio.run(call)
    assert "SR161" in text and '"project": "nope"' in text, text
    assert not (root / "agent-output").exists()
