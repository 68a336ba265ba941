"""Every command the tool prints runs when pasted (test_printed_commands.py parses them; this
module runs them). Over the conformance suite's states, the commands of every output path are
collected: the CLI's text and JSON (messages, hints, ``run:`` lines, ``commands``), the agent
host hooks' texts (session start, a denied write of the state, a stop with unrecorded work)
and the MCP server's answers and refusals (each suggested tool call). Each is run, from the
directory it was printed for, in a copy of the repository (each distinct command once, on the
first state that prints it): none may be a usage error (exit 2, or SR180 for a tool call) or
an internal error, and a command that leaves something for
the reader to fill in names it only with a marked placeholder (an upper-case word such as
``STEP`` or ``VALUE``), never an example value.

The CLI, the hook and the MCP tools run in-process (thousands of calls)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_printed_commands import FILL_IN, NOW, SUGGESTED, _case_states, _repo, collect

from session_resume.cli.main import main

# Test tier (README "Test tiers"): thousands of in-process CLI calls.
pytestmark = pytest.mark.slow

MARKED = re.compile(r"^[A-Z][A-Z_|]*[A-Z]$")
# words that stand in for the reader's own value without being marked as placeholders
EXAMPLES = frozenset({"my-project", "my-session", "<id>", "<session>", "NAME.yaml"})


def _hook_texts(root: Path) -> list[str]:
    """What the hooks print for this repository: session start, a denied hand edit of the
    state, a stop after unrecorded work (whichever apply)."""
    from session_resume.cli.commands.hook import answer

    out: list[str] = []
    state = root / "agent-output" / "demo" / "00-session-state.json"
    for doc in (
        {"cwd": str(root), "hook_event_name": "SessionStart", "source": "startup"},
        {"cwd": str(root), "hook_event_name": "SessionStart", "source": "compact"},
        {
            "cwd": str(root),
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": str(state), "content": "{}"},
        },
        {"cwd": str(root), "hook_event_name": "Stop", "stop_hook_active": False},
    ):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            res = answer(doc, None, None)
        out += _strings(res)
    return out


def _strings(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return []


_TOOL_CALL = re.compile(r"the `([a-z_]+)` tool(?: with `(\{[^`]*\})`)?")
_TOOL_SPAN = re.compile(r"`([a-z_]+) (\{[^`]*\})`")


def _mcp_calls(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls the MCP server's answers and refusals name for this repository."""
    from session_resume.mcp.lease_keeper import LeaseKeeper
    from session_resume.mcp.runtime import Runtime
    from session_resume.mcp.tools import call

    rt = Runtime(root=root, keeper=LeaseKeeper())
    calls: list[tuple[str, dict[str, Any]]] = []
    for name, args in (
        ("resume", {"project": "demo", "format": "json"}),
        ("resume", {"project": "demo"}),
        ("validate", {"project": "demo"}),
        ("report", {"project": "demo"}),
        ("migrate", {"project": "demo", "dry_run": True}),
    ):
        out = call(rt, name, args)
        doc = out.result
        calls += _structured_calls(doc)
        for text in [out.text, *_strings(doc)]:
            for m in _TOOL_CALL.finditer(text):
                with contextlib.suppress(ValueError):
                    calls.append((m.group(1), json.loads(m.group(2)) if m.group(2) else {}))
            for m in _TOOL_SPAN.finditer(text):
                with contextlib.suppress(ValueError):
                    calls.append((m.group(1), json.loads(m.group(2))))
    return calls


def _structured_calls(node: Any) -> list[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        if isinstance(node.get("tool"), str) and isinstance(node.get("arguments"), dict):
            return [(node["tool"], node["arguments"])]
        return [c for v in node.values() for c in _structured_calls(v)]
    if isinstance(node, list):
        return [c for v in node for c in _structured_calls(v)]
    return []


def _run_cli(argv: list[str], cwd: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:  # argparse's usage error
            rc = int(exc.code or 0)
    return rc, out.getvalue() + err.getvalue()


def _placeholders(words: list[str]) -> tuple[list[str], list[str]]:
    """(marked placeholders, unmarked example values) among a command's words."""
    marked = [w for w in words if w in FILL_IN or MARKED.match(w)]
    examples = [w for w in words if w in EXAMPLES or w.startswith("<")]
    return marked, examples


def walk(files: dict[str, bytes], base: Path) -> list[str]:
    """Everything wrong with the commands printed for one state."""
    root = _repo(base / "printed")
    sdir = root / "agent-output" / "demo"
    sdir.mkdir(parents=True)
    for name, data in files.items():
        (sdir / name).write_bytes(data)
    sub = root / "sub"
    printed: list[tuple[str, Path]] = []
    for argv, cwd in (
        (["validate", "--format", "json", "agent-output/demo", *NOW], sub),
        (["validate", "agent-output/demo", *NOW], root),
        (["resume", "--format", "json", "--project", "demo", *NOW], sub),
        (["resume", "agent-output/demo", *NOW], root),
        (["report", "agent-output/demo", *NOW], root),
        (["migrate", "--check", "agent-output/demo", *NOW], root),
        (["migrate", "--dry-run", "--format", "json", "--project", "demo", *NOW], sub),
        (["start", "1", "--project", "demo", *NOW], sub),
    ):
        for p in collect(argv, cwd):
            for cmd in SUGGESTED.findall(p.message + "\n" + p.hint):
                printed.append((cmd, cwd))
    for text in _hook_texts(root):
        printed += [(cmd, root) for cmd in SUGGESTED.findall(text)]
    tool_calls = _mcp_calls(root)
    problems: list[str] = []
    copy = base / "copy"  # one copy of the repository for this state's commands, in turn
    shutil.copytree(root, copy, symlinks=True)
    for cmd, cwd in printed:
        key = (cmd, cwd.relative_to(root).as_posix())
        if key in _RAN:
            continue
        _RAN.add(key)
        try:
            words = shlex.split(cmd)
        except ValueError as exc:
            problems.append(f"`{cmd}`: not shell words ({exc})")
            continue
        marked, examples = _placeholders(words[1:])
        if examples:
            problems.append(f"`{cmd}`: names {examples} where the reader's own value goes")
        if marked:
            continue  # left for the reader to fill in: test_printed_commands parses it
        rc, out = _run_cli(words[1:], copy / cwd.relative_to(root))
        if rc == 2 or rc == 3 or "SR900" in out:
            problems.append(f"`{cmd}` (from {key[1]}): exit {rc}: {out}")
    for tool, args in tool_calls:
        key = (json.dumps([tool, args], sort_keys=True), "mcp")
        if key in _RAN:
            continue
        _RAN.add(key)
        values = [v for v in args.values() if isinstance(v, str)]
        marked, examples = _placeholders(values)
        if examples:
            problems.append(f"{tool} {args}: names {examples} where the caller's value goes")
        if marked:
            continue
        from session_resume.mcp.lease_keeper import LeaseKeeper
        from session_resume.mcp.runtime import Runtime
        from session_resume.mcp.tools import call

        res = call(Runtime(root=copy, keeper=LeaseKeeper()), tool, dict(args))
        codes = [d.get("code") for d in (res.result or {}).get("diagnostics", [])]
        if "SR180" in codes or "SR900" in codes:
            problems.append(f"tool {tool} {args}: {res.text[:300]}")
    return problems


# Each distinct command (with the directory it was printed for) runs once, on the first state
# that prints it: whether a command line is a usage error depends on its words and the paths
# they name, which every state's repository holds alike; the states differ in which commands
# they print.
_RAN: set[tuple[str, str]] = set()


@pytest.mark.parametrize("files", _case_states())
def test_printed_commands_run(files: dict[str, bytes], tmp_path: Path) -> None:
    problems = walk(files, tmp_path)
    assert not problems, "\n".join(problems[:10])


def test_the_walker_sees_a_usage_error(tmp_path: Path) -> None:
    """The session-start hook once printed `session-resume session start DIR`, which `session
    start` refuses (it takes no path): the walker runs such a command and reports it."""
    root = _repo(tmp_path / "r")
    rc, out = _run_cli(["session", "start", "agent-output/demo"], root)
    assert rc == 2, out
    src = Path(__file__).resolve().parents[1] / "conformance" / "cases" / "valid"
    case = next(p for p in sorted(src.glob("*/files")) if (p / "00-session-state.json").exists())
    files = {p.name: p.read_bytes() for p in case.iterdir() if p.is_file()}
    texts = _hook_texts_for(files, tmp_path / "h")
    assert any("session-resume session start --session-dir" in t for t in texts), texts


def _hook_texts_for(files: dict[str, bytes], base: Path) -> list[str]:
    root = _repo(base)
    sdir = root / "agent-output" / "demo"
    sdir.mkdir(parents=True)
    for name, data in files.items():
        (sdir / name).write_bytes(data)
    return _hook_texts(root)
