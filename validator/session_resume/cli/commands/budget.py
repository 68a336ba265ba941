"""`session-resume budget STEP`: the startup budget of a step and the files not to re-read."""

from __future__ import annotations

import argparse
import sys

from session_resume.cli.commands.common import (
    PROJECT_HELP,
    config_for,
    emit_json,
    reading_of,
    root_of,
    session_of,
)
from session_resume.cli.parser import Command
from session_resume.reporters.text import clean_tree
from session_resume.services import budget as budget_service


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("step", metavar="STEP")
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--session-dir",
        metavar="DIR",
        help="the session directory (a relative one is looked up under the repository root "
        "first, then the current directory)",
    )
    where.add_argument("--project", metavar="NAME", help=PROJECT_HELP)
    p.add_argument("--workflow", metavar="NAME|PATH")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--root", metavar="DIR")
    p.set_defaults(func=run)


COMMANDS = (
    Command(
        "budget",
        order=60,
        help="what a step may load at startup, and what its earlier session recorded loading",
        description="Print the step's context budget from the workflow (the files it may load "
        "at startup and their maximum count), the files the session that worked on the step "
        "recorded as loaded (context_files_used: a new chat has loaded none of them; `resume` "
        "says what to read), and SR415 when the recorded context exceeds the budget.",
        arguments=_arguments,
    ),
)


def run(args: argparse.Namespace) -> int:
    if args.session_dir or args.project:
        cfg, root, session_dir = session_of(args, dir_attr="session_dir", workflow=args.workflow)
    else:
        cfg = config_for(args.root)
        root, session_dir = root_of(args.root, cfg), None
    out = budget_service.budget(args.step, reading_of(args, cfg, root), session_dir=session_dir)
    used = out["do_not_reread"]
    warnings = out["warnings"]
    if args.format == "json":
        emit_json(out)
        return 0
    out = clean_tree(out)  # values from files: escaped before they are formatted
    used = out["do_not_reread"]
    w = sys.stdout.write
    w(f"step {out['step']} ({out['step_name']}), workflow {out['workflow']}\n")
    if out["max_startup_files"] is not None:
        w(f"startup budget: at most {out['max_startup_files']} file(s):\n")
        for f in out["startup_files"]:
            w(f"  - {f}\n")
    else:
        w("no startup budget defined for this step\n")
    if used:
        w(
            "recorded as loaded by the session that worked on this step (a new chat has "
            "loaded none of them: read what `resume` lists under `read now`):\n"
        )
        for f in used:
            w(f"  - {f}\n")
    for code in warnings:
        w(
            f"warning: {code} step recorded {len(used)} context files; budget "
            f"{out['max_startup_files']}\n"
        )
    return 0
