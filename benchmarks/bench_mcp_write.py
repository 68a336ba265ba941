"""mcp-write: one write moment (`decide KEY VALUE`) through `session-resume mcp` against the
same write from the CLI (a process per call, as agents call it through a shell), the write
service in process, and store.save() in process (the anchor).

The MCP contender is the round trip of one `tools/call` over the server's stdio pipes
(JSON-RPC, newline-delimited, as the MCP stdio transport frames it) to a server started once,
as an agent host keeps it; the client side is a minimal synchronous JSON-RPC writer/reader, so
the time is the server's and the pipe's, not a host SDK's. Goal: the MCP round trip <= 1.1x
its floor, the sum of a refused tools/call (the SDK's and the pipe's share) and the write
service in process; its ratios to save() and to the CLI call are reported. Never enforced.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from bench_save import counting_os
from commandline import bench_env, process, tool
from runner import (
    EXAMPLE,
    BenchAbort,
    BenchUnavailable,
    Prepared,
    Run,
    Target,
    benchmark,
    fmt_s,
)
from states import STATE_FILE

_MCP, _CLI, _SERVICE, _SAVE, _EMPTY = (
    "MCP tools/call decide",
    "CLI session-resume decide",
    "services.writes.set_decision()",
    "store.save()",
    "MCP tools/call refused",
)
_VALUES = ("simple", "standard")  # alternated: every call is a real change
_MCP_GOAL_VS_FLOOR = 1.1
_SAVE_SESSION = "5e55b1d0c0ffee42"


def _session(tmpdir: Path, name: str) -> tuple[dict[str, Any], Path]:
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    doc.pop("$schema", None)  # its relative path points into the source tree
    doc["project"] = name
    sdir = tmpdir / "agent-output" / name
    sdir.mkdir(parents=True)
    for f in EXAMPLE.parent.iterdir():
        if f.name != STATE_FILE:
            shutil.copyfile(f, sdir / f.name)
    (sdir / STATE_FILE).write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return doc, sdir


class McpPipe:
    """A synchronous JSON-RPC client over the server's stdin and stdout."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.proc, self.stdin, self.stdout = proc, proc.stdin, proc.stdout
        self.seq = 0

    def send(self, message: dict[str, Any]) -> None:
        self.stdin.write(json.dumps(message).encode() + b"\n")
        self.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.seq += 1
        self.send({"jsonrpc": "2.0", "id": self.seq, "method": method, "params": params})
        out: IO[bytes] = self.stdout
        while True:
            line = out.readline()
            if not line:
                raise BenchAbort("the MCP server closed its stdout")
            reply = json.loads(line)
            if reply.get("id") == self.seq:
                if "error" in reply:
                    raise BenchAbort(f"MCP {method}: {reply['error']}")
                result: dict[str, Any] = reply["result"]
                return result

    def close(self) -> None:
        if self.proc.poll() is None:
            self.stdin.close()  # the server ends its session and exits
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_server(tmpdir: Path, env: dict[str, str]) -> McpPipe:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    proc = subprocess.Popen(
        [tool("session-resume"), "mcp", "--root", str(tmpdir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=tmpdir,
        env=env,
    )
    pipe = McpPipe(proc)
    atexit.register(pipe.close)  # `session-resume mcp --root tmpdir`, as a host starts it
    pipe.request(
        "initialize",
        {
            "protocolVersion": sorted(HANDSHAKE_PROTOCOL_VERSIONS)[-1],
            "capabilities": {},
            "clientInfo": {"name": "bench_mcp_write", "version": "1"},
        },
    )
    pipe.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return pipe


def _ratios(med: dict[str, float], info: dict[str, Any]) -> list[str]:
    mcp, cli, svc, save = med[_MCP], med[_CLI], med[_SERVICE], med[_SAVE]
    vs_cli = mcp / cli
    lines = [
        f"MCP round trip / CLI call: {vs_cli:.3f}x (reported)",
        f"MCP round trip / store.save(): {mcp / save:.2f}x (reported)",
        f"MCP round trip / the same write service in process: {mcp / svc:.2f}x (the rest: "
        f"JSON-RPC framing, schema check of the arguments, the pipe)",
        f"the write service / store.save(): {svc / save:.2f}x (load, plan, lease check)",
    ]
    if _EMPTY in med:
        empty = med[_EMPTY]
        lines.append(
            f"a tools/call that does no work (its arguments refused by the server): "
            f"{fmt_s(empty)} = {empty / save:.2f}x store.save(); with the write service, an "
            f"MCP write moment through this SDK costs at least {(empty + svc) / save:.2f}x "
            f"store.save()"
        )
        floor = empty + svc
        lines.append(
            f"the MCP round trip {fmt_s(mcp)} against its floor {fmt_s(floor)} (refused "
            f"tools/call {fmt_s(empty)} + write service {fmt_s(svc)}): {mcp / floor:.2f}x "
            f"(goal <= {_MCP_GOAL_VS_FLOOR}x); the rest, {fmt_s(mcp - floor)}, is the part of a "
            "write's tools/call that neither the refused call nor the service in process has "
            "(its result built and serialised, the server's caches after the other "
            "contenders' runs); this benchmark does not split it further"
        )
    for who in (_SERVICE, _SAVE):
        if who in info:
            calls = ", ".join(f"{v:g} {k}" for k, v in info[who].items())
            lines.append(f"per call of {who} (counted over {info['counted']}): {calls}")
    return lines


def _count_io(call: Any, n: int) -> dict[str, float]:
    """fsync/replace/rename/link calls per call, counted in the package's modules."""
    with counting_os() as counts:
        for _ in range(n):
            call()
    return {k: v / n for k, v in counts.items()}


@benchmark(
    "mcp-write",
    description="one write moment (decide complexity, alternating values) on the bundled "
    "example session: a tools/call to a running `session-resume mcp` over stdio vs the CLI "
    "`session-resume decide` (a process per call) vs services.writes.set_decision() in "
    "process vs store.save() in process of the same change with its worklog event (anchor: "
    "the state and its event, the durable work of every write moment); a fifth contender is "
    "a tools/call the server refuses (bad arguments): the SDK's and the pipe's share alone",
    contenders=(_MCP, _CLI, _SERVICE, _SAVE, _EMPTY),
    anchor=_SAVE,
    targets=(
        Target(_MCP, _MCP_GOAL_VS_FLOOR, against=(_EMPTY, _SERVICE)),
        Target(_MCP, None),
    ),
    runs=40,
    quick_runs=10,
    warmup=3,
    derive=_ratios,
)
def mcp_write(tmpdir: Path) -> Prepared:
    if importlib.util.find_spec("mcp") is None:
        raise BenchUnavailable("the mcp extra is not installed (pip install -e '.[mcp]')")
    from session_resume import load_workflow
    from session_resume.services import writes
    from session_resume.services.context import WriteContext
    from session_resume.storage import store

    (tmpdir / ".git").mkdir()
    env = bench_env(tmpdir)
    doc, save_dir = _session(tmpdir, "bench-save")
    _, svc_dir = _session(tmpdir, "bench-service")
    _, cli_dir = _session(tmpdir, "bench-cli")
    _, mcp_dir = _session(tmpdir, "bench-mcp")
    wf = load_workflow(doc["workflow"])
    turn = {"mcp": 0, "svc": 0, "save": 0}

    # The anchor does the durable work every write moment does: the state and its worklog
    # event (the one set_decision logs), as save-vs-bare-io's save() does.
    def save() -> None:
        turn["save"] += 1
        value, previous = _VALUES[turn["save"] % 2], _VALUES[(turn["save"] + 1) % 2]
        store.save(
            save_dir,
            {**doc, "decisions": {**doc["decisions"], "complexity": value}},
            now=datetime.now(UTC),
            workflow=wf,
            root=tmpdir,
            event="decision",
            event_detail={"key": "complexity", "value": value, "previous": previous},
            session_id=_SAVE_SESSION,
        )

    def service() -> None:
        turn["svc"] += 1
        # as the server calls it: its timer keeps the heartbeat (docs/spec.md §7)
        ctx = WriteContext(
            session_dir=svc_dir, now=datetime.now(UTC), root=tmpdir, heartbeat_on_write=False
        )
        writes.set_decision(ctx, "complexity", _VALUES[turn["svc"] % 2])

    pipe = start_server(tmpdir, env)

    def mcp() -> None:
        turn["mcp"] += 1
        args = {"project": "bench-mcp", "key": "complexity", "value": _VALUES[turn["mcp"] % 2]}
        res = pipe.request("tools/call", {"name": "decide", "arguments": args})
        if res.get("isError"):
            raise BenchAbort("MCP decide refused: " + str(res.get("content")))

    def empty() -> None:
        # "project" must be a string: refused by the server's argument check, before any I/O
        res = pipe.request("tools/call", {"name": "decide", "arguments": {"project": 5}})
        if not res.get("isError"):
            raise BenchAbort("MCP decide with a bad project was not refused")

    cli = process(
        [tool("session-resume"), "decide", "complexity", "standard", "--project", "bench-cli"],
        cwd=tmpdir,
        env=env,
    )
    for call in (save, service, mcp, cli.call, empty):
        call()
    for d in (svc_dir, mcp_dir, cli_dir):
        if store.load(d, root=tmpdir).status != "ok":
            raise BenchAbort(f"the write left {d.name} without a valid state")
    counted = 4  # even: the decision's value alternates
    info: dict[str, Any] = {"counted": counted}
    info.update({_SERVICE: _count_io(service, counted), _SAVE: _count_io(save, counted)})
    return Prepared(
        {
            _MCP: Run(mcp, 'tools/call decide {"project", "key": "complexity", "value"}'),
            _CLI: cli,
            _SERVICE: Run(
                service,
                "writes.set_decision(ctx, 'complexity', value), ctx as the server makes it "
                "(heartbeat_on_write=False)",
            ),
            _EMPTY: Run(empty, 'tools/call decide {"project": 5} (refused: SR180)'),
            _SAVE: Run(
                save,
                "store.save(dir, doc with the decision, now=..., workflow=apex, root=..., "
                "event='decision', event_detail=...)",
            ),
        },
        notes=[
            "the bundled example state, one session directory per contender; the MCP "
            "server is started once (untimed) and answers over its stdio pipes; its lease's "
            "heartbeat is its 60 s timer's, not each write's (docs/spec.md §7)"
        ],
        info=info,
    )
