"""`session-resume budget STEP`: the startup budget of a step and the files not to re-read."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from session_resume.cli.commands.common import CommandError, config_for, emit_json, root_of
from session_resume.core.codes import diag
from session_resume.core.workflow import WorkflowError, load_workflow, state_workflow_spec
from session_resume.storage.store import load


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "budget",
        help="what a step may load at startup, and what it must not re-read",
        description="Print the step's context budget from the workflow (the files it may load "
        "at startup and their maximum count), the files it already loaded (context_files_used, "
        "not to be re-read), and SR415 when the recorded context exceeds the budget.",
    )
    p.add_argument("step", metavar="STEP")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--session-dir", metavar="DIR")
    where.add_argument("--project", metavar="NAME")
    p.add_argument("--workflow", metavar="NAME|PATH")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--root", metavar="DIR")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    cfg = config_for(args.root)
    root = root_of(args.root, cfg)
    doc: dict[str, Any] = {}
    d: Path | None = None
    if args.session_dir or args.project:
        d = Path(args.session_dir) if args.session_dir else None
    spec = args.workflow or cfg.workflow or "apex"
    if d is None and args.project:
        wf0 = load_workflow(spec)
        d = root / wf0.session_dir.replace("{project}", args.project)
    if d is not None:
        loaded = load(d, root=root)
        if loaded.status == "ok" and loaded.document:
            doc = loaded.document
            try:
                spec = args.workflow or state_workflow_spec(doc.get("workflow"), cfg.workflow)
            except WorkflowError as exc:
                raise CommandError(exc.diagnostics, 2) from None
    try:
        wf = load_workflow(spec)
    except WorkflowError as exc:
        raise CommandError(exc.diagnostics, 2) from None
    sdef = wf.step(args.step)
    if sdef is None and not wf.free_steps:
        raise CommandError(
            [
                diag(
                    "SR711",
                    f"step {args.step!r} is not a step of workflow "
                    f"{wf.id!r} (steps: {', '.join(wf.step_keys)})",
                )
            ]
        )
    step = (doc.get("steps") or {}).get(args.step) or {}
    used = list(step.get("context_files_used") or [])
    budget = sdef.budget if sdef else None
    warnings = []
    if budget and len(used) > budget.max_startup_files:
        warnings.append("SR415")
    out = {
        "step": args.step,
        "step_name": sdef.name if sdef else step.get("name"),
        "workflow": wf.id,
        "max_startup_files": budget.max_startup_files if budget else None,
        "startup_files": list(budget.startup_files) if budget else [],
        "do_not_reread": used,
        "warnings": warnings,
        "notes": budget.notes if budget else "",
    }
    if args.format == "json":
        emit_json(out)
        return 0
    w = sys.stdout.write
    w(f"step {out['step']} ({out['step_name']}), workflow {wf.id}\n")
    if budget:
        w(f"startup budget: at most {budget.max_startup_files} file(s):\n")
        for f in budget.startup_files:
            w(f"  - {f}\n")
    else:
        w("no startup budget defined for this step\n")
    if used:
        w("already loaded, do not re-read:\n")
        for f in used:
            w(f"  - {f}\n")
    for code in warnings:
        w(
            f"warning: {code} step recorded {len(used)} context files; budget "
            f"{out['max_startup_files']}\n"
        )
    return 0
