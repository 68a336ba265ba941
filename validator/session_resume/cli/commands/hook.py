"""`session-resume hook [EVENT]`: the agent host's hook (VS Code, Claude Code, the Copilot
agents). It reads the host's JSON on standard input and answers in that host's format
(schema/hooks/); `hooks install|uninstall` writes or removes the configuration.

A hook must never break the host: whatever the input (none, garbage, huge, deep, not UTF-8),
a hook that cannot decide prints nothing and exits 0. `cli/main.py` sends `hook` here before
its own parser (a usage error's exit 2 would block the host's tool call), so only what the
event needs is imported (the host waits for the answer).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from datetime import UTC, datetime

from session_resume.cli.commands.common import emit_json
from session_resume.cli.parser import Command
from session_resume.reporters.text import clean_tree
from session_resume.services import hook_guard, hook_hosts, hook_restore, hooks

# lazy imports: a hook imports only what its event needs (the host waits)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from session_resume.services.hooks import Sessions

EVENTS = ("session-start", "pre-tool-use", "post-tool-use", "stop", "pre-compact")
HOSTS = ("vscode", "claude", "copilot")  # the records: services/hook_hosts.py
# An event's names in the hosts' inputs and configurations, folded (lower case, no - or _).
_EVENT_NAMES = {
    "sessionstart": "session-start",
    "pretooluse": "pre-tool-use",
    "posttooluse": "post-tool-use",
    "stop": "stop",
    "agentstop": "stop",
    "subagentstop": "stop",
    "precompact": "pre-compact",
}
# The event names the output's `hookEventName` carries.
_HOOK_EVENT = {
    "session-start": "SessionStart",
    "pre-tool-use": "PreToolUse",
    "post-tool-use": "PostToolUse",
    "stop": "Stop",
    "pre-compact": "PreCompact",
}
MAX_INPUT = 4 * 1024 * 1024  # a larger input is not read: the hook allows
PLAN_LIMIT = 3000  # characters of the session-start context
# A repository with no session yet: the same door as every other moment (docs/spec.md §10.2)
FRESH_START = (
    "session-resume: no session in this repository yet. To start one, ask "
    "`session-resume resume --project PROJECT` (PROJECT: the project's name): it answers "
    "`fresh_start` with the plan, whose first command, `init`, creates the state and takes "
    "the lease; then follow it as printed."
)
COMPACTED = "Your context was compacted: the plan above is the truth."


def _hook_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "event",
        nargs="?",
        metavar="EVENT",
        help=f"{', '.join(EVENTS)} (default: the input's event name)",
    )
    p.add_argument(
        "--host",
        metavar="HOST",
        help=f"{', '.join(HOSTS)}: the host whose file configures this command (`hooks install` "
        "writes --host claude into .claude/settings.json); another host reading that file gets "
        "no answer from it while its own file runs the event. The answer's host is detected "
        "from the input (this one when the input says nothing)",
    )
    p.set_defaults(func=_run_parsed, format="json")


def _hooks_arguments(p: argparse.ArgumentParser) -> None:
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    for action, text in (("install", "write the configuration"), ("uninstall", "remove it")):
        a = actions.add_parser(action, help=text)
        a.add_argument(
            "--host",
            action="append",
            choices=HOSTS,
            help="only this host's file (repeatable; default: all; vscode and copilot share "
            ".github/hooks/session-resume.json)",
        )
        a.add_argument("--dry-run", action="store_true", help="print the changes, write nothing")
        a.add_argument("--root", metavar="DIR", help="repository root (default: from .git)")
        a.add_argument("--format", choices=["text", "json"], default="text")
        a.set_defaults(func=_run_install)


COMMANDS = (
    Command(
        "hook",
        order=130,
        help="answer an agent host's hook (VS Code, Claude Code, Copilot) from its JSON on stdin",
        description="Read the host's hook input (JSON) on standard input and answer in its "
        "format: session-start injects the resume plan of the session in progress, "
        "pre-tool-use denies a file tool writing a protocol file, post-tool-use names the "
        "checkpoint that records a new file, stop asks once for unrecorded work, pre-compact "
        "notes the compaction in the worklog. Whatever the input, a hook that cannot decide "
        "prints nothing and exits 0.",
        arguments=_hook_arguments,
    ),
    Command(
        "hooks",
        order=130,
        help="install or uninstall the hook configuration of this repository",
        description="Write the hooks' configuration: .github/hooks/session-resume.json (VS "
        "Code and the Copilot agents) and a merge into .claude/settings.json (Claude Code) "
        "that keeps every existing key and hook. A second install changes nothing; "
        "uninstall removes exactly the entries install adds.",
        arguments=_hooks_arguments,
    ),
)


# --- the hook ------------------------------------------------------------------------------


def run_hook_argv(argv: list[str]) -> int:
    """`session-resume hook [EVENT] [--host HOST]`, without the parser: an unknown option is
    ignored, never a usage error (exit 2 blocks the host)."""
    event = host = None
    it = iter(argv)
    for arg in it:
        if arg == "--host":
            host = next(it, None)
        elif arg.startswith("--host="):
            host = arg.split("=", 1)[1]
        elif not arg.startswith("-") and event is None:
            event = arg
    return run_hook(event, host)


def _run_parsed(args: argparse.Namespace) -> int:
    return run_hook(args.event, args.host)


def run_hook(event: str | None, host: str | None) -> int:
    try:
        out = answer(read_input(), event, host)
    except Exception:  # noqa: BLE001 - a hook that cannot decide allows; never a traceback
        out = None
    if out is not None:
        try:
            sys.stdout.write(json.dumps(out, ensure_ascii=True) + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    return 0


def read_input() -> dict[str, Any] | None:
    """The host's JSON object on standard input, or None (none, too large, not JSON, not an
    object, nested too deeply, not UTF-8)."""
    stdin = sys.stdin
    if stdin is None or stdin.isatty():
        return None
    try:
        data = stdin.buffer.read(MAX_INPUT + 1)
    except (OSError, ValueError, AttributeError):
        return None
    if not data or len(data) > MAX_INPUT:
        return None
    try:
        doc = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def _text(doc: dict[str, Any], *keys: str) -> str:
    for k in keys:
        v = doc.get(k)
        if isinstance(v, str):
            return v
    return ""


def event_of(doc: dict[str, Any], given: str | None) -> str | None:
    name = given or _text(doc, "hookEventName", "hook_event_name")
    return _EVENT_NAMES.get(name.lower().replace("-", "").replace("_", "")) if name else None


def answer(doc: dict[str, Any] | None, given_event: str | None, given_host: str | None) -> Any:
    """The JSON to print for this input, or None for nothing (allow, no context)."""
    if doc is None:
        return None
    event = event_of(doc, given_event)
    if event is None:
        return None
    host = hook_hosts.detect(doc, given_host)
    cwd = _text(doc, "cwd") or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    if hook_hosts.silent_for(host, given_host) and _home_configures(host, cwd, event):
        # this host reads this command's file and its own: the command there answers
        return None
    if event == "pre-tool-use":
        # no session, order or configuration needed: a protocol file's name inside any
        # repository a path names is refused, whatever the configuration says
        name, tool_input = _tool(doc)
        reason = hook_guard.guard(cwd, name, tool_input)
        return None if reason is None else host.deny(reason)
    restoring = event in ("post-tool-use", "stop")
    sessions = hooks.find_sessions(cwd, order=event != "post-tool-use", fallback=restoring)
    if sessions is not None and sessions.fresh and event == "session-start":
        return _context(host, event, FRESH_START)  # no session yet: how to start one
    if sessions is None or not sessions.dirs:
        return None
    if event == "session-start":
        source = _text(doc, "source")
        return _context(host, event, session_start_text(sessions, source))
    # guaranteed whatever the spelling: a protocol file changed by anything but the tool is
    # put back from the tool's own last write (docs/spec.md §13)
    restored = (
        hook_restore.restore_changed(sessions, now=datetime.now(UTC), host=host.name)
        if restoring
        else []
    )
    if event == "post-tool-use":
        name, tool_input = _tool(doc)
        text = hooks.unlisted_written(sessions, name, tool_input)
        return _context(host, event, "\n".join([*restored, *([text] if text else [])]))
    if event == "stop":
        if doc.get("stop_hook_active") is not False:
            # Block once: only an input that says whether this stop follows a block
            # (stop_hook_active, which every host's stop sends) can be blocked without
            # looping. What was put back is in the worklog.
            return None
        reason = hooks.unrecorded_work(sessions)
        text = "\n".join([*restored, *([reason] if reason else [])])
        return host.block(text) if text else None
    _record_compaction(sessions, doc, host.name)
    return None


def _home_configures(host: hook_hosts.Host, cwd: str, event: str) -> bool:
    # lazy: only a command that a host runs from a file it does not call home asks
    from session_resume.services.hook_config import configures, find_root

    root = find_root(cwd)
    return root is not None and configures(root, host.home, event)


def _tool(doc: dict[str, Any]) -> tuple[str, Any]:
    name = _text(doc, "tool_name", "toolName")
    tool_input = doc.get("tool_input", doc.get("toolArgs"))
    if isinstance(tool_input, str):  # Copilot's toolArgs may be the arguments' JSON text
        try:
            tool_input = json.loads(tool_input)
        except (ValueError, RecursionError):
            tool_input = {"command": tool_input}
    return name, tool_input


def _record_compaction(sessions: Sessions, doc: dict[str, Any], host: str) -> None:
    trigger = _printable(_text(doc, "trigger") or "unknown")
    host_session = _printable(_text(doc, "session_id", "sessionId"))
    hooks.record_compaction(
        sessions,
        now=datetime.now(UTC),
        trigger=trigger,
        host=host,
        host_session=host_session,
    )


def _printable(value: str) -> str:
    """``value`` without control characters or text that has no UTF-8 form (lone
    surrogates): what may be written into the worklog."""
    kept = "".join(c for c in value if c.isprintable())
    return kept.encode("utf-8", "ignore").decode("utf-8")


# --- answers in each host's format (schema/hooks/<host>-output.json) ---------------------------


def _context(host: hook_hosts.Host, event: str, text: str | None) -> dict[str, Any] | None:
    return host.context(_HOOK_EVENT[event], text) if text else None


# --- the plan ------------------------------------------------------------------------------


def plan_text(session_dir: Path, sessions: Sessions, session: str | None) -> str:
    """The resume plan of one session as text: THE one place the hook builds it (the
    orchestrator's answer, for the session ``session`` when it is this agent's own)."""
    # lazy: the resume service and its text, for session-start only
    from session_resume.cli.commands.resume import render_text
    from session_resume.cli.commands.suggest import Naming, complete_answer, complete_text
    from session_resume.services import resume as resume_service
    from session_resume.services.context import Reading

    reading = Reading(root=sessions.root, default_workflow=sessions.workflow)
    result = resume_service.resume(session_dir, reading, now=datetime.now(UTC), session=session)
    # every command it names runs as printed from the host's cwd, as `resume DIR` prints it
    chosen = result.get("session")
    naming = Naming(
        dir=shlex.split(hooks.shown_path(session_dir, sessions))[0],
        session=session or (chosen.get("id") if isinstance(chosen, dict) else None),
    )
    complete_answer(result, naming)
    return complete_text(str(render_text(clean_tree(result))), naming)


def session_start_text(sessions: Sessions, source: str) -> str | None:
    """The session-start context: who holds the lease and which id to pass, the plan, the
    other sessions, and after a compaction that the plan is the truth; at most
    :data:`PLAN_LIMIT` characters."""
    d = sessions.dirs[0]
    shown = hooks.shown_path(d, sessions)
    lease = hooks.lease_of(d)
    # Claude Code's resume and compact continue this chat: a lease it holds is its own.
    own = lease["session"] if lease is not None and source in ("compact", "resume") else None
    try:
        plan = plan_text(d, sessions, own)
    except Exception:  # noqa: BLE001 - a plan that cannot be built: the command still can
        plan = f"(the plan could not be built here: run `session-resume resume {shown}`)\n"
    state = "in progress" if hooks.in_progress(hooks.read_state(d)) else "found"
    head = [f"session-resume: a session is {state} in {shown}. Its plan (`session-resume "]
    head[0] += f"resume {shown}`) follows; record each step of it with the command it names."
    if own is not None:
        head.append(f"This chat holds its lease: pass `--session {own}` to every command.")
    elif lease is not None:
        head.append(
            f"Its lease names session {lease['session']}: pass `--session {lease['session']}` "
            "only if that id appears earlier in this conversation (a `session start` you ran "
            f"printed it); otherwise `session-resume session start --session-dir {shown}` "
            "takes a lease and prints your id (a live lease of another agent is taken only "
            "with the user's consent)."
        )
    else:
        head.append(
            f"No session holds its lease: `session-resume session start --session-dir {shown}` "
            "takes it and prints the id to pass as `--session`."
        )
    others = [hooks.shown_path(o, sessions) for o in sessions.dirs[1:6]]
    tail = []
    if others:
        more = len(sessions.dirs) - 1 - len(others)
        tail.append(
            "Other sessions here: " + ", ".join(others) + (f" and {more} more" if more else "")
        )
    if source == "compact":
        tail.append(COMPACTED)
    return fit("\n".join(head) + "\n", plan, "\n".join(tail), shown)


# What a too long plan leaves out first, in order: details the agent does not act on now (the
# state file and `resume` keep them), so that the commands, the To-dos, `read now` and the
# rules at the end always stay whole. Each: what it is called, and whether a line is one.
_SPARE: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("the decision log", lambda ln: ln.startswith("  decision ")),
    ("the review audit", lambda ln: ln.startswith("  review audit: {")),
    ("the files not to read", lambda ln: False),  # the `do not read:` block, below
    ("the gate's decision values", lambda ln: ln.startswith("    decide ")),
    ("the recorded artifacts", lambda ln: ln.startswith("  artifact: ")),
    ("the open findings' titles", lambda ln: ln.startswith("  open finding: ")),
)


def _spared(plan: str, room: int, shown: str) -> tuple[str, bool]:
    """``plan`` in at most ``room`` characters by leaving out, in the order of ``_SPARE``,
    whole kinds of detail (said in one line, with the command that prints them), and whether
    it fits; when even that does not fit, the plan without any of them."""
    lines = plan.rstrip("\n").split("\n")
    left: list[str] = []
    text = plan
    block = False
    for name, drop in _SPARE:
        kept: list[str] = []
        for ln in lines:
            block = ln == "do not read:" or (block and ln.startswith("  "))
            gone = block if name == "the files not to read" else drop(ln)
            if name == "the open findings' titles" and gone:
                if not any(k.startswith("  open findings: ") for k in kept):
                    n = sum(x.startswith("  open finding: ") for x in lines)
                    kept.append(f"  open findings: {n}")
                continue
            if not gone:
                kept.append(ln)
        if len(kept) != len(lines):
            left.append(name)
            lines = kept
        note = f"(left out to fit: {', '.join(left)}; `session-resume resume {shown}` shows them)"
        # said second, so that it stays even where the rest must be cut
        text = "\n".join([*lines[:1], note, *lines[1:]]) if left else "\n".join(lines)
        if len(text) <= room:
            return text, True
    return text + "\n", False


def fit(head: str, plan: str, tail: str, shown: str, limit: int = PLAN_LIMIT) -> str:
    """``head``, ``plan`` and ``tail`` in at most ``limit`` characters. A plan too long leaves
    out whole kinds of detail first (``_SPARE``: the commands, the To-dos and what to read
    stay); only a plan still too long is cut at a line end (with a line saying so and how to
    read the rest), so that the head and the tail always fit."""
    tail = tail.strip()
    full = head + plan.rstrip("\n") + ("\n" + tail if tail else "")
    if len(full) <= limit:
        return full
    spared, fits = _spared(plan, limit - len(head) - (len(tail) + 1 if tail else 0), shown)
    if fits:
        return head + spared + ("\n" + tail if tail else "")
    plan = spared  # the details went first; what still does not fit is cut below
    cut_note = f"… (cut at {limit:,} characters: `session-resume resume {shown}` prints it all)"
    room = limit - len(head) - len(cut_note) - (len(tail) + 1 if tail else 0) - 1
    if room <= 0:
        return (head + (tail and tail + "\n") + cut_note)[:limit]
    body = plan[:room]
    body = body[: body.rindex("\n") + 1] if "\n" in body else ""
    return head + body + cut_note + ("\n" + tail if tail else "")


# --- hooks install / uninstall -------------------------------------------------------------


# What the hooks import beyond the CLI itself: session-start's plan, the compaction note.
HOOK_MODULES = (
    "session_resume.cli.commands.resume",
    "session_resume.services.resume",
    "session_resume.services.context",
    "session_resume.services.hook_config",
    "session_resume.storage.store",
    "session_resume.storage.worklog",
    "session_resume.core.timeutil",
)


def warm_bytecode() -> None:
    """Import the modules the hooks load, so that Python's own bytecode cache holds them
    before the host's first event: on a checkout without bytecode (an editable install, a
    fresh clone) compiling them was most of the first session-start, which the host waits
    for. Python writes that cache as on any run, and skips it where it cannot write."""
    # lazy: only `hooks install` warms the modules
    import contextlib
    import importlib

    from session_resume.core.compiled import INDEX
    from session_resume.core.versions import CURRENT

    # the generated check of the current state schema: the largest module a hook loads
    state_check = "_session_state_" + CURRENT.replace(".", "_")
    compiled = [f"session_resume.core.compiled.{n}" for n in INDEX.values() if n == state_check]
    for name in (*HOOK_MODULES, *compiled):
        # a partial installation: the hook itself still allows
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def _run_install(args: argparse.Namespace) -> int:
    from session_resume.services.hook_config import install, uninstall

    hosts = tuple(dict.fromkeys(args.host or HOSTS))
    fn = install if args.action == "install" else uninstall
    changes = fn(args.root, hosts, dry_run=args.dry_run)
    if args.action == "install" and not args.dry_run:
        warm_bytecode()
    if args.format == "json":
        emit_json({"ok": True, "dry_run": args.dry_run, "changes": [c.to_json() for c in changes]})
        return 0
    for c in changes:
        verb = c.action if not args.dry_run else f"would be {c.action}"
        sys.stdout.write(f"{c.shown}: {verb}\n")
        if args.dry_run and c.content is not None:
            sys.stdout.write(c.content)
    for c in changes:
        if c.warning:
            sys.stderr.write(f"session-resume: warning: {c.warning}\n")
    return 0
