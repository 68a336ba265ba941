"""`session-resume report`: the crash report of a session directory."""

from __future__ import annotations

import argparse
import json
import sys

from session_resume.cli.commands.common import (
    add_reading_args,
    add_session_args,
    emit_json,
    read_options,
)
from session_resume.cli.commands.suggest import complete_decision
from session_resume.cli.parser import Command
from session_resume.rendering.escape import clean_tree, prose_tree
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
    # the recommended commands are resume's for the same call, completed the same way
    complete_decision(rep, rep["recommended"], args)
    if args.format == "json":
        emit_json(rep)
        return 0
    # values from files: escaped before they are formatted, and none may open a code span
    recommended = clean_tree(rep["recommended"])
    rep = {**prose_tree({**rep, "recommended": None}), "recommended": recommended}
    w = sys.stdout.write
    w(f"# Session report: {rep['project'] or rep['session_dir']}\n\n")
    if rep["crashed"]:
        o = rep["orphan"]
        w(
            f"CRASHED: session {o['session'] or 'unknown'} (owner {o['owner'] or 'unknown'}, "
            f"host {o['host'] or 'unknown'}) left its "
            f"lease without session_end; silent for {o['silent_seconds']} s ({o['reason']}).\n"
        )
    else:
        lease = rep["lease"]
        held = (
            f"{lease['state']}: session {lease['session'] or 'unknown'}, owner "
            f"{lease['owner'] or 'unknown'}, heartbeat {lease['heartbeat'] or 'unknown'}"
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
    w(_step_line(rep) + "\n\n")
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
            where = [str(e[k]) for k in ("step", "sub_step") if e.get(k)]
            said = " ".join([*where, _detail(e.get("event"), e.get("detail"))]).strip()
            w(f"  #{e.get('seq')} {e.get('ts')} {e.get('event')} {said}".rstrip() + "\n")
    r = rep["recommended"]
    w(f"\nrecommended: {r['action']}\n")
    for c in r["commands"]:
        w(f"  [{c['when']}] {c['run']}\n")
    for c in r["alternatives"]:
        w(f"  instead, [{c['when']}] {c['run']}\n")
    return 0


def _step_line(rep: dict[str, Any]) -> str:
    """The header's step: in progress with its last checkpoint, not started, or done, as the
    step list below says."""
    key = rep["current_step"]
    if key is None:
        return "step: none in progress"
    st = next((s for s in rep["steps"] if s["key"] == key), None)
    status = st["status"] if st else None
    name = f" ({st['name']})" if st and st["name"] else ""
    if status == "pending":
        return f"step: {key}{name}    not started (pending)"
    if status in ("complete", "skipped"):
        return f"step: {key}{name}    {status}"
    return f"step: {key}{name}    checkpoint: {rep['sub_step'] or 'none recorded yet'}"


# what each event's detail says, by the keys the writers record (core/changes.py,
# services/leases.py); an event of another writer shows its detail's scalar values
_DETAIL_KEYS = {
    "decision": ("key", "value", "id", "title", "choice"),
    "finding_add": ("title",),
    "finding_resolve": ("title",),
    "review_audit": ("complexity", "passes_planned", "passes_executed"),
    "step_skip": ("reason",),
    "step_start": ("completed", "attempts"),
    "session_start": ("adopted", "note"),
    "session_end": ("reason",),
}


def _detail(event: object, detail: object) -> str:
    """A worklog event's detail in a few words: ``key=value`` pairs, long values cut (the
    worklog holds it whole; ``--format json`` shows it)."""
    if not isinstance(detail, dict):
        return ""
    keys = _DETAIL_KEYS.get(event) if isinstance(event, str) else None
    keys = keys or tuple(detail)[:4]  # another writer's event: its first few values
    parts = []
    for k in keys:
        v = detail.get(k)
        if v is None or isinstance(v, (dict, list)):
            continue
        if isinstance(v, str) and len(v) > 60:
            v = v[:57] + "..."
        plain = isinstance(v, str) and v and not any(c.isspace() or c == '"' for c in v)
        parts.append(f"{k}={v if plain else json.dumps(v, ensure_ascii=False)}")
    return " ".join(parts)
