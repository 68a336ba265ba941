"""`session-resume report`: the crash report of a session directory."""

from __future__ import annotations

import argparse
import sys

from session_resume.cli.commands.common import (
    add_reading_args,
    add_session_args,
    emit_json,
    read_options,
)
from session_resume.cli.commands.suggest import complete_answer, naming_of
from session_resume.cli.parser import Command
from session_resume.reporters.text import clean_tree
from session_resume.services import resume as resume_service

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _arguments(p: argparse.ArgumentParser) -> None:
    add_session_args(p)
    add_reading_args(p)
    p.set_defaults(func=run, step=None)


COMMANDS = (
    Command(
        "report",
        order=50,
        help="crash report: orphan signature, where it stopped, what may be incomplete",
        description="Report on a session directory: whether a session crashed (its lease left "
        "behind without session_end, heartbeat stale or owner gone), the workflow, step and "
        "checkpoint it was in, the step list, files that may be incomplete, the last 10 "
        "worklog events, and the recommended action with the exact command. Reads only.",
        arguments=_arguments,
    ),
)


def build(args: argparse.Namespace) -> dict[str, Any]:
    session_dir, reading, options = read_options(args)
    return resume_service.report(session_dir, reading, **options)


def run(args: argparse.Namespace) -> int:
    rep = build(args)

    complete_answer(rep, naming_of(args))  # runnable as printed: --root, the session
    if args.format == "json":
        emit_json(rep)
        return 0
    rep = clean_tree(rep)  # values from files: escaped before they are formatted
    w = sys.stdout.write
    w(f"# Session report: {rep['project'] or rep['session_dir']}\n\n")
    if rep["crashed"]:
        o = rep["orphan"]
        w(
            f"CRASHED: session {o['session']} (owner {o['owner']}, host {o['host']}) left its "
            f"lease without session_end; silent for {o['silent_seconds']} s ({o['reason']}).\n"
        )
    else:
        lease = rep["lease"]
        held = (
            f"{lease['state']}: session {lease['session']}, owner {lease['owner']}, heartbeat "
            f"{lease['heartbeat']}"
            if lease
            else "none"
        )
        w(f"No crash signature in the lease ({held}).\n")
    if rep.get("state_problem"):
        sp = rep["state_problem"]
        src = "; steps and artifacts below are from the valid .bak" if sp["from_backup"] else ""
        w(
            f"STATE FILE {sp['status'].upper()} ({', '.join(sp['codes']) or 'no code'}): "
            f"do not work on this session before the recommended command{src}.\n"
        )
    w(f"state file: {rep['state']}    workflow: {rep['workflow']}\n")
    if rep["current_step"] is not None:
        cp = rep["sub_step"] or "none recorded yet"
        w(f"step: {rep['current_step']}    checkpoint: {cp}\n\n")
    else:
        w("step: none in progress\n\n")
    if rep["steps"]:
        w("steps:\n")
        for s in rep["steps"]:
            extra = f" at {s['sub_step']}" if s["sub_step"] else ""
            tries = f" (attempts {s['attempts']})" if s["attempts"] else ""
            w(f"  {s['key']:>4}  {s['status']:<11} {s['name']}{extra}{tries}\n")
    if rep["possibly_incomplete"]:
        w("\nfiles that may be incomplete:\n")
        for f in rep["possibly_incomplete"]:
            w(f"  - {f['path']} ({f['why']})\n")
    if rep["temp_files"]:
        w(f"\nleftover temp files (never read as state): {', '.join(rep['temp_files'])}\n")
    if rep["last_events"]:
        w("\nlast events:\n")
        for e in rep["last_events"]:
            where = " ".join(str(e[k]) for k in ("step", "sub_step") if e.get(k))
            w(f"  #{e.get('seq')} {e.get('ts')} {e.get('event')} {where}\n")
    r = rep["recommended"]
    w(f"\nrecommended: {r['action']}\n")
    for c in r["commands"]:
        w(f"  [{c['when']}] {c['run']}\n")
    return 0
