"""`session-resume migrate`: chained migration to the current version, with --dry-run and
--check."""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shlex
import sys

from session_resume.cli.commands.common import (
    PROJECT_HELP,
    UsageError,
    config_near,
    diag_json,
    emit_json,
    now_from,
    print_diagnostics,
    resolve_path,
    root_of,
    session_of_project,
)
from session_resume.cli.commands.suggest import Naming, complete_diagnostics, naming_of
from session_resume.cli.parser import Command
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.versions import CURRENT, KNOWN
from session_resume.reporters.text import clean
from session_resume.services import maintenance
from session_resume.storage.state_repair import MigrateOutcome
from session_resume.storage.store import serialize
from session_resume.terminal import progress


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH|DIR",
        help="state files or directories to search (a relative one is looked up under the "
        "repository root first, then the current directory); or --project NAME",
    )
    p.add_argument("--project", metavar="NAME", help=PROJECT_HELP)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--dry-run",
        action="store_true",
        help="print the JSON Patch and a readable diff; write nothing",
    )
    mode.add_argument(
        "--check",
        action="store_true",
        help="exit 1 if any file would change; write nothing (CI, pre-commit)",
    )
    p.add_argument(
        "--workflow",
        metavar="NAME|PATH",
        help="workflow to migrate under "
        "(default: the file's own, else apex when its step names fit, else generic)",
    )
    p.add_argument(
        "--salvage",
        action="store_true",
        help="resolve contradictions no rule settles (two steps in progress, a step completed "
        "before it started, ...) one documented way each, every displaced value kept under "
        "x-legacy (docs/spec.md §9.4); without it they are refused",
    )
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--now", metavar="TIMESTAMP", help="the migration time (default: clock)")
    p.add_argument("--root", metavar="DIR", help="repository root (links may not leave it)")
    p.set_defaults(func=run)


COMMANDS = (
    Command(
        "migrate",
        order=10,
        help=f"migrate state files to schema {CURRENT} ({' → '.join(KNOWN)})",
        description=f"Migrate state files to {CURRENT}, one version step at a time, each "
        "validated. By default the file is replaced atomically and the pre-migration file is "
        f"kept as .bak. Values {CURRENT} has no place for are kept under `x-legacy` (SR151), "
        "never dropped.",
        arguments=_arguments,
    ),
)


def run(args: argparse.Namespace) -> int:
    if args.project:
        cfg, root, session_dir = session_of_project(args)
        paths = [str(session_dir)]
    elif args.paths:
        paths = [resolve_path(p, args.root) for p in args.paths]
        cfg = config_near(paths[0], args.root)
        root = root_of(args.root, cfg)
    else:
        raise UsageError("give the state files or session directories (PATH|DIR), or --project")
    show, close = progress("migrate", enabled=args.format == "text")
    try:
        report = maintenance.migrate(
            paths,
            now=now_from(args.now),
            write=not (args.dry_run or args.check),
            workflow=args.workflow or cfg.workflow,
            root=root,
            salvage=args.salvage,
            progress=show,
        )
    finally:
        close()
    _complete(args, report)
    if args.check:
        code = 1 if report.refused or report.pending else 0
    else:
        code = 1 if report.refused else 0
    if args.format == "json":
        emit_json(
            {
                "files": [
                    {
                        "path": o.path,
                        "status": o.status,
                        "from_version": o.from_version,
                        "patch": o.patch,
                        "notes": diag_json(o.notes),
                    }
                    for o in report.outcomes
                ],
                "problems": diag_json(report.problems),
            }
        )
    else:
        print_diagnostics(report.problems)
        for o in report.outcomes:
            _print_text(o, args.dry_run)
        _print_summary(report.outcomes, report.problems, args, failed=code != 0)
    return code


def _complete(args: argparse.Namespace, report: maintenance.MigrateReport) -> None:
    """The commands the notes name, runnable as printed: each file's session directory (or
    this call's --project), this call's --root (and --salvage is in the messages already)."""
    report.problems[:] = complete_diagnostics(report.problems, naming_of(args))
    for o in report.outcomes:
        where = o.path if os.path.isdir(o.path) else os.path.dirname(o.path) or "."
        naming = Naming(dir=None if args.project else where, project=args.project, root=args.root)
        o.notes[:] = complete_diagnostics(o.notes, naming)


def _print_summary(
    outcomes: list[MigrateOutcome],
    problems: list[Diagnostic],
    args: argparse.Namespace,
    *,
    failed: bool,
) -> None:
    """The last line(s): counts, then the command that does what is left to do."""
    count = {s: sum(1 for o in outcomes if o.status == s) for s in _STATUSES}
    pending = [o.path for o in outcomes if o.status == "would_migrate"]
    parts = [
        f"{count['would_migrate']} to migrate" if args.check or args.dry_run else "",
        f"{count['migrated']} migrated" if not (args.check or args.dry_run) else "",
        f"{count['current']} current",
        f"{count['refused']} refused" if count["refused"] else "",
        f"{len(problems)} problem(s)" if problems else "",
    ]
    sys.stdout.write(
        f"{len(outcomes)} file(s) checked: {', '.join(p for p in parts if p)}"
        f" - {'failed' if failed else 'ok'}\n"
    )
    if pending:
        cmd = ["session-resume", "migrate"]
        if args.workflow:
            cmd += ["--workflow", args.workflow]
        if args.salvage:  # what made this run succeed: the real one needs it too
            cmd += ["--salvage"]
        if args.root:
            cmd += ["--root", args.root]
        fix = clean(shlex.join(cmd + (["--project", args.project] if args.project else pending)))
        label = "fix" if args.check else "to write it"
        sys.stdout.write(f"{label}: run `{fix}` (each original is kept beside its state)\n")


_STATUSES = ("current", "migrated", "would_migrate", "refused")


def _print_text(o: MigrateOutcome, dry_run: bool) -> None:
    out = sys.stdout
    label = {
        "current": f"already current ({CURRENT}), nothing to do",
        "migrated": f"migrated {o.from_version} -> {CURRENT} ({len(o.patch)} change(s)); "
        f"the original is kept for good as {o.kept_as} (and as .bak until a later write)",
        "would_migrate": f"would migrate {o.from_version} -> {CURRENT} ({len(o.patch)} change(s))",
        "refused": "not migrated",
    }[o.status]
    out.write(f"{o.path}: {label}\n")
    print_diagnostics(o.notes, hints=False)
    if dry_run and o.status == "would_migrate" and o.before is not None and o.after is not None:
        out.write("JSON Patch (RFC 6902):\n")
        out.write(json.dumps(o.patch, indent=2, ensure_ascii=False) + "\n")
        before = serialize(o.before).decode().splitlines(keepends=True)
        after = serialize(o.after).decode().splitlines(keepends=True)
        out.writelines(
            difflib.unified_diff(
                before, after, fromfile=o.path + " (now)", tofile=o.path + " (migrated)"
            )
        )
