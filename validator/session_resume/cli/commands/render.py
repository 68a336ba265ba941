"""`session-resume render handoff|skill`: write ``00-handoff.md`` of a session, or the skill
docs of a workflow, from the templates. Every file is written atomically (a unique temp file
in the same directory, fsynced, then ``os.replace``)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from session_resume.cli.commands.common import (
    CommandError,
    config_for,
    emit_json,
    now_from,
    relpath,
    root_of,
    session_dir_of,
)
from session_resume.core.codes import diag
from session_resume.core.workflow import Workflow, WorkflowError, load_workflow, state_workflow_spec
from session_resume.storage.store import _fsync_dir, _retry, _write_temp


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "render",
        help="render 00-handoff.md of a session, or the SKILL.md docs of a workflow",
        description="Render a file from the templates: `render handoff DIR` writes the "
        "session's 00-handoff.md from its state; `render skill --workflow W --out DIR` writes "
        "SKILL.md and references/*.md (and with --digest SKILL.digest.md) for workflow W.",
    )
    rsub = p.add_subparsers(dest="render_what", metavar="WHAT")
    rsub.required = True

    h = rsub.add_parser(
        "handoff",
        help="write the session's 00-handoff.md from its state",
        description="Write DIR/00-handoff.md: the header, the six sections (Completed "
        "Steps, Key Decisions, Open Challenger Findings (must_fix only), Context for Next "
        "Step, Skill Context, Artifacts), at most 60 lines, every value from the state "
        "escaped. The state must be a readable v3.0 state. The file is replaced atomically.",
    )
    h.add_argument("dir", metavar="DIR", help="the session directory (or its state file)")
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
        "references/state-file-schema.md, references/context-budgets.md and "
        "references/recovery-protocol.md; with --digest also SKILL.digest.md (at most 60 "
        "lines). The skill's name is DIR's name unless --name is given (the Agent Skills "
        "format wants the two equal).",
    )
    s.add_argument("--workflow", required=True, metavar="NAME|PATH")
    s.add_argument("--out", required=True, metavar="DIR", help="the skill's directory")
    s.add_argument("--name", help="the skill's name (default: DIR's name)")
    s.add_argument("--digest", action="store_true", help="also write SKILL.digest.md")
    s.add_argument("--format", choices=["text", "json"], default="text")
    s.set_defaults(func=run_skill)


def write_text_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text``: temp file (O_EXCL) in the same directory, fsync,
    ``os.replace``, fsync the directory. A reader sees the old file or the new one."""
    data = text.encode("utf-8")
    directory = path.parent
    tmp = _write_temp(directory, data, prefix=f".{path.name}.")
    try:
        _retry(os.replace, tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)


def _workflow(spec: str) -> Workflow:
    try:
        return load_workflow(spec)
    except WorkflowError as exc:
        raise CommandError(exc.diagnostics, 2) from None


def run_handoff(args: argparse.Namespace) -> int:
    from session_resume.core.handoff_rules import HANDOFF
    from session_resume.rendering.handoff import render_handoff
    from session_resume.storage import store

    cfg = config_for(args.root)
    root = root_of(args.root, cfg)
    d = session_dir_of(args.dir)
    if not d.is_dir():
        raise CommandError([diag("SR100", "no such session directory", file=str(d))], 2)
    loaded = store.load(d, root=root)
    if loaded.status != "ok" or loaded.document is None:
        why = {
            "absent": [diag("SR101", f"no {store.STATE} in this directory", file=str(d))],
        }.get(loaded.status, loaded.diagnostics)
        hint = diag(
            "SR161",
            f"the state is {loaded.status}: no handoff was written (run `session-resume "
            f"resume {d}` to see what to do)",
            file=str(d / HANDOFF),
        )
        raise CommandError([*why, hint], 1)
    doc = loaded.document
    try:
        spec = args.workflow or state_workflow_spec(doc.get("workflow"), cfg.workflow)
    except WorkflowError as exc:
        raise CommandError(exc.diagnostics, 2) from None
    wf = _workflow(spec)
    text = render_handoff(doc, wf, now=now_from(args.now))
    if args.out == "-":
        sys.stdout.write(text)
        return 0
    out = Path(args.out) if args.out else d / HANDOFF
    if out.is_dir():
        out = out / HANDOFF
    write_text_atomic(out, text)
    lines = len(text.splitlines())
    if args.format == "json":
        emit_json({"ok": True, "path": str(out), "lines": lines, "workflow": wf.id})
    else:
        sys.stdout.write(f"wrote {relpath(out)} ({lines} lines)\n")
    return 0


def run_skill(args: argparse.Namespace) -> int:
    from session_resume.cli.main import UsageError
    from session_resume.rendering.skill import render_skill, skill_name_problem

    out = Path(args.out)
    name = args.name or out.resolve().name
    problem = skill_name_problem(name)
    if problem:
        raise UsageError(
            f"the skill name {name!r} is not allowed ({problem}); name the directory "
            "accordingly or pass --name"
        )
    wf = _workflow(args.workflow)
    files = render_skill(wf, name=name, digest=args.digest)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out: {out} exists and is not a directory")
    written = []
    for rel, text in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, text)
        written.append(str(path))
    if args.format == "json":
        emit_json({"ok": True, "name": name, "workflow": wf.id, "files": written})
    else:
        for w in written:
            sys.stdout.write(f"wrote {relpath(w)}\n")
    return 0
