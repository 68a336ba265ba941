"""Hostile MCP arguments (issue 25, findings 10, 11 and 17), against the real server process
driven by the MCP SDK's own client: glob characters in ``session_dir`` are a name, never a
pattern; a ``workflow`` argument reads only a built-in, the configured workflow or a YAML file
inside the repository; a NUL in a path is a coded refusal in every tool.

Every link planted here points at a decoy tree inside the test's temp directory; the decoy is
hashed before and after, and its canary (a key name) never reaches a reply.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, apex_state, dump

pytest.importorskip("mcp", reason="the optional MCP SDK is not installed (pip install -e '.[mcp]')")

import anyio  # noqa: E402  (installed with mcp)
from mcp import Client, StdioServerParameters  # noqa: E402

from session_resume.mcp.schemas import INPUT_SCHEMAS  # noqa: E402

CANARY = "decoy_canary_25m"
STATE = "00-session-state.json"


def make_repo(top: Path) -> tuple[Path, Path]:
    """``top``/repo with a session ``demo``; ``top``/decoy outside it: a session whose state
    holds the canary as a key, and workflow-looking YAML files whose keys are the canary."""
    repo = top / "repo"
    (repo / ".git").mkdir(parents=True)
    d = repo / "agent-output" / "demo"
    d.mkdir(parents=True)
    (d / STATE).write_bytes(dump(apex_state()))
    decoy = top / "decoy"
    (decoy / "sub").mkdir(parents=True)
    (decoy / "sub" / STATE).write_bytes(dump({**apex_state(), CANARY: 1}))
    for name in ("w.yaml", "w.json", "evil"):
        (decoy / name).write_text(f"{CANARY}: 1\nsecond_{CANARY}: 2\n")
    return repo, decoy


def tree_hash(top: Path) -> dict[str, str]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        for n in sorted(dirnames + filenames):
            p = Path(dirpath) / n
            st = os.lstat(p)
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else ""
            out[str(p.relative_to(top))] = f"{stat.S_IFMT(st.st_mode)}:{st.st_mode:o}:{digest}"
    return out


def calls(root: Path, todo: list[tuple[str, dict[str, Any]]]) -> list[tuple[Any, str, list[str]]]:
    """Each call's (result, text, codes), one server for all; the server must still answer a
    resume after each."""

    async def go() -> list[tuple[Any, str, list[str]]]:
        out = []
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "session_resume", "mcp", "--root", str(root)],
            cwd=str(root),
        )
        async with Client(params, read_timeout_seconds=120) as c:
            for tool, args in todo:
                r = await c.call_tool(tool, args)
                text = "\n".join(x.text for x in r.content if getattr(x, "type", "") == "text")
                diags = (r.structured_content or {}).get("diagnostics", [])
                out.append((r, text, [d["code"] for d in diags]))
                alive = await c.call_tool("resume", {"project": "demo"})
                assert not alive.is_error
        return out

    return anyio.run(go)


def test_glob_characters_in_session_dir_are_a_name_not_a_pattern(tmp_path: Path) -> None:
    """Finding 10: `[e]vil/sub` was expanded as a glob after the containment check of the
    literal name, so it reached `evil/sub` through a link out of the repository; `**` over two
    links to `.` hung the whole server."""
    repo, decoy = make_repo(tmp_path)
    os.symlink(decoy, repo / "evil")
    d = repo / "agent-output" / "demo"
    os.symlink(".", d / "l1")
    os.symlink(".", d / "l2")
    before = tree_hash(decoy)
    todo = [
        (tool, {"session_dir": sd})
        for tool in ("validate", "migrate")
        for sd in ("[e]vil/sub", "ev?l/sub", "*/sub", "agent-output/**", "agent-output/*/l1")
    ]
    for (r, text, codes), (tool, args) in zip(calls(repo, todo), todo, strict=True):
        assert CANARY not in text, (tool, args)
        assert "SR900" not in codes and "decoy" not in text, (tool, args, text)
        result = r.structured_content or {}
        if tool == "validate":  # a name that is not there, or the session through a link
            files = result["files"]
            assert all(f["diagnostics"] for f in files) or args["session_dir"].endswith("l1")
            assert all(not f["path"].startswith(str(decoy)) for f in files)
        else:
            assert r.is_error and codes, (tool, args, text)
    assert tree_hash(decoy) == before


def test_a_workflow_argument_reads_nothing_outside_the_repository(tmp_path: Path) -> None:
    """Finding 11: the `workflow` argument loaded any file and echoed its key names."""
    repo, decoy = make_repo(tmp_path)
    os.symlink(decoy / "w.yaml", repo / "link.yaml")
    shutil.copy(decoy / "evil", repo / "evil")  # a repository file that is no workflow YAML
    shutil.copy(REPO / "schema" / "workflows" / "apex.yaml", repo / "mine.yaml")
    before = tree_hash(decoy)
    bad = [
        str(decoy / "w.yaml"),
        "../decoy/w.yaml",
        "link.yaml",
        str(decoy / "w.json"),
        "evil",
        "../decoy/evil",
        "agent-output",
    ]
    todo = [
        (tool, {"project": "demo", "workflow": wf})
        for wf in bad
        for tool in ("validate", "resume", "render_handoff", "budget", "init")
    ]
    todo = [(t, {**a, "step": "1"} if t == "budget" else a) for t, a in todo]
    for (r, text, codes), (tool, args) in zip(calls(repo, todo), todo, strict=True):
        assert r.is_error and codes == ["SR180"], (tool, args, text)
        assert CANARY not in text, (tool, args, text)
    good = calls(repo, [("validate", {"project": "demo", "workflow": "mine.yaml"})])
    assert good[0][0].structured_content["ok"] is True, good[0][1]
    assert tree_hash(decoy) == before


def test_a_nul_in_a_path_is_a_coded_refusal_in_every_tool(tmp_path: Path) -> None:
    """Finding 17: a NUL in `session_dir` was SR900 "embedded null byte" in every tool."""
    repo, decoy = make_repo(tmp_path)
    before = tree_hash(decoy)
    required = {
        **{"project": "demo", "step": "1", "sub_step": "phase_1_discovery", "reason": "r"},
        **{"action": "add", "title": "t", "complete": "1", "start": "2"},
    }
    todo = []
    for tool, schema in sorted(INPUT_SCHEMAS.items()):
        args = {k: required[k] for k in schema.get("required", []) if k in required}
        if "session_dir" in schema["properties"]:
            todo.append((tool, {**args, "session_dir": "agent-output/demo\0/x"}))
        if "workflow" in schema["properties"]:
            todo.append((tool, {**args, "project": "demo", "workflow": "apex\0.yaml"}))
    for (r, text, codes), (tool, args) in zip(calls(repo, todo), todo, strict=True):
        assert r.is_error and codes == ["SR180"], (tool, args, text)
        assert "NUL" in text
    assert tree_hash(decoy) == before
    assert (repo / "agent-output" / "demo" / STATE).read_bytes() == dump(apex_state())
