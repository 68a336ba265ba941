"""`session-resume archive`: move a session's files under .archive/ and prune old archives."""

from __future__ import annotations

import argparse
import sys

from session_resume.cli.commands.common import (
    add_session_args,
    emit_json,
    now_from,
    session_of,
)
from session_resume.cli.parser import Command
from session_resume.services import maintenance


def _arguments(p: argparse.ArgumentParser) -> None:
    add_session_args(p)
    p.add_argument("--keep", type=int, help="archives to keep (default 5 or archive_keep)")
    p.add_argument("--prune-only", action="store_true", help="only apply the retention")
    p.add_argument("--now", metavar="TIMESTAMP")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--root", metavar="DIR")
    p.set_defaults(func=run)


COMMANDS = (
    Command(
        "archive",
        order=70,
        help="archive the session's files and keep the newest N archives",
        description="Move the session's protocol files (state, .bak, handoff, worklog, lease, "
        "kept corrupt files) into .archive/<UTC stamp>_<session>/ inside the session "
        "directory, then delete archives beyond --keep (the only thing ever deleted). "
        "Artifacts are not touched.",
        arguments=_arguments,
    ),
)


def run(args: argparse.Namespace) -> int:
    cfg, root, session_dir = session_of(args)
    keep = args.keep if args.keep is not None else cfg.archive_keep
    res = maintenance.archive(
        session_dir,
        now=now_from(args.now),
        keep=keep,
        prune_only=args.prune_only,
        root=root,
    )
    if args.format == "json":
        emit_json({"archived_to": res.archived_to, "moved": res.moved, "pruned": res.pruned})
        return 0
    if res.archived_to:
        sys.stdout.write(f"archived {len(res.moved)} file(s) to {res.archived_to}\n")
    else:
        sys.stdout.write("nothing to archive\n")
    for p in res.pruned:
        sys.stdout.write(f"pruned old archive {p}\n")
    return 0
