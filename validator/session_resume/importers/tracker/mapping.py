"""The mapping of a session-tracker session to a v3.0 session (pure): the session header, then
the steps (:mod:`.steps`), the files (:mod:`.files`), the worklog events (:mod:`.events`), the
crash signature and lease, and the document."""

from __future__ import annotations

import posixpath
import re
from datetime import datetime

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.timeutil import format_ts
from session_resume.core.versions import CURRENT
from session_resume.importers import todos
from session_resume.importers.common import (
    ImportPlan,
    ImportRefused,
    Timestamps,
    current_step_of,
    derive_session_id,
    latest,
    old_source_note,
)
from session_resume.importers.tracker.events import worklog_events
from session_resume.importers.tracker.files import file_inventory
from session_resume.importers.tracker.history import History, Segment, salvage, segments_of
from session_resume.importers.tracker.source import (
    FORMAT_VERSION,
    SENTINEL_FILE,
    SOURCE,
    STATE_FILE,
    TODO_FILE,
    WORKLOG_FILE,
    TrackerSource,
    action_of,
    ident_of,
)
from session_resume.importers.tracker.steps import (
    keys_by_id,
    one_in_progress,
    step_keys,
    todo_steps,
)
from session_resume.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@record
class _Header:
    """The session as state.json describes it, its times normalised."""

    task: str
    sid: str
    started_at: str | None
    updated_at: str | None
    completed_at: str | None


def map_tracker(src: TrackerSource, *, now: datetime, project: str) -> ImportPlan:
    """The v3.0 session a tracker session becomes (pure)."""
    f_state = posixpath.join(src.dir, STATE_FILE)
    f_todo = posixpath.join(src.dir, TODO_FILE)
    f_log = posixpath.join(src.dir, WORKLOG_FILE)
    notes: list[Diagnostic] = []
    clock = Timestamps(now)
    now_ts = format_ts(now)
    head = _header(src, clock, notes, f_state)
    # the worklog: sessions, per-step history
    segments = segments_of(salvage(src.worklog), head.sid)
    hist = History.of(segments[-1].lines, clock, f_log)
    # the steps
    keys = step_keys(src.todo, f_todo, notes)
    id_key = keys_by_id(src.todo, keys)
    steps, findings, running = todo_steps(
        src,
        keys,
        hist,
        done_fallback=head.completed_at or head.updated_at or now_ts,
        start_fallback=head.started_at or head.updated_at or now_ts,
        file=f_todo,
        notes=notes,
    )
    one_in_progress(src, steps, running, keys, id_key, hist, file=f_todo, notes=notes)
    possibly, outside = file_inventory(src, steps, keys, id_key, hist, notes, f_state)
    signature, initialized = _crash_signature(src, segments[-1], clock, notes, f_state)
    events = worklog_events(segments, id_key, clock, f_log, head.updated_at or now_ts, notes)
    mine = [e.ts for e in events if e.session == head.sid]
    last_activity = (
        latest(head.updated_at, hist.last_ts, *mine, initialized, head.completed_at) or now_ts
    )
    signature["last_activity"] = last_activity
    lease = None
    if signature["unfinished"]:
        lease = {
            "v": 1,
            "session": head.sid,
            "owner": SOURCE,
            "pid": None,
            "host": "",
            "started": head.started_at or initialized or last_activity,
            "heartbeat": last_activity,
        }
    notes += old_source_note(last_activity, now, f_state)
    x_import: dict[str, Any] = {
        "source": SOURCE,
        "format_version": FORMAT_VERSION,
        "source_dir": src.dir,
        "imported": now_ts,
        "session": head.sid,
        "task": head.task,
        "crash_signature": signature,
        "possibly_incomplete": possibly,
        "earlier_sessions": len(segments) - 1,
    }
    if src.monitor is not None:
        x_import["monitor"] = src.monitor
    legacy_top: dict[str, Any] = {"state": src.state}
    if outside:
        legacy_top["files_outside_repository"] = outside
    doc: dict[str, Any] = {
        "schema_version": CURRENT,
        "project": project,
        "workflow": "generic",
        "revision": 0,
        "updated": now_ts,
        "current_step": current_step_of(steps),
        "decisions": {},
        "open_findings": list(dict.fromkeys(findings)),
        "steps": steps,
        "x-todo-ids": _todo_ids(src, keys),
        "x-import": x_import,
        "x-legacy": {SOURCE: legacy_top},
    }
    notes = clock.notes() + notes
    detail = {
        "source": SOURCE,
        "format_version": FORMAT_VERSION,
        "source_dir": src.dir,
        "task": head.task,
        "steps": len(steps),
        "events": len(events),
        "crash_signature": signature,
        "possibly_incomplete": possibly,
        "codes": sorted({d.code for d in notes}),
    }
    return ImportPlan(
        source=SOURCE,
        workflow="generic",
        document=doc,
        session=head.sid,
        imported_detail=detail,
        events=events,
        lease=lease,
        diagnostics=notes,
        possibly_incomplete=possibly,
    )


def _header(
    src: TrackerSource, clock: Timestamps, notes: list[Diagnostic], f_state: str
) -> _Header:
    """The session of state.json: refused without a ``task`` (SR800); its times; its id,
    derived when state.json has none (SR804); SR806 for temp files of a cut write."""
    state = src.state
    task = state.get("task")
    if not isinstance(task, str) or not task:
        raise ImportRefused(
            [
                diag(
                    "SR800",
                    "state.json holds no session (its `task` is empty): session-tracker "
                    "itself reports 'No session found'",
                    file=f_state,
                )
            ],
            exit_code=2,
        )
    started_at = clock.ts(state.get("started_at"), f_state, where="started_at")
    updated_at = clock.ts(state.get("updated_at"), f_state, where="updated_at")
    completed_at = clock.ts(state.get("completed_at"), f_state, where="completed_at")
    sid = derive_session_id("st", task, str(state.get("started_at") or ""))
    if not state.get("session_id"):
        notes.append(
            diag(
                "SR804",
                f"session_id is empty (session-tracker never sets it); the imported session "
                f"is {sid}, derived from the task and started_at",
                file=f_state,
                pointer="/session_id",
            )
        )
    if src.temp_files:
        notes.append(
            diag(
                "SR806",
                f"ignored {len(src.temp_files)} temp file(s) of an interrupted tracker write: "
                + ", ".join(sorted(src.temp_files)),
                file=src.dir,
            )
        )
    return _Header(task, sid, started_at, updated_at, completed_at)


def _crash_signature(
    src: TrackerSource,
    current: Segment,
    clock: Timestamps,
    notes: list[Diagnostic],
    f_state: str,
) -> tuple[dict[str, Any], str | None]:
    """(the crash signature without ``last_activity``, the sentinel's ``initialized`` time):
    is the session unfinished (SESSION_ACTIVE, or not completed and no ``session_done`` of
    this session)? SR813 when state.json and the worklog or sentinel disagree."""
    status = src.state.get("status")
    done_here = any(action_of(ln) == "session_done" for ln in current.lines)
    done_any = any(action_of(ln) == "session_done" for ln in src.worklog)
    sentinel_exists = src.sentinel is not None
    initialized = None
    if src.sentinel is not None:
        m = re.search(r"^initialized:\s*(\S+)\s*$", src.sentinel, re.MULTILINE)
        if m:
            initialized = clock.ts(m.group(1), posixpath.join(src.dir, SENTINEL_FILE))
    if status != "completed" and done_here:
        notes.append(
            diag(
                "SR813",
                f"state.json says {status!r} but the worklog has this session's "
                "session_done (crash-detect: 'contradicts status, possible corruption'); "
                "the session is taken as ended",
                file=f_state,
                pointer="/status",
            )
        )
    if status == "completed" and sentinel_exists:
        notes.append(
            diag(
                "SR813",
                "state.json says completed but SESSION_ACTIVE is still there: `done` was "
                "interrupted; the session is taken as unfinished",
                file=f_state,
                pointer="/status",
            )
        )
    signature = {
        "sentinel": sentinel_exists,
        "status": status,
        "session_done": done_here,
        "session_done_any_session": done_any,
        "orphaned_by_tracker_rule": sentinel_exists or (status != "completed" and not done_any),
        "unfinished": sentinel_exists or (status != "completed" and not done_here),
    }
    return signature, initialized


def _todo_ids(src: TrackerSource, keys: list[str]) -> dict[str, Any]:
    """``x-todo-ids``: each item's id and text, so a later ``sync-todos`` finds its step."""
    ids = todos.empty_ids()
    for item, key in zip(src.todo, keys, strict=True):
        todos.remember(ids, key, ident=ident_of(item.get("id")), namespace=SOURCE)
        content = item.get("content")
        if isinstance(content, str) and content.strip():
            todos.remember(ids, key, text=content.strip())
    ids["order"] = list(keys)
    return ids
