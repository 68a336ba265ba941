"""The words of a resume answer's codes (docs/spec.md §10.3), pure: each entry of ``reasons``
and ``warnings`` is ``{code, message, hint}``, the message written for this finding (the step,
the file, the session, the dates), the hint what to do about it. The catalogue's summary and
fix are the fallback for a code without its own words here."""

from __future__ import annotations

import shlex

from session_resume.core.codes import CATALOGUE
from session_resume.core.lease import stale_at

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


def _step(f: Mapping[str, Any]) -> str:
    name = f.get("step_name")
    return f"step {f.get('step')}" + (f" ({name})" if name else "")


def _holder(f: Mapping[str, Any]) -> str:
    lease = f.get("lease") or {}
    age = lease.get("age_seconds")
    return (
        f"session {lease.get('session') or 'unknown'} (owner {lease.get('owner') or '?'}"
        + (f", heartbeat {age} s ago" if age is not None else "")
        + ")"
    )


def _goes_stale(f: Mapping[str, Any]) -> str:
    """When the live lease turns stale if its session stops, and the threshold."""
    stale = f.get("stale_seconds")
    when = stale_at(f.get("lease"), stale) if isinstance(stale, int) else None
    at = f" at {when}" if when else ""
    return (
        f"; its lease goes stale{at} unless it writes or pings again (the stale threshold: "
        f"{stale} s after the last heartbeat, `stale_after_seconds` in the config)"
    )


def _sr511_hint(holder: Any, front_end_session: bool = False) -> str:
    if front_end_session:  # the holder is never the front end's own session
        return (
            f"session {holder} is not yours: write nothing; ask again when the lease goes "
            "stale (its `when` names the time), or take over only with the user's "
            "consent (the commands below)"
        )
    return (
        f"session {holder} is yours only if its id appears earlier in this conversation or "
        f"in your notes (a `session start` you ran printed it): then ask again with "
        f"`--session {shlex.quote(str(holder))}`. If you cannot find it there, it is not "
        "yours: write nothing; "
        "ask again when the lease goes stale, or take over only with the user's consent (the "
        "commands below)"
    )


def _redo(f: Mapping[str, Any]) -> str:
    """The checkpoints whose work wrote the missing file, as SR714's hint names them."""
    done = f.get("done_checkpoints") or []
    if not done:
        return "the checkpoints up to that one"
    return ("checkpoint " if len(done) == 1 else "checkpoints ") + ", ".join(done)


def _paths(f: Mapping[str, Any], key: str) -> str:
    return ", ".join(f.get(key) or []) or "?"


def _sr703(f: Mapping[str, Any]) -> str:
    """Which files to read and what to redo after the recorded checkpoint, in plain words."""
    # a partial file says there "(partial: continue it)"
    read = (
        "read only what `read now` lists"
        if f.get("read_now")
        else "read no file beyond this answer"
    )
    redo = "redo only the missing file SR714 names" if f.get("missing") else "redo nothing"
    nxt = f.get("next_checkpoint")
    return f"{read}; {redo}; next: " + (f"checkpoint {nxt}" if nxt else "finish the step")


def _sr708(f: Mapping[str, Any]) -> tuple[str, str]:
    rel = f.get("session_rel")
    where = shlex.quote(str(rel)) if rel else "the session directory"  # a name from disk
    since = f.get("updated")
    when = (
        f"this session resumed it at {f['resumed']}"
        if f.get("resumed")
        else f"now ({f.get('now')})"
    )
    n = f.get("commits")
    moved = (
        f"git shows no other commit since then outside {where}"
        if n == 0
        else f"git shows {n} commit{'s' if n != 1 else ''} since then outside {where}"
        if isinstance(n, int)
        else "no git history here tells whether the project moved on"
    )
    pathspec = shlex.quote(f":(exclude){rel}")
    log = f" (`git log --oneline --since={since} -- . {pathspec}` lists them)" if n and rel else ""
    away = (
        "continue, and run the command below whose condition says so: a finding the user "
        "sees at the next gate"
        if f.get("stale_finding")
        else "write nothing until the user answers"
    )
    return (
        f"the state was last worked on {since}, {f.get('age_days')} days before {when}; {moved}",
        f"ask the user whether the work is still wanted and what changed{log}; if the user "
        f"cannot be asked now, {away}",
    )


_WORDS: dict[str, Callable[[Mapping[str, Any]], tuple[str, str]]] = {
    "SR700": lambda f: (
        "there is no state file in the session directory (or no session directory yet): "
        "nothing has been recorded yet",
        "run the commands in order: `init` creates the state and takes the lease of the session "
        "the commands name, then the first step starts"
        if f.get("step")
        else "create the state first (the command below), then ask `resume` again",
    ),
    "SR701": lambda f: (
        f"{_step(f)} has not started",
        "run the commands in order: start the step, then do each checkpoint's work before "
        "its write",
    ),
    "SR702": lambda f: (
        f"{_step(f)} is in progress with no checkpoint recorded, and no live session of "
        "yours started it: its earlier attempt stopped before its first checkpoint",
        "start it again from its beginning (the first command), then follow the plan",
    ),
    "SR703": lambda f: (
        f"{_step(f)} is in progress after checkpoint {f.get('sub_step')}",
        _sr703(f),
    ),
    "SR704": lambda f: (
        f"{_step(f)} is complete"
        + (f"; its {f['gate_open']} is still open" if f.get("gate_open") else ""),
        (
            f"ask the user's approval of {f['gate_open']} once (show the deliverables and open "
            "findings); record its empty decisions only with the user's choice, then the "
            "approval (`approve`, in the commands); no other work on this step; "
            if f.get("gate_open")
            else "nothing to do for it; "
        )
        + "run it again only if the user asks (the command needs their consent)",
    ),
    "SR705": lambda f: (
        f"{_step(f)} was skipped",
        f"go on to step {f.get('next_step')}" if f.get("next_step") else "no step is left",
    ),
    "SR706": lambda f: (
        f"earlier steps are neither complete nor skipped: {_paths(f, 'incomplete')}",
        "finish them first (ask `resume` without --step), or, only with the user's consent, "
        f"start this step anyway: `session-resume start {f.get('step')} --force`",
    ),
    "SR707": lambda f: (
        "every step of the workflow is complete or skipped",
        "nothing is left to run",
    ),
    "SR708": _sr708,
    "SR709": lambda f: (
        f"step {_paths(f, 'running')} is in progress, not {_step(f)}",
        "finish the step in progress first, or ask `resume` without --step",
    ),
    "SR711": lambda f: (
        f"step {f.get('step')} is not a step of workflow {f.get('workflow')}",
        f"use one of its steps: {_paths(f, 'step_keys')}",
    ),
    "SR712": lambda f: (
        f"{_step(f)} was started at a gate by `transition` and recorded no work: this is its "
        "first real start, not a restart",
        "run the commands in order; the start costs no attempt",
    ),
    "SR713": lambda f: (
        f"{_step(f)} was just started by session {f.get('session')}, the live session "
        "asking: it recorded no checkpoint yet",
        "do not start it again: do the first checkpoint's work, then run its write",
    ),
    "SR714": lambda f: (
        f"{_step(f)} is past checkpoint {f.get('sub_step')}, but {_paths(f, 'missing')} "
        "(recorded at a checkpoint, or a deliverable the workflow says its work wrote by "
        "then) is not on disk",
        f"resume after checkpoint {f.get('sub_step')} as planned, but first write the missing "
        "file again (restore it from version control if it was committed, else redo the work "
        f"of {_redo(f)} that wrote it, keeping every file on disk as it is); record no "
        "checkpoint before it exists",
    ),
    "SR720": lambda f: (
        f"{_step(f)} was paused "
        + (
            f"at checkpoint {f.get('sub_step')}"
            if f.get("sub_step")
            else "before its first checkpoint"
        )
        + " by the last session (`session end --reason paused`), not crashed",
        "continue it from there: read what this answer lists, then run the commands in order",
    ),
    "SR718": lambda f: (
        f"the worklog records checkpoint {f.get('worklog_checkpoint')} of {_step(f)}, later "
        f"than the state's {f.get('sub_step') or 'start of the step'} (an older `.bak` was "
        "restored, or the state lost a write): its work may be on disk",
        f"check whether the work of {f.get('worklog_checkpoint')} is done: the files it "
        "wrote that are on disk are listed to read now (none listed: it left none). If it "
        f"is done, run the `checkpoint {f.get('step')} {f.get('worklog_checkpoint')}` line "
        "of the commands now (with `--artifact` per file it wrote that the line does not "
        "name); if not, or if that work leaves nothing on disk, redo it first, then run that "
        "line",
    ),
    "SR715": lambda f: (
        f"deliverables of completed earlier steps (recorded, or named by the workflow) are "
        "not on disk: "
        f"{_paths(f, 'prereq_missing')}",
        "restore them (version control) before relying on them; if they cannot be restored, "
        "ask the user before re-running the step that wrote them (`start STEP --force`)",
    ),
    "SR716": lambda f: (
        f"step {f['short']['step']} was completed "
        + (
            f"at checkpoint {f['short']['sub_step']}"
            if f["short"]["sub_step"]
            else "with no checkpoint recorded"
        )
        + f": {', '.join(f['short']['unrecorded'])} never recorded",
        "tell the user at the gate before the next step starts (that work may be missing); "
        f"re-run step {f['short']['step']} only with the user's consent "
        f"(`start {f['short']['step']} --force`)",
    ),
    "SR511": lambda f: (
        f"{_holder(f)} holds a live lease on this session directory{_goes_stale(f)}",
        _sr511_hint((f.get("lease") or {}).get("session"), bool(f.get("front_end_session"))),
    ),
    "SR512": lambda f: (
        f"{_holder(f)} left its lease without ending: it stopped "
        + (
            f"in step {f.get('orphan_step')}"
            if f.get("orphan_step")
            else "with no step in progress that the state shows"
        ),
        (
            "it is the session you named: your first write renews its lease (no takeover)"
            if f.get("own")
            else "the first write takes it over (logged)"
        )
        + "; check the files it may have left incomplete first (`possibly incomplete`; none "
        "listed: nothing to check)",
    ),
    "SR513": lambda f: (
        "a lease file remains although its session ended",
        "nothing to do: the next session start replaces it",
    ),
    "SR510": lambda f: (
        "00-session.active is not a valid lease",
        "the next session start replaces it",
    ),
    "SR170": lambda f: (
        f"an interrupted write left a temp file: {_paths(f, 'temp_files')}",
        "it is never read as state; delete it once no writer is running",
    ),
    "SR130": lambda f: (
        "the state file is corrupt or missing, and its .bak is a valid state",
        "run `recover` (the command below): it restores .bak and keeps the corrupt file; "
        "then ask `resume` again",
    ),
    "SR140": lambda f: (
        "the state file has an older schema version",
        "run `migrate` (the command below; the original is kept), then ask `resume` again",
    ),
    "SR141": lambda f: (
        "the state file's schema version is newer than this tool knows",
        "write nothing; upgrade session-resume",
    ),
    "SR306": lambda f: (
        f"more than one step is in progress: {_paths(f, 'running')}",
        "a session runs one step at a time: complete or skip all but one",
    ),
}


def explain(code: str, facts: Mapping[str, Any]) -> dict[str, str]:
    """``{code, message, hint}`` for ``code`` as found in this decision (``facts``)."""
    words = _WORDS.get(code)
    if code in facts.get("state_codes", ()) and facts.get("action") == "needs_recovery":
        # The catalogue's fix may say "edit at the line and column": an agent must not
        # edit the state by hand, and a truncated file has no such place.
        entry = CATALOGUE.get(code)
        summary = entry.summary.rstrip(".") if entry is not None else code
        summary = summary[:1].lower() + summary[1:]
        message = f"the state file 00-session-state.json cannot be used: {summary}"
        hint = (
            "do not edit the state file by hand: run the commands below (`recover` keeps the "
            "broken file and restores the last good copy)"
        )
    elif words is not None:
        message, hint = words(facts)
    else:
        entry = CATALOGUE.get(code)
        message = entry.summary if entry is not None else code
        hint = entry.fix if entry is not None else f"see docs/codes/{code}.md"
    return {"code": code, "message": message, "hint": hint}
