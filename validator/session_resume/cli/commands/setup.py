"""`session-resume setup vscode`: the editor set-up of a repository in one command
(services.editor_config: a schema copy under .vscode/session-resume/ and the `json.schemas`
entry of .vscode/settings.json)."""

from __future__ import annotations

import argparse
import sys

from session_resume.cli.commands.common import print_diagnostics
from session_resume.cli.parser import Command
from session_resume.services.errors import ServiceError

EDITORS = ("vscode",)


def _arguments(p: argparse.ArgumentParser) -> None:
    editors = p.add_subparsers(dest="editor", metavar="EDITOR", required=True)
    v = editors.add_parser("vscode", help="VS Code's json.schemas setting and a schema copy")
    v.add_argument("--dry-run", action="store_true", help="print the changes, write nothing")
    v.add_argument("--root", metavar="DIR", help="repository root (default: from .git)")
    v.set_defaults(func=run)


COMMANDS = (
    Command(
        "setup",
        order=140,
        help="set an editor up for this repository's state files (VS Code)",
        description="`setup vscode` copies the state schema to "
        ".vscode/session-resume/ and merges into .vscode/settings.json the `json.schemas` "
        "entry that maps the state files of the session root to it, so VS Code validates, "
        "hovers and completes them. Every other setting is kept; a second run changes "
        "nothing; a settings.json with comments or trailing commas is not rewritten (SR184: "
        "the message gives the entry to add by hand).",
        arguments=_arguments,
    ),
)


def run(args: argparse.Namespace) -> int:
    # lazy: only this command needs the editor settings service
    from session_resume.services.editor_config import setup_vscode

    try:
        changes = setup_vscode(args.root, dry_run=args.dry_run)
    except ServiceError as exc:
        print_diagnostics(exc.diagnostics, sys.stderr)
        return exc.exit_code
    for c in changes:
        verb = c.action if not args.dry_run or c.action == "unchanged" else f"would be {c.action}"
        sys.stdout.write(f"{c.shown}: {verb}\n")
    settings = changes[-1]
    if settings.content is not None and (args.dry_run or settings.action != "unchanged"):
        sys.stdout.write(f"{settings.shown} now reads:\n{settings.content}")
    if not args.dry_run:
        sys.stdout.write(
            "VS Code now validates and hovers the state files (reload the window if it was "
            "open); run `session-resume setup vscode` again after upgrading session-resume.\n"
        )
    return 0
