"""`session-resume migrate`: chained migration to 3.0, with --dry-run and --check."""

from __future__ import annotations

import argparse
import difflib
import json
import shlex
import sys

from ..diagnostics import Diagnostic
from ..formats.text import clean
from ..store import MigrateOutcome, migrate_session, serialize
from ..validate import discover
from .common import (
    config_for,
    diag_json,
    emit_json,
    now_from,
    print_diagnostics,
    root_of,
    session_dir_of,
)


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "migrate",
        help="migrate state files to schema 3.0 (1.0 → 2.0 → 3.0)",
        description="Migrate state files to 3.0, one version step at a time, each validated. "
        "By default the file is replaced atomically and the pre-migration file is kept as "
        ".bak. Values 3.0 has no place for are kept under `x-legacy` (SR151), never dropped.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH|DIR")
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
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--now", metavar="TIMESTAMP", help="the migration time (default: clock)")
    p.add_argument("--root", metavar="DIR", help="repository root (links may not leave it)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    cfg = config_for(args.root)
    root = root_of(args.root, cfg)
    now = now_from(args.now)
    files, problems = discover(args.paths)
    outcomes: list[MigrateOutcome] = []
    for f in files:
        outcomes.append(
            migrate_session(
                session_dir_of(f),
                now=now,
                write=not (args.dry_run or args.check),
                workflow=args.workflow or cfg.workflow,
                root=root,
            )
        )
    from ..diagnostics import Severity

    refused = (
        bool(problems)
        or any(o.status == "refused" for o in outcomes)
        or any(d.severity is Severity.ERROR for o in outcomes for d in o.notes)
    )
    if args.check:
        code = 1 if refused or any(o.status == "would_migrate" for o in outcomes) else 0
    else:
        code = 1 if refused else 0
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
                    for o in outcomes
                ],
                "problems": diag_json(problems),
            }
        )
    else:
        print_diagnostics(problems)
        for o in outcomes:
            _print_text(o, args.dry_run)
        _print_summary(outcomes, problems, args, failed=code != 0)
    return code


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
        if args.root:
            cmd += ["--root", args.root]
        fix = clean(shlex.join(cmd + pending))
        label = "fix" if args.check else "to write it"
        sys.stdout.write(f"{label}: run `{fix}` (the old files are kept as .bak)\n")


_STATUSES = ("current", "migrated", "would_migrate", "refused")


def _print_text(o: MigrateOutcome, dry_run: bool) -> None:
    out = sys.stdout
    label = {
        "current": "already current (3.0), nothing to do",
        "migrated": f"migrated {o.from_version} -> 3.0 ({len(o.patch)} change(s)); "
        "the previous file is kept as .bak",
        "would_migrate": f"would migrate {o.from_version} -> 3.0 ({len(o.patch)} change(s))",
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
