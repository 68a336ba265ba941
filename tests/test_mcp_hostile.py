"""Hostile MCP arguments (issue 25, findings 10, 11 and 17), against the real server process
driven by the MCP SDK's own client: glob characters in ``session_dir`` are a name, never a
pattern; a ``workflow`` argument reads only a built-in, the configured workflow or a YAML file
inside the repository; a NUL in a path is a coded refusal in every tool.

Every link planted here points at a decoy tree inside the test's temp directory; the decoy is
hashed before and after, and its canary (a key name) never reaches a reply.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, apex_state, dump, tree_hash

pytest.importorskip("mcp", reason="the optional MCP SDK is not installed (pip install -e '.[mcp]')")

import anyio  # noqa: E402  (installed with mcp)
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS  # noqa: E402  (installed with mcp)

from session_resume.mcp.schemas import INPUT_SCHEMAS  # noqa: E402

# Test tier (README "Test tiers"): runs `session-resume mcp` servers.
pytestmark = pytest.mark.mcp

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


# --- framing: every request gets an answer (finding 23) --------------------------------------


def _line(obj: Any) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def _hello() -> dict[str, Any]:
    return {
        "protocolVersion": sorted(HANDSHAKE_PROTOCOL_VERSIONS)[-1],
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    }


def _exchange(repo: Path, lines: list[bytes], done: Any) -> tuple[list[dict[str, Any]], bytes, int]:
    """The real server over real pipes: write ``lines``, read replies until ``done(replies)``
    (a generous bound of 120 s: a dropped request fails the test), then close its stdin and
    collect the rest. Returns the replies, its stderr and its exit status.

    Read with ``os.read`` from the pipe's descriptor, never ``proc.stdout.readline``: a
    buffered read may pull two replies out of the pipe at once, and ``select`` on the
    descriptor would then wait for a reply already sitting in Python's buffer (a 120 s hang
    that failed CI when the last two replies came together)."""
    argv = [sys.executable, "-m", "session_resume", "mcp", "--root", str(repo)]
    pipe = subprocess.PIPE
    proc = subprocess.Popen(argv, stdin=pipe, stdout=pipe, stderr=pipe, cwd=repo)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(lines))
    proc.stdin.flush()
    fd = proc.stdout.fileno()
    replies: list[dict[str, Any]] = []
    pending = bytearray()  # bytes of a reply not yet complete
    deadline = time.monotonic() + 120
    try:
        while not done(replies):
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"not every request was answered in 120 s: {replies}"
            chunk = os.read(fd, 1 << 16)
            assert chunk, "the server closed its stdout"
            pending += chunk
            *complete, rest_of_line = pending.split(b"\n")
            pending = bytearray(rest_of_line)
            replies += [json.loads(x) for x in complete]
        rest, err = proc.communicate(timeout=120)  # closes stdin: the server ends
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    replies += [json.loads(x) for x in (bytes(pending) + rest).splitlines()]
    return replies, err, proc.returncode


def _call(id_: Any, arguments: Any, name: str = "validate") -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


def test_every_request_the_sdk_cannot_read_is_answered(tmp_path: Path) -> None:
    """Finding 23: a lone surrogate anywhere in a request, or nesting deeper than about 200,
    got no reply at all (the SDK's parser refused the line and the server dropped it): the
    host waited forever. The real server over real pipes answers each with a JSON-RPC error,
    to its id (id null when the line does not say), and goes on serving."""
    repo, decoy = make_repo(tmp_path)
    state = repo / "agent-output" / "demo" / STATE
    before, state_before = tree_hash(decoy), state.read_bytes()
    hello = _hello()
    sd = {"session_dir": "agent-output/demo"}
    lines = [
        _line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _line(_call(2, {**sd, "workflow": "a\ud800"})),  # json.dumps escapes it: \ud800
        _line(_call(3, {**sd, "x": json.loads("[" * 300 + "]" * 300)})),
        b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"validate",'
        b'"arguments":{"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}}}\n",
        _line({"jsonrpc": "2.0", "id": 5, "method": "tools/c\udfffall", "params": {}}),
        _line(_call("\ud800", sd)),  # an id that is no text: answered to id null
        _line({"jsonrpc": "2.0", "method": "notifications/x", "params": {"a": "\ud800"}}),
        b"not json at all\n",  # answered to id null
        _line({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": 7}),
        _line(_call(10, {"session_dir": "agent-output/dem\udc00o"}, "migrate")),
        _line(_call(11, sd)),  # a good call still answered
        _line({"jsonrpc": "2.0", "id": 12, "method": "ping"}),
    ]
    want = {1, 2, 3, 4, 5, 9, 10, 11, 12}
    replies, err, code = _exchange(repo, lines, lambda got: want <= {r.get("id") for r in got})
    by_id = {r["id"]: r for r in replies if r.get("id") is not None}
    nulls = [r for r in replies if "id" in r and r["id"] is None]
    assert code == 0 and b"Traceback" not in err, err.decode()
    for id_ in (2, 5, 10):
        assert by_id[id_]["error"]["code"] == -32700
        assert by_id[id_]["error"]["message"].startswith("SR182"), by_id[id_]
    for id_ in (3, 4):
        assert by_id[id_]["error"]["code"] == -32700
        assert by_id[id_]["error"]["message"].startswith("SR180"), by_id[id_]
    assert by_id[9]["error"]["code"] == -32600
    assert len(nulls) == 2 and all(r["error"]["code"] == -32700 for r in nulls), nulls
    assert by_id[11]["result"]["structuredContent"]["ok"] is True
    assert by_id[12]["result"] == {}
    assert set(by_id) == want  # the notification got no answer
    assert tree_hash(decoy) == before and state.read_bytes() == state_before


@pytest.mark.parametrize(
    "bad_id",
    [{"a": 1}, [1], True, False, 1.5, 2.0, None],
    ids=["object", "array", "true", "false", "fraction", "two-point-zero", "null"],
)
def test_a_request_whose_id_is_not_an_integer_or_a_string_is_answered(
    tmp_path: Path, bad_id: Any
) -> None:
    """A request whose id is no JSON-RPC id as MCP reads it (an object, an array, a boolean,
    a fraction; null, which MCP forbids and JSON-RPC reserves for answers to unknown ids)
    was read by the SDK as a notification: no answer at all. The real server over real pipes
    answers it with Invalid Request (-32600) to id null, before and after the handshake, and
    goes on serving; a batch (MCP has none) is one Invalid Request to id null, as JSON-RPC
    says for an empty one. Nothing is written."""
    repo, decoy = make_repo(tmp_path)
    state = repo / "agent-output" / "demo" / STATE
    before, state_before = tree_hash(decoy), state.read_bytes()
    lines = [
        _line({"jsonrpc": "2.0", "id": bad_id, "method": "ping"}),  # before the handshake
        _line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _hello()}),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _line(_call(bad_id, {"session_dir": "agent-output/demo"}, "checkpoint")),
        json.dumps({"jsonrpc": "2.0", "id": bad_id, "method": "ping"}, indent=1)
        .replace("\n", "")
        .encode()
        + b"\n",  # spaces around the id
        _line({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
        _line([{"jsonrpc": "2.0", "id": 3, "method": "ping"}]),
        _line([]),
        _line(
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "tools/call",
                "params": {"name": "resume", "arguments": {"project": "demo"}},
            }
        ),  # fmt: skip
        _line({"jsonrpc": "2.0", "method": "notifications/x"}),  # a notification: no answer
    ]

    def done(got: list[dict[str, Any]]) -> bool:
        nulls = [r for r in got if r.get("id") is None]
        return {1, 2, 4} <= {r.get("id") for r in got} and len(nulls) >= 5

    replies, err, code = _exchange(repo, lines, done)
    assert code == 0 and b"Traceback" not in err, err.decode()
    nulls = [r for r in replies if "id" in r and r["id"] is None]
    assert len(nulls) == 5, replies
    assert all(r["error"]["code"] == -32600 for r in nulls), nulls
    assert sum("id is neither an integer nor a string" in r["error"]["message"] for r in nulls) == 3
    assert all(r["error"]["message"].startswith("SR180") for r in nulls)
    by_id = {r["id"]: r for r in replies if r.get("id") is not None}
    assert set(by_id) == {1, 2, 4}, replies  # the batch's request is not run
    assert by_id[2]["result"] == {}
    assert by_id[4]["result"]["content"][0]["text"].startswith("action: "), by_id[4]
    assert tree_hash(decoy) == before and state.read_bytes() == state_before
