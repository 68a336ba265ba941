"""`session-resume resume`: what to do next, as text or JSON (schema/decision/1.json)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from session_resume.cli.commands.common import (
    add_session_args,
    emit_json,
    now_from,
    session_of,
)
from session_resume.core.codes import CATALOGUE
from session_resume.reporters.text import clean_tree
from session_resume.services import resume as resume_service

TYPE_CHECKING = False  # typing is imported for the type checker only (cold start)
if TYPE_CHECKING:
    from typing import Any


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
    add_session_args(p)
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


def read_options(args: argparse.Namespace) -> tuple[Path, dict[str, Any]]:
    """The session directory `resume` and `report` read, and the options they pass to their
    service, from the command line and the project configuration."""
    cfg, root, session_dir = session_of(args, workflow=args.workflow)
    return session_dir, {
        "now": now_from(args.now),
        "root": root,
        "workflow": args.workflow,
        "default_workflow": cfg.workflow,
        "session": args.session,
        "stale_seconds": args.stale_after or cfg.stale_after_seconds,
    }


def decision_for(args: argparse.Namespace) -> dict[str, Any]:
    session_dir, options = read_options(args)
    return resume_service.resume(session_dir, step=args.step, **options)


def run(args: argparse.Namespace) -> int:
    result = decision_for(args)
    # lazy: the CLI imports only what the command it runs needs
    from session_resume.cli.commands.suggest import complete_answer, complete_text, naming_of

    complete_answer(result, naming_of(args))  # runnable as printed: --root, the session
    if args.format == "json":
        emit_json(result)
    else:
        sys.stdout.write(complete_text(render_text(clean_tree(result)), naming_of(args)))
    return 0


def briefing_text(b: dict[str, Any] | None) -> list[str]:
    """The briefing for a person: the same content as the JSON's ``briefing``."""
    if not b:
        return []
    lines = ["briefing (what the state holds; do not open the raw state file):"]
    if b.get("optional"):
        lines.append("  this step is optional: run it, or skip it (see the commands below)")
    decisions = b.get("decisions") or {}
    lines.append(
        "  decisions: "
        + (", ".join(f"{k}={json.dumps(v)}" for k, v in decisions.items()) or "none")
    )
    findings = b.get("open_findings") or []
    lines.append(f"  open findings: {len(findings)}")
    lines += [f"    - {f}" for f in findings]
    for e in b.get("decision_log") or []:
        lines.append(f"  decision {e.get('id')}: {e.get('title')} → {e.get('choice')}")
    if b.get("review_audit") is not None:
        lines.append(f"  review audit: {json.dumps(b['review_audit'], sort_keys=True)}")
    elif b.get("review_audited"):
        lines.append("  review audit: none yet (record it with `session-resume review-audit STEP`)")
    for a in b.get("artifacts") or []:
        lines.append(f"  artifact: {a['path']} ({'on disk' if a['exists'] else 'MISSING'})")
    for label, key in (
        ("last checkpoint", "last_checkpoint"),
        ("next checkpoint", "next_checkpoint"),
    ):
        cp = b.get(key)
        if cp:
            after = f": after {cp['after']}" if cp.get("after") else ""
            lines.append(f"  {label}: {cp['id']}{after}")
    for e in b.get("last_events") or []:
        where = " ".join(str(e[k]) for k in ("step", "sub_step") if e.get(k))
        lines.append(f"  event: {e.get('ts')} {e.get('event')} {where}".rstrip())
    lines.append("read now:" if b.get("load") else "read now: nothing beyond this briefing")
    lines += [f"  - {f['path']} ({f['why']})" for f in b.get("load") or []]
    if b.get("skip"):
        lines.append("do not read:")
        lines += [f"  - {f['path']} ({f['reason']})" for f in b["skip"]]
    return lines


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
    if r.get("startup_files"):
        lines.append(f"startup budget: {', '.join(r['startup_files'])}")
    lines += briefing_text(r.get("briefing"))
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
