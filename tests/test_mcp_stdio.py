"""The MCP server's stdio (session_resume.mcp.stdio): the loop's own pipe reader and writer
when the client starts the server with pipes, the SDK's streams otherwise.

Real server processes over real pipes and a regular file: framing (several messages in one
write, one split over writes, CRLF, a 3 MiB line, bytes that are not UTF-8), a client that
stops reading (the heartbeat goes on, every reply arrives later), one that closes the server's
stdout (its session ends, exit 0, no SR900), and the descriptors: 0 and 1 diverted while
serving, the wire back and blocking afterwards.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli

# Test tier (README "Test tiers"): `session-resume mcp` servers over real pipes.
pytestmark = pytest.mark.mcp

pytest.importorskip("mcp", reason="the optional MCP SDK is not installed (pip install -e '.[mcp]')")

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS  # noqa: E402  (installed with mcp)

SENTINEL = "00-session.active"


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def _msg(id_: int | None, method: str, params: dict[str, Any] | None = None) -> bytes:
    m: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id_ is not None:
        m["id"] = id_
    if params is not None:
        m["params"] = params
    return json.dumps(m).encode()


def _hello() -> bytes:
    init = {
        "protocolVersion": sorted(HANDSHAKE_PROTOCOL_VERSIONS)[-1],
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    }
    return _msg(1, "initialize", init) + b"\n" + _msg(None, "notifications/initialized") + b"\n"


def _server(root: Path, stdin: Any, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "session_resume", "mcp", "--root", str(root), *extra],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=root,
    )


def _read_replies(proc: subprocess.Popen[bytes], ids: set[int]) -> dict[int, dict[str, Any]]:
    """Replies read from the server until every one of ``ids`` came (the SDK drops the
    requests still running when stdin closes, so a client waits before closing).

    Read with ``os.read`` from the pipe's descriptor, never through ``proc.stdout``: a
    buffered ``readline`` may pull several replies out of the pipe at once, and ``select`` on
    the descriptor would then wait for bytes that already sit in Python's buffer (the cause
    of a 120 s hang when replies arrive together). Bytes of a line still incomplete when the
    last reply wanted came are dropped; ``proc.stdout`` itself is left unread."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    got: dict[int, dict[str, Any]] = {}
    pending = bytearray()  # bytes of a line not yet complete
    deadline = time.monotonic() + 120
    while not ids <= got.keys():
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no reply to {sorted(ids - got.keys())} within 120 s"
        chunk = os.read(fd, 1 << 16)
        assert chunk, f"the server closed stdout before replying to {sorted(ids - got.keys())}"
        pending += chunk
        *lines, rest = pending.split(b"\n")
        pending = bytearray(rest)
        for line in lines:
            reply = json.loads(line)
            if "id" in reply:
                got[reply["id"]] = reply
    return got


def _threads(pid: int) -> int | None:
    """How many threads the server runs (the SDK's own streams read stdin in a worker
    thread; the loop's do not). None where /proc does not say."""
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return None


def _replies(out: bytes) -> dict[int, dict[str, Any]]:
    got = {}
    for line in out.splitlines():
        reply = json.loads(line)
        if "id" in reply:
            got[reply["id"]] = reply
    return got


def test_framing_over_a_pipe(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    proc = _server(root, subprocess.PIPE)
    assert proc.stdin is not None
    big = "x" * (3 << 20)  # one 3 MiB line: longer than any buffer on the way
    proc.stdin.write(_hello() + _msg(2, "ping", {}) + b"\n" + _msg(3, "ping", {})[:10])
    proc.stdin.flush()
    time.sleep(0.3)  # the rest of message 3 comes later: one message over two writes
    proc.stdin.write(_msg(3, "ping", {})[10:] + b"\r\n")  # CRLF
    proc.stdin.write(_msg(4, "ping", {"_meta": {"pad": big}}) + b"\n")
    proc.stdin.write(b'{"jsonrpc": "2.0", "id": 5, "method": "ping\xff"}\n')  # not UTF-8
    proc.stdin.write(_msg(6, "ping", {}) + b"\n")
    proc.stdin.flush()
    got = _read_replies(proc, {1, 2, 3, 4, 5, 6})
    threads = _threads(proc.pid)
    _, err = proc.communicate(timeout=120)
    assert threads in (1, None)  # the loop reads the pipe itself: no reader thread
    assert proc.returncode == 0, err.decode()
    assert got[1]["result"]["serverInfo"]["name"] == "session-resume"
    assert got[2]["result"] == {} and got[3]["result"] == {} and got[6]["result"] == {}
    assert got[4]["result"] == {}, got[4]  # the 3 MiB line read whole
    assert "error" in got[5]  # the replaced byte names no method: an error reply, no crash


def test_a_regular_file_as_stdout_keeps_the_sdk_streams(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    out = tmp_path / "replies.jsonl"
    with out.open("wb") as f:
        proc = subprocess.Popen(
            [sys.executable, "-m", "session_resume", "mcp", "--root", str(root)],
            stdin=subprocess.PIPE,
            stdout=f,  # a loop cannot watch a regular file: the SDK's own streams
            stderr=subprocess.PIPE,
            cwd=root,
        )
        assert proc.stdin is not None
        proc.stdin.write(_hello() + _msg(2, "ping", {}) + b"\n" + _msg(3, "tools/list", {}) + b"\n")
        proc.stdin.flush()
        got: dict[int, dict[str, Any]] = {}
        deadline = time.monotonic() + 120
        while not {1, 2, 3} <= got.keys() and time.monotonic() < deadline:
            time.sleep(0.05)
            got = _replies(out.read_bytes().rpartition(b"\n")[0])
        threads = _threads(proc.pid)
        proc.stdin.close()
        proc.wait(timeout=120)
    assert proc.stderr is not None
    assert proc.returncode == 0, proc.stderr.read().decode()
    assert threads is None or threads >= 2  # the SDK's reader thread
    assert got[2]["result"] == {}
    assert "decide" in {t["name"] for t in got[3]["result"]["tools"]}


@pytest.mark.parametrize("one_socket", [False, True], ids=["two socket pairs", "one socket"])
def test_sockets_as_stdin_and_stdout(tmp_path: Path, one_socket: bool) -> None:
    """Node's clients give the server socket pairs; socat's EXEC and inetd one socket for
    both ends, which the loop's write transport would take for the client closing it."""
    root = _repo(tmp_path)
    srv_in, cli_out = socket.socketpair()
    srv_out, cli_in = (srv_in, cli_out) if one_socket else socket.socketpair()
    proc = subprocess.Popen(
        [sys.executable, "-m", "session_resume", "mcp", "--root", str(root)],
        stdin=srv_in.fileno(),
        stdout=srv_out.fileno(),
        stderr=subprocess.PIPE,
        cwd=root,
    )
    for sock in {srv_in, srv_out}:
        sock.close()
    reader = cli_in.makefile("rb")
    try:
        cli_out.sendall(_hello() + _msg(2, "ping", {}) + b"\n")
        got: dict[int, dict[str, Any]] = {}
        cli_in.settimeout(120)
        while not {1, 2} <= got.keys():
            line = reader.readline()
            assert line, "the server closed its stdout"
            reply = json.loads(line)
            got[reply.get("id", 0)] = reply
        threads = _threads(proc.pid)
        cli_out.shutdown(socket.SHUT_WR)  # the client's end of stdin: EOF
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.close()
        for sock in {cli_in, cli_out}:
            sock.close()
    assert proc.stderr is not None
    assert proc.returncode == 0, proc.stderr.read().decode()
    assert got[2]["result"] == {}
    if threads is not None:  # one socket: the SDK's streams (a reader thread); two: the loop's
        assert (threads >= 2) if one_socket else threads == 1


def test_a_client_that_stops_reading_holds_no_heartbeat(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    d = root / "agent-output" / "demo"
    run_cli("init", "demo", "--workflow", "apex", "--root", str(root), cwd=root)
    run_cli("session", "end", "--project", "demo", "--root", str(root), cwd=root)
    proc = _server(root, subprocess.PIPE, "--heartbeat", "0.2")
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(_hello())
        proc.stdin.write(
            _msg(2, "tools/call", {"name": "session_start", "arguments": {"project": "demo"}})
            + b"\n"
        )
        proc.stdin.flush()
        for _ in range(600):  # the lease exists once the call is done
            if (d / SENTINEL).exists():
                break
            time.sleep(0.05)
        first = json.loads((d / SENTINEL).read_text())["heartbeat"]
        # Replies far larger than a pipe holds, and nobody reading them.
        uri = "session-resume://skills/apex/SKILL.md"
        n = 300
        for i in range(n):
            proc.stdin.write(_msg(10 + i, "resources/read", {"uri": uri}) + b"\n")
        proc.stdin.flush()
        later = first
        for _ in range(300):  # the heartbeat has one-second resolution
            time.sleep(0.1)
            later = json.loads((d / SENTINEL).read_text())["heartbeat"]
            if later != first:
                break
        assert later > first  # the loop went on while the replies waited for the pipe
        got = _read_replies(proc, {10 + i for i in range(n)})
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert all(got[10 + i]["result"]["contents"][0]["uri"] == uri for i in range(n))
    assert sum(len(json.dumps(got[10 + i])) for i in range(n)) > 1 << 20
    assert proc.returncode == 0


_DESCRIPTORS = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from session_resume.mcp.stdio import loop_stdio

    wire_in_r, wire_in_w = os.pipe()
    wire_out_r, wire_out_w = os.pipe()
    os.dup2(wire_in_r, 0)
    os.dup2(wire_out_w, 1)
    os.write(wire_in_w, b"hello\\n")

    async def main():
        async with loop_stdio() as (stdin, stdout):
            async for line in stdin:
                break
            await stdout.write("reply " + line)
            os.write(1, b"stray\\n")  # a handler printing: not on the wire
            inside = (os.read(0, 10), os.path.samestat(os.fstat(1), os.fstat(2)))
        return line, inside

    line, inside = asyncio.run(main())
    os.write(wire_in_w, b"after\\n")
    report = {
        "line": line,
        "inside_stdin": inside[0].decode(),
        "inside_stdout_is_stderr": inside[1],
        "wire": os.read(wire_out_r, 100).decode(),
        "stdin_back": os.read(0, 100).decode(),
        "blocking": [os.get_blocking(0), os.get_blocking(1)],
    }
    sys.stderr.write(json.dumps(report))
    """
)


def test_descriptors_are_diverted_while_serving_and_given_back(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _DESCRIPTORS],
        capture_output=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    err = proc.stderr.decode()
    report = json.loads(err[err.index("{") :])
    assert "stray" in err[: err.index("{")]  # fd 1 pointed at stderr while serving
    assert report == {
        "line": "hello\n",
        "inside_stdin": "",  # fd 0 read the null device
        "inside_stdout_is_stderr": True,
        "wire": "reply hello\n",
        "stdin_back": "after\n",
        "blocking": [True, True],
    }


def test_a_client_that_closes_the_servers_stdout_ends_the_session(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    d = root / "agent-output" / "demo"
    proc = _server(root, subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(_hello())
        call = {"name": "session_start", "arguments": {"project": "demo"}}
        proc.stdin.write(_msg(2, "tools/call", call) + b"\n")
        proc.stdin.flush()
        assert not _read_replies(proc, {1, 2})[2]["result"]["isError"]
        proc.stdout.close()  # the client stops listening, stdin still open
        try:
            for i in range(50):  # the next reply finds the pipe closed
                proc.stdin.write(_msg(10 + i, "ping", {}) + b"\n")
                proc.stdin.flush()
                time.sleep(0.05)
        except BrokenPipeError:
            pass  # the server is gone
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    assert proc.returncode == 0, err
    assert "the client's end of the server's stdout: closed" in err and "SR900" not in err
    events = [json.loads(line) for line in (d / "00-worklog.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["session_start", "session_end"]
    assert not (d / SENTINEL).exists()
