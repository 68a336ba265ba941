"""`session-resume render handoff|skill`: write ``00-handoff.md`` of a session, or the skill
docs of a workflow, from the templates (:mod:`session_resume.services.rendering`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from session_resume.cli.commands.common import (
    UsageError,
    add_session_args,
    emit_json,
    now_from,
    reading_of,
    relpath,
    session_of,
)
from session_resume.cli.parser import Command
from session_resume.rendering.skill import skill_name_problem
from session_resume.services import rendering
from session_resume.services.context import load_workflow_or_fail


def _arguments(p: argparse.ArgumentParser) -> None:
    rsub = p.add_subparsers(dest="render_what", metavar="WHAT", required=True)

    h = rsub.add_parser(
        "handoff",
        help="write the session's 00-handoff.md from its state",
        description="Write DIR/00-handoff.md: the header, the six sections (Completed "
        "Steps, Key Decisions, Open Challenger Findings (must_fix only), Context for Next "
        "Step, Skill Context, Artifacts), at most 60 lines, every value from the state "
        "escaped. The state must be a readable current-version state. The file is replaced "
        "atomically.",
    )
    add_session_args(h)
    h.add_argument(
        "--out",
        metavar="PATH",
        help="where to write (default: DIR/00-handoff.md; `-` prints it instead)",
    )
    h.add_argument(
        "--now",
        metavar="TIMESTAMP",
        help="the time written to the `Updated:` line (default: the clock)",
    )
    h.add_argument("--workflow", metavar="NAME|PATH")
    h.add_argument("--root", metavar="DIR")
    h.add_argument("--format", choices=["text", "json"], default="text")
    h.set_defaults(func=run_handoff)

    s = rsub.add_parser(
        "skill",
        help="write SKILL.md and references/*.md of a workflow",
        description="Write the Agent Skills docs of a workflow into DIR: SKILL.md (frontmatter "
        "with name, description, license, compatibility and metadata only), "
        "references/state-file-schema.md, references/context-budgets.md, "
        "references/recovery-protocol.md and references/mcp-tools.md; with --digest also "
        "SKILL.digest.md (at most 60 lines). The skill's name is DIR's name unless --name "
        "is given (the Agent Skills format wants the two equal).",
    )
    s.add_argument("--workflow", required=True, metavar="NAME|PATH")
    s.add_argument("--out", required=True, metavar="DIR", help="the skill's directory")
    s.add_argument("--name", help="the skill's name (default: DIR's name)")
    s.add_argument("--digest", action="store_true", help="also write SKILL.digest.md")
    s.add_argument("--format", choices=["text", "json"], default="text")
    s.set_defaults(func=run_skill)


COMMANDS = (
    Command(
        "render",
        order=80,
        help="render 00-handoff.md of a session, or the SKILL.md docs of a workflow",
        description="Render a file from the templates: `render handoff DIR` writes the "
        "session's 00-handoff.md from its state; `render skill --workflow W --out DIR` writes "
        "SKILL.md and references/*.md (and with --digest SKILL.digest.md) for workflow W.",
        arguments=_arguments,
    ),
)


def run_handoff(args: argparse.Namespace) -> int:
    cfg, root, session_dir = session_of(args, workflow=args.workflow)
    out = None if args.out in (None, "-") else Path(args.out)
    res = rendering.render_handoff(
        session_dir,
        reading_of(args, cfg, root),
        now=now_from(args.now),
        out=out,
        write=args.out != "-",
    )
    if res.path is None:
        sys.stdout.write(res.text)
        return 0
    if args.format == "json":
        emit_json({"ok": True, "path": str(res.path), "lines": res.lines, "workflow": res.workflow})
    else:
        sys.stdout.write(f"wrote {relpath(res.path)} ({res.lines} lines)\n")
    return 0


def run_skill(args: argparse.Namespace) -> int:
    out = Path(args.out)
    name = args.name or out.resolve().name
    problem = skill_name_problem(name)
    if problem:
        raise UsageError(
            f"the skill name {name!r} is not allowed ({problem}); name the directory "
            "accordingly or pass --name"
        )
    wf = load_workflow_or_fail(args.workflow)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out: {out} exists and is not a directory")
    written = [
        str(p) for p in rendering.render_skill(out, args.workflow, name=name, digest=args.digest)
    ]
    if args.format == "json":
        emit_json({"ok": True, "name": name, "workflow": wf.id, "files": written})
    else:
        for w in written:
            sys.stdout.write(f"wrote {relpath(w)}\n")
    return 0
