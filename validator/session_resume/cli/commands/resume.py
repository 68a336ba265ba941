"""`session-resume resume`: what to do next, as text or JSON (schema/decision/2.json)."""

from __future__ import annotations

import argparse
import sys

from session_resume.cli.commands.common import (
    add_reading_args,
    add_session_args,
    emit_json,
    read_options,
)
from session_resume.cli.parser import Command
from session_resume.reporters.text import clean_tree
from session_resume.services import resume as resume_service

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _arguments(p: argparse.ArgumentParser) -> None:
    add_session_args(p)
    p.add_argument("--step", metavar="KEY", help="the step asking (default: orchestrator)")
    add_reading_args(p)
    p.set_defaults(func=run)


COMMANDS = (
    Command(
        "resume",
        order=40,
        help="decide how to resume: the action, step, checkpoint and files to skip",
        description="Read the session directory and answer what to do now (the action, with "
        "the plan and the commands in order): fresh_start, needs_recovery, migrate_first, "
        "refuse_newer_version, invalid_state, start, restart_step, resume_from_checkpoint, "
        "continue_step, offer_rerun, next_step, prerequisites_incomplete, session_active, "
        "workflow_complete, unknown_step. Without --step it answers for the orchestrator "
        "(the step to run next). Reads only; writes nothing.",
        arguments=_arguments,
    ),
)


def decision_for(args: argparse.Namespace) -> dict[str, Any]:
    session_dir, reading, options = read_options(args)
    return resume_service.resume(session_dir, reading, step=args.step, **options)


def run(args: argparse.Namespace) -> int:
    result = decision_for(args)
    # lazy: the CLI imports only what the command it runs needs
    from session_resume.cli.commands.suggest import complete_decision, complete_text

    naming = complete_decision(result, result, args)
    if args.format == "json":
        emit_json(result)
    else:
        sys.stdout.write(complete_text(render_text(clean_tree(result)), naming))
    return 0


def render_text(r: dict[str, Any]) -> str:
    """The answer as text: :func:`session_resume.services.resume.plan_text`."""
    return resume_service.plan_text(r)
