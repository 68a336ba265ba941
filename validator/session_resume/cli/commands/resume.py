"""`session-resume resume`: what to do next, as text or JSON (schema/decision/1.json)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from session_resume.cli.commands.common import (
    CommandError,
    config_for,
    emit_json,
    now_from,
    root_of,
    session_dir_of,
)
from session_resume.core.codes import CATALOGUE
from session_resume.core.resume_decision import Options, decide
from session_resume.core.workflow import WorkflowError, load_workflow, state_workflow_spec
from session_resume.storage.snapshot import take


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "resume",
        help="decide how to resume: the action, step, checkpoint and files to skip",
        description="Read the session directory and answer what to do now: fresh_start, "
        "needs_recovery, migrate_first, refuse_newer_version, start, restart_step, "
        "resume_from_checkpoint, offer_rerun, next_step, prerequisites_incomplete, "
        "session_active, workflow_complete. Without --step it answers for the orchestrator "
        "(the step to run next). Reads only; writes nothing.",
    )
    p.add_argument("dir", metavar="DIR", help="the session directory")
    p.add_argument("--step", metavar="KEY", help="the step asking (default: orchestrator)")
    p.add_argument("--now", metavar="TIMESTAMP", help="the current time (default: clock)")
    p.add_argument("--workflow", metavar="NAME|PATH")
    p.add_argument(
        "--session",
        metavar="ID",
        default=os.environ.get("SESSION_RESUME_SESSION"),
        help="this agent's session id (env SESSION_RESUME_SESSION); its own lease "
        "is not reported as another live session",
    )
    p.add_argument(
        "--stale-after",
        type=int,
        metavar="SECONDS",
        help="heartbeat age after which a session is orphaned (default 300)",
    )
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--root", metavar="DIR")
    p.set_defaults(func=run)


def decision_for(args: argparse.Namespace) -> dict[str, Any]:
    cfg = config_for(args.root)
    root = root_of(args.root, cfg)
    d = session_dir_of(args.dir)
    if not d.is_dir():
        from session_resume.core.codes import diag

        raise CommandError([diag("SR100", "no such session directory", file=str(d))], 2)
    snap = take(d, root=root)
    try:
        spec = args.workflow or state_workflow_spec(
            (snap.document or {}).get("workflow"), cfg.workflow
        )
        wf = load_workflow(spec)
    except WorkflowError as exc:
        raise CommandError(exc.diagnostics, 2) from None
    opts = Options(session=args.session, stale_seconds=args.stale_after or cfg.stale_after_seconds)
    result = decide(snap, args.step, now_from(args.now), wf, opts)
    result["session_dir"] = str(d)
    result["commands"] = [runnable(c, d) for c in result["commands"]]
    return result


_WRITERS = ("start", "checkpoint", "complete", "session", "init")


def runnable(command: str, session_dir: Path) -> str:
    """The decision's command with this session directory filled in, ready to run."""
    command = command.replace(" DIR", f" {shlex.quote(str(session_dir))}")
    parts = command.split()
    if len(parts) > 1 and parts[1] in _WRITERS:
        command += f" --session-dir {shlex.quote(str(session_dir))}"
    return command


def run(args: argparse.Namespace) -> int:
    result = decision_for(args)
    if args.format == "json":
        emit_json(result)
    else:
        sys.stdout.write(render_text(result))
    return 0


def render_text(r: dict[str, Any]) -> str:
    lines = [f"action: {r['action']}"]
    if r.get("step"):
        name = f" ({r['step_name']})" if r.get("step_name") else ""
        lines.append(f"step: {r['step']}{name}")
    if r.get("sub_step"):
        lines.append(f"resume after checkpoint: {r['sub_step']}")
    if r.get("next_checkpoint"):
        lines.append(f"next checkpoint: {r['next_checkpoint']}")
    if r.get("next_step"):
        lines.append(f"next step: {r['next_step']}")
    if r.get("incomplete"):
        lines.append(f"incomplete earlier steps: {', '.join(r['incomplete'])}")
    if r.get("skip_files"):
        lines.append("do not re-read (already loaded):")
        lines += [f"  - {f}" for f in r["skip_files"]]
    if r.get("startup_files"):
        lines.append(f"startup budget: {', '.join(r['startup_files'])}")
    for label, key in (("reason", "reasons"), ("warning", "warnings")):
        for code in r.get(key, []):
            entry = CATALOGUE.get(code)
            lines.append(f"{label}: {code} {entry.summary if entry else ''}".rstrip())
    if r.get("lease"):
        lease = r["lease"]
        lines.append(
            f"lease: {lease['state']} (session {lease['session']}, owner "
            f"{lease['owner']}, heartbeat {lease['heartbeat']})"
        )
    if r.get("orphan"):
        o = r["orphan"]
        where = f"in step {o['step']}" if o["step"] else "before any step"
        if o["sub_step"]:
            where += f" at {o['sub_step']}"
        lines.append(
            f"orphaned session {o['session']}: silent for {o['silent_seconds']} s "
            f"({o['reason']}), was {where}"
        )
        for f in o["possibly_incomplete"]:
            lines.append(f"  possibly incomplete: {f['path']} ({f['why']})")
    for c in r.get("commands", []):
        lines.append(f"run: {c}")
    return "\n".join(lines) + "\n"
