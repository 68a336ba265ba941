"""`session-resume import session-tracker|dotagent` and `session-resume sync-todos`:
argument parsing and output over :mod:`session_resume.services.importing`."""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from session_resume.cli.commands.common import (
    ArgumentParser,
    UsageError,
    add_session_args,
    config_for,
    diag_json,
    emit_json,
    now_from,
    print_diagnostics,
    root_of,
    session_of,
)
from session_resume.cli.commands.suggest import print_refusal
from session_resume.cli.parser import Command
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.workflow import DEFAULT_WORKFLOW
from session_resume.importers.common import ImportPlan, ImportRefused
from session_resume.services import importing
from session_resume.services.context import ENV_SESSION, PROJECT_NAME, SESSION_ID, WriteContext
from session_resume.services.errors import ServiceError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _import_arguments(p: argparse.ArgumentParser) -> None:
    common = ArgumentParser(add_help=False)
    g = common.add_argument_group("import")
    g.add_argument("--to", required=True, metavar="DIR", help="the session directory to create")
    g.add_argument(
        "--force",
        action="store_true",
        help="replace a session already in DIR (it is archived under .archive/ first)",
    )
    g.add_argument(
        "--project", metavar="NAME", help="the state's project (default: from the source / DIR)"
    )
    g.add_argument("--now", metavar="TIMESTAMP", help="the import time (default: clock)")
    g.add_argument("--root", metavar="DIR", help="repository root (default: from config/.git)")
    g.add_argument(
        "--dry-run", action="store_true", help="print what would be written; write nothing"
    )
    g.add_argument("--format", choices=["text", "json"], default="text")

    isub = p.add_subparsers(dest="import_format", metavar="FORMAT", required=True)
    t = isub.add_parser(
        "session-tracker",
        parents=[common],
        help="a session-tracker v2.1 .session directory → the generic workflow",
        description="Import state.json, todo.json, worklog.jsonl, SESSION_ACTIVE and the file "
        "inventory of a session-tracker v2.1 `.session` directory.",
    )
    t.add_argument("src", metavar="SRC_DIR", help="the .session directory")
    t.add_argument(
        "--project-root",
        metavar="DIR",
        help="the tracker's project root, which its relative file keys are relative to "
        "(default: the parent of SRC_DIR; paths under v2.1's hard-coded /home/z/my-project "
        "are rebased too)",
    )
    t.set_defaults(func=_guard(run_import))
    d = isub.add_parser(
        "dotagent",
        parents=[common],
        help="a dotagent memory/ directory (state/phase.json, execution.json) → dotagent",
        description="Import memory/state/phase.json and execution.json of dotagent's "
        "checkpoint skill; running tasks are recovered as the skill's scenarios 1 and 2 say "
        "and the reconciled execution.json is written to DIR/state/execution.json.",
    )
    d.add_argument("src", metavar="MEMORY_DIR", help="the memory/ directory (or its project)")
    d.add_argument(
        "--archive",
        metavar="NAME|latest",
        help="import an archived workflow from memory/state/.archive/ instead",
    )
    d.set_defaults(func=_guard(run_import))


def _sync_todos_arguments(p: argparse.ArgumentParser) -> None:
    add_session_args(p)
    p.add_argument("--file", metavar="PATH", help="read the list from PATH instead of stdin")
    p.add_argument("--now", metavar="TIMESTAMP", help="the time of the write (default: clock)")
    p.add_argument(
        "--session",
        metavar="ID",
        help=f"this session's id (default: ${ENV_SESSION})",
    )
    p.add_argument("--root", metavar="DIR", help="repository root (default: from config/.git)")
    p.add_argument("--dry-run", action="store_true", help="print the changes; write nothing")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(func=_guard(run_sync_todos))


COMMANDS = (
    Command(
        "import",
        order=100,
        help="import a session of another tool: session-tracker v2.1 or dotagent's checkpoint",
        description="Turn another tool's resume files into a session of the current version: "
        "the state, the "
        "worklog (an `imported` event first, then the source's history) and, when the source "
        "session was still running when it stopped, a lease whose heartbeat is its last "
        "activity (so `resume` reports it orphaned). The source is only read. An existing "
        "session in --to is refused unless --force, which archives it first. Mapping rules: "
        "docs/importers.md.",
        arguments=_import_arguments,
    ),
    Command(
        "sync-todos",
        order=100,
        help="merge a TodoWrite or Tasks list (stdin) into a generic session's steps",
        description="Read a TodoWrite list [{content, status, activeForm}] or a Tasks list "
        "[{id, subject, status}] and merge it into the steps of a generic session: new items "
        "become steps, statuses follow the list, nothing is deleted. Items are matched by id, "
        "then by any text they have had, their activeForm, or their position (a rename); the "
        "mapping is kept in the state's `x-todo-ids`. One atomic write, one `note` event.",
        arguments=_sync_todos_arguments,
    ),
)


def _guard(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Refusals: coded diagnostics on stderr (text) or {"ok": false, ...} on stdout (json)."""

    @functools.wraps(fn)
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except (ServiceError, ImportRefused) as exc:
            print_refusal(args, exc.diagnostics)
            return exc.exit_code

    return run


def _usage(message: str) -> Exception:
    return UsageError(message)


# --- import --------------------------------------------------------------------------------


def plan_import(args: argparse.Namespace, root: Path) -> ImportPlan:
    """Read the source and map it (no writing)."""
    if args.project is not None and not PROJECT_NAME.match(args.project):
        raise _usage(
            f"--project: {args.project!r} is not a project name (letters, digits, `.`, `_`, "
            "`-`, starting with a letter or digit)"
        )
    return importing.plan_import(
        args.import_format,
        Path(args.src),
        Path(args.to),
        now=now_from(args.now),
        root=root,
        project=args.project,
        project_root=getattr(args, "project_root", None),
        archive=getattr(args, "archive", None),
    )


def run_import(args: argparse.Namespace) -> int:
    cfg = config_for(args.root)
    root = root_of(args.root, cfg)
    now = now_from(args.now)
    plan = plan_import(args, root)
    to = Path(os.path.abspath(args.to))
    if args.dry_run:
        existing = importing.files_in_the_way(plan, to)
        return _emit_dry_run(args, plan, to, existing)
    res = importing.apply_import(
        plan, to, now=now, force=args.force, root=root, keep=cfg.archive_keep
    )
    possibly = [_with_disk_facts(p, root) for p in plan.possibly_incomplete]
    steps = plan.document["steps"]
    if args.format == "json":
        emit_json(
            {
                "ok": True,
                "source": plan.source,
                "to": res.to,
                "workflow": plan.workflow,
                "project": plan.document["project"],
                "session": res.session,
                "revision": res.revision,
                "steps": {k: s["status"] for k, s in steps.items()},
                "events": res.events,
                "lease": res.lease,
                "archived_to": res.archived_to,
                "files": res.files,
                "possibly_incomplete": possibly,
                "diagnostics": diag_json(plan.diagnostics),
            }
        )
        return 0
    out = sys.stdout
    counts: dict[str, int] = {}
    for s in steps.values():
        counts[s["status"]] = counts.get(s["status"], 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "no steps"
    if res.archived_to:
        out.write(f"archived the previous session to {res.archived_to}\n")
    out.write(
        f"imported {plan.source} session into {res.to} (workflow {plan.workflow}, project "
        f"{plan.document['project']}, session {res.session}): {len(steps)} step(s) ({summary}), "
        f"{res.events} worklog event(s)\n"
    )
    for rel in res.files:
        out.write(f"wrote {rel}\n")
    if res.lease is not None:
        out.write(
            f"the source session was still running when it stopped: lease written with its "
            f"last activity {res.lease['heartbeat']} as heartbeat (resume reports it orphaned "
            "once that is older than the stale threshold)\n"
        )
    if possibly:
        out.write("possibly incomplete (verify before using):\n")
        for p in possibly:
            state = f"exists, {p['size']} bytes" if p.get("exists") else "MISSING"
            step = f" (step {p['step']})" if p.get("step") else ""
            out.write(f"  ! [{str(p['status']).upper()}] {p['path']}{step}: {state}\n")
    print_diagnostics(plan.diagnostics, hints=False)
    out.write(f"next: session-resume resume {res.to}\n")
    return 0


def _with_disk_facts(p: dict[str, Any], root: Path) -> dict[str, Any]:
    path = Path(p["path"])
    full = path if path.is_absolute() else root / path
    try:
        size = os.stat(full).st_size
        return {**p, "exists": True, "size": size}
    except OSError:
        return {**p, "exists": False, "size": None}


def _emit_dry_run(args: argparse.Namespace, plan: ImportPlan, to: Path, existing: list[str]) -> int:
    refused = bool(existing) and not args.force
    if args.format == "json":
        emit_json(
            {
                "ok": not refused,
                "dry_run": True,
                "to": str(to),
                "existing": existing,
                "document": plan.document,
                "imported": plan.imported_detail,
                "events": [e.__dict__ for e in plan.events],
                "lease": plan.lease,
                "files": sorted(plan.files),
                "diagnostics": diag_json(plan.diagnostics),
            }
        )
    else:
        sys.stdout.write(json.dumps(plan.document, indent=2, ensure_ascii=False) + "\n")
        sys.stdout.write(
            f"(dry run: {len(plan.events) + 1} worklog event(s), "
            f"{'a lease' if plan.lease else 'no lease'}, files {sorted(plan.files) or 'none'}; "
            "nothing written)\n"
        )
        if refused:
            sys.stdout.write(f"{to} already holds a session: a real import needs --force\n")
        print_diagnostics(plan.diagnostics, hints=False)
    return 1 if refused else 0


# --- sync-todos ----------------------------------------------------------------------------


def run_sync_todos(args: argparse.Namespace) -> int:
    cfg, root, session_dir = session_of(args)
    session = args.session or os.environ.get(ENV_SESSION) or None
    if session is not None and not SESSION_ID.match(session):
        raise _usage(f"--session: {session!r} is not a session id")
    if args.file:
        items = importing.read_todo_list(None, args.file)
    else:
        data = sys.stdin.buffer.read(importing.MAX_TODO_INPUT + 1)
        items = importing.read_todo_list(data, "<stdin>")
    ctx = WriteContext(
        session_dir=session_dir,
        now=now_from(args.now),
        root=root,
        session=session,
        stale_seconds=cfg.stale_after_seconds,
        default_workflow=cfg.workflow or DEFAULT_WORKFLOW,
    )
    res = importing.sync_todos(ctx, items, dry_run=args.dry_run, config_workflow=cfg.workflow)
    return _emit_sync(args, res.changes, res.notes, res.written, written=res.written is not None)


def _emit_sync(
    args: argparse.Namespace,
    changes: list[dict[str, Any]],
    notes: list[Diagnostic],
    res: Any,
    *,
    written: bool,
) -> int:
    if args.format == "json":
        out: dict[str, Any] = {
            "ok": True,
            "written": written,
            "changes": changes,
            "diagnostics": diag_json(notes),
        }
        if res is not None:
            out.update(revision=res.revision, session=res.session, lease=res.lease_action)
        emit_json(out)
        return 0
    w = sys.stdout
    real = [c for c in changes if c.get("change") != "metadata"]
    if not changes:
        w.write("nothing to change: the steps already match the list\n")
    for c in real:
        if c["change"] == "added":
            w.write(f"added step {c['step']}: {c.get('text') or c.get('id')}\n")
        elif c["change"] == "status":
            w.write(f"step {c['step']}: {c['from']} -> {c['to']}\n")
        elif c["change"] == "renamed":
            w.write(f"step {c['step']} renamed: {c['from']!r} -> {c['to']!r} (by {c['by']})\n")
    if changes and not real:
        w.write("steps unchanged; the item ids / list order were remembered\n")
    if res is not None:
        w.write(f"revision {res.revision} (session {res.session})\n")
    elif changes:
        w.write("(dry run: nothing written)\n")
    print_diagnostics(notes, hints=False)
    return 0
