"""`session-resume recover`: restore a corrupt or zero-byte state from .bak, or recreate it."""

from __future__ import annotations

import argparse
import sys

from session_resume.cli.commands.common import (
    add_session_args,
    diag_json,
    emit_json,
    now_from,
    print_diagnostics,
    reading_of,
    relpath,
    session_of,
)
from session_resume.cli.commands.suggest import complete_diagnostics, naming_of
from session_resume.cli.parser import Command
from session_resume.core.versions import CURRENT
from session_resume.services import maintenance


def _arguments(p: argparse.ArgumentParser) -> None:
    add_session_args(p, project=False)
    p.add_argument("--workflow", metavar="NAME|PATH", help="workflow for a fresh state")
    p.add_argument(
        "--project",
        metavar="NAME",
        help="without DIR: the session of project NAME (the workflow's session_dir pattern, "
        "default agent-output/NAME, under the repository root); the project name of a fresh "
        "state (default: DIR's name)",
    )
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--now", metavar="TIMESTAMP")
    p.add_argument("--root", metavar="DIR")
    p.set_defaults(func=run)


COMMANDS = (
    Command(
        "recover",
        order=20,
        help="restore a corrupt state from .bak, or recreate it fresh",
        description="If the state file is corrupt (zero bytes, bad JSON, ...) or missing: "
        "restore .bak when it parses and validates, else create a fresh state from the "
        "workflow's template with every step pending. The corrupt file is kept as "
        "00-session-state.json.corrupt-<stamp>; a good .bak is never overwritten. Every "
        "recovery is recorded in the worklog. A healthy state is left alone.",
        arguments=_arguments,
    ),
)


def run(args: argparse.Namespace) -> int:
    cfg, root, session_dir = session_of(args, workflow=args.workflow, project_with_dir=True)
    reading = reading_of(args, cfg, root)
    res = maintenance.recover(
        session_dir,
        reading,
        now=now_from(args.now),
        project=args.project,
        session_root=cfg.session_root,
    )

    naming = naming_of(args, relpath(session_dir) if not args.dir else None)
    for listed in (res.diagnostics, res.backup_problems, res.problems):
        listed[:] = complete_diagnostics(listed, naming)
    if args.format == "json":
        emit_json(
            {
                "action": res.action,
                "corrupt_kept_as": res.corrupt_kept_as,
                "migrated_from": res.migrated_from,
                "pre_migration_kept_as": res.pre_migration_kept_as,
                "found": diag_json(res.diagnostics),
                "backup_problems": diag_json(res.backup_problems),
                "problems": diag_json(res.problems),
            }
        )
        return 1 if res.problems else 0
    found = "; ".join(f"{d.code} {d.message}" for d in res.diagnostics)
    why = f" (the state file: {found})" if found and res.action != "none" else ""
    pre = res.pre_migration_kept_as
    pre_kept = f"; the {res.migrated_from} file is kept as {pre}" if pre else ""
    migrated = (
        f" (a {res.migrated_from} state, migrated to {CURRENT}{pre_kept})"
        if res.migrated_from
        else ""
    )
    unusable = "; ".join(f"{d.code} {d.message}" for d in res.backup_problems)
    bak_why = f" (the .bak is not usable: {unusable})" if unusable else ""
    msg = {
        "none": "the state file is readable; nothing to recover",
        "restored_backup": f"restored 00-session-state.json from .bak{migrated}{why}",
        "recreated": f"no usable .bak: created a fresh state, every step pending{bak_why}{why}",
    }[res.action]
    kept = f"; the corrupt file is kept as {res.corrupt_kept_as}" if res.corrupt_kept_as else ""
    failed = " — FAILED, see the errors below" if res.problems else ""
    # One line says what was done; the codes found are its reason, not new errors.
    sys.stdout.write(f"{args.dir or relpath(session_dir)}: {msg}{kept}{failed}\n")
    print_diagnostics(res.problems, sys.stderr)
    return 1 if res.problems else 0
