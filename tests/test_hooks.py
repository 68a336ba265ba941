"""`session-resume hook EVENT` (issue 28, docs/spec.md §13): each host's documented input
(fixtures under tests/fixtures/hooks/, both spellings of the common fields) answered in that
host's documented output (schema/hooks/<host>-output.json); a whole session played through
the events by a scripted host against a real repository and the real CLI; hostile input never
blocks and never tracebacks; no hook writes anything but the compaction note."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import time
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from session_resume.cli.commands.hook import COMPACTED, PLAN_LIMIT, fit

from conftest import REPO, run_cli

# Test tier (README "Test tiers"): many CLI processes.
pytestmark = pytest.mark.slow

FIXTURES = REPO / "tests" / "fixtures" / "hooks"
HOSTS = ("claude", "vscode", "copilot")
STATE = "00-session-state.json"


@cache
def schema(host: str) -> jsonschema.Draft202012Validator:
    doc = json.loads((REPO / "schema" / "hooks" / f"{host}-output.json").read_text())
    jsonschema.Draft202012Validator.check_schema(doc)
    return jsonschema.Draft202012Validator(doc)


def make_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A repository with one apex session, step 1 in progress (the real CLI wrote it)."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    assert run_cli("init", "shop", cwd=root).returncode == 0
    assert run_cli("start", "1", "--project", "shop", cwd=root).returncode == 0
    return root, root / "agent-output" / "shop"


def write_artifact(sdir: Path, name: str = "01-requirements.md") -> Path:
    """A file written under the session directory after its last recorded write (its time
    set just past the state's, so no test sleeps; never in the future, so the write that
    records it comes after it, as it would for an agent)."""
    f = sdir / name
    f.write_text("# Requirements\n", encoding="utf-8")
    later = max(time.time(), os.stat(sdir / STATE).st_mtime + 0.01)
    os.utime(f, (later, later))
    return f


def fixture_input(host: str, name: str, root: Path, sdir: Path) -> bytes:
    text = (FIXTURES / host / f"{name}.json").read_text(encoding="utf-8")
    text = text.replace("{REPO}", str(root)).replace("{SESSION_DIR}", str(sdir))
    return text.encode("utf-8")


def hook(*args: str, data: bytes, cwd: Path | None = None) -> Any:
    """Run the real hook; it always exits 0 and prints one JSON object or nothing."""
    res = run_cli("hook", *args, input=data, cwd=cwd)
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""
    out = res.stdout.strip()
    return json.loads(out) if out else None


def snapshot(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink():
            st = p.stat()
            digest = hashlib.sha256(p.read_bytes()).hexdigest()
            out[p.relative_to(root).as_posix()] = f"{digest} {st.st_mtime_ns}"
    return out


def event_of(name: str) -> str:
    return next(
        e
        for e in ("session-start", "pre-tool-use", "post-tool-use", "stop", "pre-compact")
        if name.startswith(e)
    )


# --- each host's documented input, each host's documented output -------------------------------


CASES = sorted((p.parent.name, p.stem) for p in FIXTURES.glob("*/*.json"))


@pytest.mark.parametrize(("host", "name"), CASES, ids=[f"{h}/{n}" for h, n in CASES])
def test_documented_input_gets_documented_output(tmp_path: Path, host: str, name: str) -> None:
    root, sdir = make_repo(tmp_path)
    write_artifact(sdir)
    event = event_of(name)
    before = snapshot(root)
    # The configuration always names the event; the host is detected from the input.
    out = hook(event, data=fixture_input(host, name, root, sdir))
    after = snapshot(root)
    if event == "pre-compact":
        assert out is None
        changed = {k for k in after if before.get(k) != after[k]}
        # the note, and the tool's record of what it wrote (storage/written.py)
        assert changed == {
            "agent-output/shop/00-worklog.jsonl",
            "agent-output/shop/.00-session-written/record.json",
            "agent-output/shop/.00-session-written/worklog",
        }
        last = json.loads((sdir / "00-worklog.jsonl").read_text().splitlines()[-1])
        assert last["event"] == "note"
        assert last["detail"]["note"] == "context_compacted"
        assert last["detail"]["host"] == host
        return
    assert after == before  # no other hook writes anything
    if name.endswith("-allowed"):
        assert out is None
        return
    assert out is not None
    errors = [e.message for e in schema(host).iter_errors(out)]
    assert errors == []
    if event == "session-start":
        text = (
            out["additionalContext"]
            if host == "copilot"
            else out["hookSpecificOutput"]["additionalContext"]
        )
        assert "agent-output/shop" in text and "action:" in text
        assert len(text) <= PLAN_LIMIT
        assert text.endswith(COMPACTED) == name.endswith("compact")
    elif event == "pre-tool-use":
        body = out if host == "copilot" else out["hookSpecificOutput"]
        assert body["permissionDecision"] == "deny"
        assert "session-resume" in body["permissionDecisionReason"]
    elif event == "post-tool-use":
        text = (
            out["additionalContext"]
            if host == "copilot"
            else out["hookSpecificOutput"]["additionalContext"]
        )
        assert "--artifact agent-output/shop/01-requirements.md" in text
    else:
        body = out["hookSpecificOutput"] if host == "vscode" else out
        assert body["decision"] == "block"
        assert "session-resume checkpoint 1 phase_1_discovery" in body["reason"]


@pytest.mark.parametrize("host", HOSTS)
def test_the_host_is_detected_from_the_input(tmp_path: Path, host: str) -> None:
    """Without --host the output has the host's shape; --host names it explicitly too."""
    root, sdir = make_repo(tmp_path)
    data = fixture_input(host, "pre-tool-use", root, sdir)
    detected = hook("pre-tool-use", data=data)
    assert detected == hook("pre-tool-use", "--host", host, data=data)
    assert ("hookSpecificOutput" in detected) == (host != "copilot")


def test_the_event_is_read_from_the_input_when_not_given(tmp_path: Path) -> None:
    root, sdir = make_repo(tmp_path)
    out = hook(data=fixture_input("claude", "pre-tool-use", root, sdir))
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    vs = hook(data=fixture_input("vscode", "pre-tool-use", root, sdir))
    assert vs["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_no_session_no_output(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    for host in HOSTS:
        for name in ("stop", "pre-compact"):
            assert hook(event_of(name), data=fixture_input(host, name, root, root / "x")) is None
        # the guard needs no session: a protocol file's name inside a repository is refused
        out = hook("pre-tool-use", data=fixture_input(host, "pre-tool-use", root, root / "x"))
        assert "deny" in json.dumps(out)
        # the session start names the fresh start (the same door as `resume`), writing nothing
        out = hook("session-start", data=fixture_input(host, "session-start", root, root / "x"))
        assert "fresh_start" in json.dumps(out)
    assert snapshot(root) == {}


def test_a_stop_with_stop_hook_active_is_never_blocked(tmp_path: Path) -> None:
    root, sdir = make_repo(tmp_path)
    write_artifact(sdir)
    doc = json.loads(fixture_input("claude", "stop", root, sdir))
    assert hook("stop", data=json.dumps(doc).encode())["decision"] == "block"
    doc["stop_hook_active"] = True
    assert hook("stop", data=json.dumps(doc).encode()) is None


def _pre_tool_use(root: Path, tool: str, tool_input: Any) -> Any:
    """The pre-tool-use hook's answer to a tool call as Claude Code sends it."""
    doc = {
        "session_id": "s",
        "cwd": str(root),
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
    }
    return hook("pre-tool-use", data=json.dumps(doc).encode())


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Bash", {"command": "rm agent-output/shop/00-session-state.json.bak"}),
        ("Bash", {"command": "mv x.json agent-output/shop/00-session-state.json"}),
        ("Bash", {"command": "sed -i s/a/b/ agent-output/shop/00-worklog.jsonl"}),
        ("Bash", {"command": "echo {} | tee agent-output/shop/00-session.active"}),
        ("Bash", {"command": "git checkout -- agent-output/shop/00-session-state.json"}),
        ("MultiEdit", {"file_path": "agent-output/shop/00-session-state.json", "edits": []}),
        (
            "apply_patch",
            {
                "input": "*** Begin Patch\n"
                "*** Delete File: agent-output/shop/00-worklog.jsonl\n*** End Patch"
            },
        ),
        ("create_file", {"filePath": "agent-output/other/00-session-state.json", "content": "{}"}),
    ],
)
def test_writes_of_protocol_files_are_denied(tmp_path: Path, tool: str, tool_input: Any) -> None:
    root, _ = make_repo(tmp_path)
    out = _pre_tool_use(root, tool, tool_input)
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Read", {"file_path": "agent-output/shop/00-session-state.json"}),
        ("Bash", {"command": "cat agent-output/shop/00-session-state.json | jq ."}),
        ("Bash", {"command": "cp agent-output/shop/00-session-state.json /tmp/copy.json"}),
        ("Bash", {"command": "session-resume checkpoint 1 phase_1_discovery --project shop"}),
        (
            "Write",
            {
                "file_path": "agent-output/shop/01-requirements.md",
                "content": "see 00-session-state.json",
            },
        ),
        (
            "str_replace_based_edit_tool",
            {"command": "view", "path": "agent-output/shop/00-session-state.json"},
        ),
        ("Write", {"file_path": "docs/00-session-state.json.md", "content": "x"}),
    ],
)
def test_everything_else_is_allowed_silently(tmp_path: Path, tool: str, tool_input: Any) -> None:
    root, _ = make_repo(tmp_path)
    assert _pre_tool_use(root, tool, tool_input) is None


def test_a_link_to_the_state_is_denied_too(tmp_path: Path) -> None:
    root, sdir = make_repo(tmp_path)
    (root / "alias.json").symlink_to(sdir / STATE)
    out = _pre_tool_use(root, "Write", {"file_path": "alias.json"})
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_session_root_linked_out_of_the_repository_is_not_used(tmp_path: Path) -> None:
    elsewhere, _ = make_repo(tmp_path / "decoy")
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "agent-output").symlink_to(elsewhere / "agent-output")
    before = snapshot(elsewhere)
    for name in ("session-start", "pre-compact"):
        assert hook(name, data=fixture_input("claude", name, root, root / "x")) is None
    assert snapshot(elsewhere) == before


def test_a_listed_artifact_gets_no_context(tmp_path: Path) -> None:
    root, sdir = make_repo(tmp_path)
    write_artifact(sdir)
    rel = "agent-output/shop/01-requirements.md"
    args = ("checkpoint", "1", "phase_1_discovery", "--artifact", rel, "--project", "shop")
    assert run_cli(*args, cwd=root).returncode == 0
    out = hook("post-tool-use", data=fixture_input("claude", "post-tool-use", root, sdir))
    assert out is None


# --- the plan's length ---------------------------------------------------------------------


def test_fit_keeps_the_head_and_the_tail_and_cuts_the_plan_at_a_line() -> None:
    head = "session-resume: a session is in progress in d.\n"
    plan = "".join(f"line {i:04d} of the plan\n" for i in range(500))
    text = fit(head, plan, COMPACTED, "d")
    assert len(text) <= PLAN_LIMIT
    assert text.startswith(head) and text.endswith(COMPACTED)
    assert "cut at 3,000 characters: `session-resume resume d` prints it all" in text
    body = text[len(head) :].split("…")[0]
    assert body.endswith("of the plan\n")  # whole lines only
    short = fit(head, "action: start\n", "", "d")
    assert short == head + "action: start"


def test_a_long_plan_is_cut_to_the_limit(tmp_path: Path) -> None:
    root, sdir = make_repo(tmp_path)
    for i in range(16):
        title = f"finding number {i} with a long title that makes the briefing long " * 3
        assert run_cli("finding", "add", title, "--project", "shop", cwd=root).returncode == 0
    out = hook("session-start", data=fixture_input("claude", "session-start-compact", root, sdir))
    text = out["hookSpecificOutput"]["additionalContext"]
    assert len(text) <= PLAN_LIMIT and text.endswith(COMPACTED)
    # the details went first: the findings' titles are counted, not listed
    assert "  open findings: 16" in text and "left out to fit: " in text
    assert "cut at 3,000 characters" in text


def test_a_plan_too_long_leaves_out_details_before_any_command() -> None:
    """The session-start injection is whole when leaving out the details an agent does not
    act on now suffices (the decision log, the files not to read, the gate's decision values,
    the findings' titles, counted): every command, To-do and closing rule stays, nothing is
    "cut at"."""
    head = "session-resume: a session is in progress in d.\n"
    keep = [
        "action: resume_from_checkpoint, step 2",
        "reason SR703: step 2 is in progress. To do: read only what `read now` lists",
        "read now:",
        "  d/02-a.md (partial: continue it)",
        "commands in order, each when its [condition] holds:",
        *[
            f"{i}. [after work {i}] session-resume checkpoint 2 c{i} --project p --session s"
            for i in range(1, 9)
        ],
        "to finish step 2:",
        "  start: session-resume start 3 --project p --session s",
        "  a file a checkpoint's work wrote that its line does not name: add `--artifact PATH`",
    ]
    spare = [
        *[
            f"  decision D{i:03d}: a long title of a logged decision {i} -> its choice"
            for i in range(5)
        ],
        *[f"  open finding: finding {i} " + "with a long title " * 6 for i in range(20)],
        "do not read:",
        *[f"  d/{i}.md (over the step's budget of 2 startup files)" for i in range(6)],
        *[f"    decide k{i} (a | b); not decided" for i in range(5)],
    ]
    plan = "\n".join(keep[:2] + spare[:5] + keep[2:4] + spare[5:] + keep[4:]) + "\n"
    assert len(head + plan) > PLAN_LIMIT
    text = fit(head, plan, COMPACTED, "d")
    assert len(text) <= PLAN_LIMIT and text.endswith(COMPACTED) and "cut at" not in text
    for line in keep:
        assert line + "\n" in text, line
    assert "  open findings: 20" in text
    assert "(left out to fit: the decision log, " in text
    assert "`session-resume resume d` shows them)" in text


# --- hostile input ---------------------------------------------------------------------------

_NUL = (
    b'{"cwd": "/tmp\\u0000x", "hook_event_name": "PreToolUse", "tool_name": "Write", '
    b'"tool_input": {"file_path": "a\\u0000/00-session-state.json"}}'
)
_SURROGATES = (
    b'{"cwd": "CWD", "hook_event_name": "PreToolUse", "session_id": "\\ud800", '
    b'"trigger": "\\udfff", "tool_name": "Write\\udc00", "tool_input": {"file_path": "\\ud800.md"}}'
)
_TYPES = b'{"cwd": 5, "hook_event_name": ["Stop"], "tool_name": {}, "tool_input": "x", "source": 3}'
HOSTILE = {
    "empty": b"",
    "garbage": b"this is not json",
    "array": b"[1, 2, 3]",
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "deep-object": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    "huge": b'{"cwd": "' + b"a" * (5 * 1024 * 1024) + b'"}',
    "not-utf8": b'{"cwd": "\xff\xfe", "hook_event_name": "Stop"}',
    "nul": _NUL,
    "lone-surrogate": _SURROGATES,
    "lone-surrogate-cwd": b'{"cwd": "\\udc80CWD", "hook_event_name": "Stop", "source": "\\ud800"}',
    "big-number": b'{"cwd": "CWD", "stop_hook_active": ' + b"9" * 10_000 + b"}",
    "wrong-types": _TYPES,
    "long-command": b'{"cwd": "CWD", "hook_event_name": "PreToolUse", "tool_name": "Bash", '
    b'"tool_input": {"command": "sed -i ' + b"x " * 200_000 + b'"}}',
    "utf16": '{"cwd": "CWD", "hook_event_name": "Stop"}'.encode("utf-16"),
}


@pytest.fixture(scope="module")
def shared_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("hostile"))[0]


@pytest.mark.parametrize("name", sorted(HOSTILE))
@pytest.mark.parametrize("event", ["session-start", "pre-tool-use", "stop", "pre-compact", ""])
def test_hostile_input_never_blocks_nor_tracebacks(
    shared_repo: Path, tmp_path: Path, name: str, event: str
) -> None:
    root = shared_repo
    before = snapshot(root)
    data = HOSTILE[name].replace(b"CWD", str(root).encode())
    args = [event] if event else []
    # Run from outside the repository: input that names no usable cwd finds no session.
    res = run_cli("hook", *args, input=data, cwd=tmp_path)
    assert (res.returncode, res.stderr) == (0, "")
    if res.stdout:  # a well-formed input with junk in its strings may get context, never a block
        out = json.loads(res.stdout)
        text = json.dumps(out)
        assert '"deny"' not in text and '"block"' not in text
        assert list(out) == ["hookSpecificOutput"]
        assert "additionalContext" in out["hookSpecificOutput"]
    after = snapshot(root)
    changed = {k for k in after if before.get(k) != after[k]}
    if changed:  # a well-formed compaction with junk in its strings: the note, cleaned
        log = "agent-output/shop/00-worklog.jsonl"
        record = {
            "agent-output/shop/.00-session-written/record.json",  # the tool's own record
            "agent-output/shop/.00-session-written/worklog",
        }
        assert (changed - record, event) == ({log}, "pre-compact")
        note = json.loads((root / log).read_text().splitlines()[-1])
        assert note["event"] == "note" and "host_session" not in note["detail"]


def test_session_start_in_a_repository_with_no_session_names_the_fresh_start(
    tmp_path: Path,
) -> None:
    """No session yet: the hook answers through the same door as `resume` (a fresh start,
    `init` first), and the command it names answers `fresh_start` as printed."""
    root, sdir = make_repo(tmp_path)
    shutil.rmtree(root / "agent-output")
    out = hook("session-start", data=fixture_input("claude", "session-start", root, sdir))
    text = out["hookSpecificOutput"]["additionalContext"]
    assert "`session-resume resume --project PROJECT`" in text and "`init`" in text
    res = run_cli("resume", "--project", "harbor", cwd=root)
    assert res.returncode == 0 and res.stdout.startswith("action: fresh_start, step 1")
    assert not (root / "agent-output").exists()
    # not a repository: nothing injected
    plain = tmp_path / "plain"
    plain.mkdir()
    data = fixture_input("claude", "session-start", plain, plain / "x")
    assert hook("session-start", data=data, cwd=plain) is None


def test_a_misconfigured_hook_is_silent_not_a_usage_error(tmp_path: Path) -> None:
    root, sdir = make_repo(tmp_path)
    data = fixture_input("claude", "pre-tool-use", root, sdir)
    for args in (("no-such-event",), ("pre-tool-use", "--host", "nope", "--unknown"), ("--host",)):
        res = run_cli("hook", *args, input=data, cwd=root)
        assert res.returncode == 0 and res.stderr == ""
    assert hook("pre-tool-use", "--host", "nope", "--unknown", data=data) is not None


# --- a scripted host plays a whole session -----------------------------------------------------


def run_printed(command: str, cwd: Path) -> str:
    """Run a command line the hook printed, exactly as printed (the CLI as this Python)."""
    argv = shlex.split(command)
    assert argv[0] == "session-resume"
    res = run_cli(*argv[1:], cwd=cwd)
    assert res.returncode == 0, res.stderr
    return res.stdout


def backticked(text: str, starts: str) -> str:
    return next(c for c in re.findall(r"`([^`]+)`", text) if c.startswith(starts))


@pytest.mark.parametrize("host", ["claude", "vscode"])
def test_a_scripted_host_plays_a_whole_session(tmp_path: Path, host: str) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    sid = "host-session-1"

    def send(event: str, **fields: Any) -> Any:
        common: dict[str, Any] = {"cwd": str(root), "transcript_path": "/t.jsonl"}
        if host == "claude":
            common.update(session_id=sid, hook_event_name=event)
        else:
            common.update(sessionId=sid, hookEventName=event, timestamp="2026-11-25T10:00:00Z")
        before = snapshot(root)
        out = hook(data=json.dumps({**common, **fields}).encode(), cwd=root)
        if event != "PreCompact":
            assert snapshot(root) == before, f"{event} wrote a file"
        if out is not None:
            assert list(schema(host).iter_errors(out)) == []
        return out

    def body(out: Any) -> Any:
        return out.get("hookSpecificOutput", out)

    # A repository without a session: the host's session start names the fresh start.
    first = send("SessionStart", source="startup" if host == "claude" else "new")
    assert "`session-resume resume --project PROJECT`" in body(first)["additionalContext"]
    # The agent starts a session and its first step with the real CLI.
    assert run_cli("init", "shop", cwd=root).returncode == 0
    assert run_cli("start", "1", "--project", "shop", cwd=root).returncode == 0
    sdir = root / "agent-output" / "shop"
    art = "agent-output/shop/01-requirements.md"

    # Edits: the artifact is allowed, a hand edit of the state is denied with the command.
    assert send("PreToolUse", tool_name="Write", tool_input={"file_path": art}) is None
    denied = send("PreToolUse", tool_name="Edit", tool_input={"file_path": f"{sdir}/{STATE}"})
    assert "session-resume checkpoint" in body(denied)["permissionDecisionReason"]
    write_artifact(sdir)
    ctx = send(
        "PostToolUse",
        tool_name="Write",
        tool_input={"file_path": art},
        tool_response={"success": True},
    )
    assert f"--artifact {art}" in body(ctx)["additionalContext"]

    # Stop: blocked once with the write to make; with stop_hook_active it is allowed.
    blocked = send("Stop", stop_hook_active=False)
    assert body(blocked)["decision"] == "block"
    assert send("Stop", stop_hook_active=True) is None
    # The agent runs the printed checkpoint as printed; the next stop is allowed.
    run_printed(backticked(body(blocked)["reason"], "session-resume checkpoint"), root)
    assert send("Stop", stop_hook_active=False) is None

    # Compaction: a note in the worklog, nothing printed.
    lines_before = (sdir / "00-worklog.jsonl").read_text().splitlines()
    assert send("PreCompact", trigger="auto") is None
    lines_after = (sdir / "00-worklog.jsonl").read_text().splitlines()
    assert lines_after[:-1] == lines_before
    note = json.loads(lines_after[-1])
    assert (note["event"], note["detail"]["trigger"], note["detail"]["host_session"]) == (
        "note",
        "auto",
        sid,
    )

    # Start again: the plan, now after the recorded checkpoint.
    start = send("SessionStart", source="compact" if host == "claude" else "new")
    text = body(start)["additionalContext"]
    assert "after checkpoint phase_1_discovery" in text
    assert "agent-output/shop" in text and len(text) <= PLAN_LIMIT
    if host == "claude":
        assert text.endswith(COMPACTED)
        lease = json.loads((sdir / "00-session.active").read_text())
        assert f"pass `--session {lease['session']}`" in text
    # The state the hooks saw is valid, and they never ended the lease.
    assert run_cli("validate", str(sdir / STATE), cwd=root).returncode == 0
    assert (sdir / "00-session.active").exists()


def test_stop_blocks_in_a_session_without_a_worklog(tmp_path: Path) -> None:
    """A session another tool wrote (the bundled example) has no worklog: the worklog's end
    cannot say whether a step is open, so the state does, and the stop still blocks once."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    sdir = root / "agent-output" / "contoso-portal"
    shutil.copytree(REPO / "examples" / "agent-output" / "contoso-portal", sdir)
    assert not (sdir / "00-worklog.jsonl").exists()
    write_artifact(sdir, "notes.md")
    out = hook("stop", data=fixture_input("claude", "stop", root, sdir))
    assert out is not None and out["decision"] == "block", out
    assert "notes.md" in out["reason"]
