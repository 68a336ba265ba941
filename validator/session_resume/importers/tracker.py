"""session-tracker v2.1 ``.session`` directory → a v3.0 session under the ``generic`` workflow.

:func:`map_tracker` is pure (parsed files in, an :class:`ImportPlan` out); :func:`read_source`
reads the directory (and changes nothing in it). The rules, and every place the result differs
from what session-tracker itself would say, are in ``docs/importers.md``.

Summary of the mapping:

* every todo item becomes a step keyed by the item's ``id`` (its decimal value); an id that
  cannot be a key, or a duplicate, gets the next free key (SR810). ``x-todo-ids`` remembers
  the id and the text of every item, so a later ``sync-todos`` finds the same steps;
* statuses: ``completed`` → ``complete``, ``in_progress`` → ``in_progress``, ``pending`` →
  ``pending``, ``skipped`` → ``skipped``; anything else → ``pending`` with the original kept
  under the step's ``x-legacy`` (SR808; ``blocked`` also opens a finding). Only one step may
  be in progress: the tracker's ``current_step_id`` if it is one of them, else the one started
  last; the others become ``pending`` (SR809);
* the file inventory: paths relative to the tracker's project root (relative keys, and
  absolute ones under it or under v2.1's hard-coded ``/home/z/my-project``) become
  repository-relative; one file under a relative and an absolute key is one file (SR811);
  ``working``/``completed`` files are the step's artifacts, ``reading`` ones its context
  files; files still ``working``/``reading`` are reported as possibly incomplete;
* the worklog: one event per tracker line (the original under ``detail.original``), lines
  that do not parse kept as ``note`` events (SR807); ``init`` starts a tracker session, so a
  worklog that spans several sessions keeps them apart;
* the crash signature: a session still marked active (``SESSION_ACTIVE``, or not completed and
  no ``session_done`` of *this* session) gets a lease whose heartbeat is its last activity, so
  ``resume`` reports it orphaned (SR512); a finished one gets its ``session_end``.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.jsonread import parse_json_bytes
from session_resume.core.timeutil import format_ts
from session_resume.importers import todos
from session_resume.importers.common import (
    ImportEvent,
    ImportPlan,
    ImportRefused,
    Timestamps,
    current_step_of,
    derive_session_id,
    latest,
    old_source_note,
    pending_step,
    repo_path,
    under,
)
from session_resume.storage.fileio import read_limited

SOURCE = "session-tracker"
FORMAT_VERSION = "2.1"
STATE_FILE = "state.json"
TODO_FILE = "todo.json"
WORKLOG_FILE = "worklog.jsonl"
SENTINEL_FILE = "SESSION_ACTIVE"
MONITOR_FILE = "monitor.pid"
# v2.1 hard-codes its project root; paths recorded on another machine start with it.
DEFAULT_PROJECT_ROOT = "/home/z/my-project"
MAX_WORKLOG = 256 * 1024 * 1024
_DECIMAL = re.compile(r"^[0-9]+$")
_TEMP = re.compile(r"^\.st_.*\.tmp$")

STATUS_MAP = {
    "completed": "complete",
    "in_progress": "in_progress",
    "pending": "pending",
    "skipped": "skipped",
}
# tracker action -> worklog event (sync_update depends on its new status)
EVENT_MAP = {
    "init": "session_start",
    "step_start": "step_start",
    "step_done": "step_complete",
    "session_done": "session_end",
    "ping": "heartbeat",
}


@dataclass
class WorklogLine:
    """One line of ``worklog.jsonl``: its object, or None when it is not a JSON object."""

    line: int
    value: dict[str, Any] | None
    raw: str
    torn: bool = False
    salvaged: bool = False  # an event recovered from the end of a garbled line


@dataclass
class TrackerSource:
    """The parsed contents of a ``.session`` directory.

    ``project_root``: the tracker's project root as found locally (absolute POSIX path);
    relative inventory keys are taken relative to it. ``repo_prefix``: where that root lies
    inside the target repository ("" for the repository root itself, None if outside).
    """

    dir: str
    state: dict[str, Any]
    todo: list[dict[str, Any]]
    worklog: list[WorklogLine] = field(default_factory=list)
    sentinel: str | None = None
    temp_files: list[str] = field(default_factory=list)
    project_root: str = DEFAULT_PROJECT_ROOT
    repo_prefix: str | None = ""
    monitor: dict[str, Any] | None = None


# --- pure mapping --------------------------------------------------------------------------


@dataclass
class _Segment:
    """One tracker session inside the shared worklog (from an ``init`` line to the next)."""

    session: str
    lines: list[WorklogLine]


def map_tracker(src: TrackerSource, *, now: datetime, project: str) -> ImportPlan:
    """The v3.0 session a tracker session becomes (pure)."""
    f_state = posixpath.join(src.dir, STATE_FILE)
    f_todo = posixpath.join(src.dir, TODO_FILE)
    f_log = posixpath.join(src.dir, WORKLOG_FILE)
    notes: list[Diagnostic] = []
    clock = Timestamps(now)
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
    now_ts = format_ts(now)
    started_at = clock.ts(state.get("started_at"), f_state, where="started_at")
    updated_at = clock.ts(state.get("updated_at"), f_state, where="updated_at")
    completed_at = clock.ts(state.get("completed_at"), f_state, where="completed_at")
    raw_sid = state.get("session_id")
    sid = derive_session_id("st", task, str(state.get("started_at") or ""))
    if not raw_sid:
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

    # --- worklog: sessions, per-step history -------------------------------------------------
    segments = _segments(salvage(src.worklog), sid)
    current = segments[-1]
    hist = _History.of(current.lines, clock, f_log)

    # --- steps -------------------------------------------------------------------------------
    keys = _keys(src.todo, f_todo, notes)
    id_key = {}
    for item, key in zip(src.todo, keys, strict=True):
        ident = _ident(item.get("id"))
        if ident is not None and ident not in id_key:
            id_key[ident] = key
    steps: dict[str, Any] = {}
    findings: list[str] = []
    running: list[str] = []
    for item, key in zip(src.todo, keys, strict=True):
        content = item.get("content")
        name = content if isinstance(content, str) else ("" if content is None else str(content))
        step = pending_step(name)
        ident = _ident(item.get("id"))
        legacy: dict[str, Any] = {"source": SOURCE, "todo": item}
        raw_status = item.get("status")
        status = STATUS_MAP.get(raw_status) if isinstance(raw_status, str) else None
        if status is None:
            legacy["status"] = {"original": raw_status, "code": "SR808"}
            notes.append(
                diag(
                    "SR808",
                    f"todo item {ident or key} has status {raw_status!r}, outside "
                    "session-tracker's pending/in_progress/completed/skipped; step "
                    f"{key} is pending and the original is kept under x-legacy",
                    file=f_todo,
                )
            )
            if raw_status == "blocked":
                findings.append(f"step {key} ({name}) was blocked in session-tracker")
            status = "pending"
        if status == "in_progress":
            running.append(key)
        step["status"] = status
        starts = hist.starts.get(ident or "", [])
        if status == "complete":
            done = latest(*hist.dones.get(ident or "", []), hist.synced(ident, "completed"))
            step["completed"] = done or completed_at or updated_at or now_ts
            step["started"] = max((s for s in starts if s <= step["completed"]), default=None)
        elif status == "in_progress":
            step["started"] = (
                (starts[-1] if starts else None)
                or hist.synced(ident, "in_progress")
                or started_at
                or updated_at
                or now_ts
            )
            step["attempts"] = max(1, len(starts))
        elif status == "skipped":
            step["skip_reason"] = (
                "pending when session-tracker's `done` ended the session"
                if state.get("status") == "completed"
                else "skipped in session-tracker"
            )
        if starts and status == "complete":
            step["attempts"] = len(starts)
        step["x-legacy"] = legacy
        steps[key] = step

    if len(running) > 1:
        keep = _pick_running(running, state.get("current_step_id"), id_key, hist, src.todo, keys)
        for key in running:
            if key == keep:
                continue
            st = steps[key]
            st["x-legacy"]["demoted"] = {
                "status": "in_progress",
                "started": st["started"],
                "attempts": st.get("attempts"),
                "code": "SR809",
            }
            st.update(status="pending", started=None)
            st.pop("attempts", None)
        notes.append(
            diag(
                "SR809",
                f"todo items of steps {', '.join(running)} are all in_progress; step {keep} "
                "stays in progress ("
                + (
                    "the tracker's current_step_id"
                    if id_key.get(_ident(state.get("current_step_id")) or "") == keep
                    else "started last"
                )
                + "), the others are pending with the original kept under x-legacy",
                file=f_todo,
            )
        )

    # --- files ---------------------------------------------------------------------------------
    possibly, outside = _files(src, steps, keys, id_key, hist, notes, f_state)

    # --- crash signature and lease ---------------------------------------------------------------
    status = state.get("status")
    done_here = any(_action(ln) == "session_done" for ln in current.lines)
    done_any = any(_action(ln) == "session_done" for ln in src.worklog)
    sentinel_exists = src.sentinel is not None
    tracker_orphan = sentinel_exists or (status != "completed" and not done_any)
    unfinished = sentinel_exists or (status != "completed" and not done_here)
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
    # --- worklog events --------------------------------------------------------------------------
    events = _events(segments, id_key, clock, f_log, updated_at or now_ts, notes)
    mine = [e.ts for e in events if e.session == sid]
    last_activity = latest(updated_at, hist.last_ts, *mine, initialized, completed_at) or now_ts
    lease = None
    if unfinished:
        lease = {
            "v": 1,
            "session": sid,
            "owner": SOURCE,
            "pid": None,
            "host": "",
            "started": started_at or initialized or last_activity,
            "heartbeat": last_activity,
        }
    notes += old_source_note(last_activity, now, f_state)

    signature = {
        "sentinel": sentinel_exists,
        "status": status,
        "session_done": done_here,
        "session_done_any_session": done_any,
        "orphaned_by_tracker_rule": tracker_orphan,
        "unfinished": unfinished,
        "last_activity": last_activity,
    }
    ids = todos.empty_ids()
    for item, key in zip(src.todo, keys, strict=True):
        todos.remember(ids, key, ident=_ident(item.get("id")), namespace=SOURCE)
        content = item.get("content")
        if isinstance(content, str) and content.strip():
            todos.remember(ids, key, text=content.strip())
    ids["order"] = list(keys)
    x_import: dict[str, Any] = {
        "source": SOURCE,
        "format_version": FORMAT_VERSION,
        "source_dir": src.dir,
        "imported": now_ts,
        "session": sid,
        "task": task,
        "crash_signature": signature,
        "possibly_incomplete": possibly,
        "earlier_sessions": len(segments) - 1,
    }
    if src.monitor is not None:
        x_import["monitor"] = src.monitor
    legacy_top: dict[str, Any] = {"state": state}
    if outside:
        legacy_top["files_outside_repository"] = outside
    doc: dict[str, Any] = {
        "schema_version": "3.0",
        "project": project,
        "workflow": "generic",
        "revision": 0,
        "updated": now_ts,
        "current_step": current_step_of(steps),
        "decisions": {},
        "open_findings": list(dict.fromkeys(findings)),
        "steps": steps,
        "x-todo-ids": ids,
        "x-import": x_import,
        "x-legacy": {SOURCE: legacy_top},
    }
    notes = clock.notes() + notes
    detail = {
        "source": SOURCE,
        "format_version": FORMAT_VERSION,
        "source_dir": src.dir,
        "task": task,
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
        session=sid,
        imported_detail=detail,
        events=events,
        lease=lease,
        diagnostics=notes,
        possibly_incomplete=possibly,
    )


def salvage(lines: list[WorklogLine]) -> list[WorklogLine]:
    """A line cut short by a crash is continued by the next append (the tracker writes no
    newline first): recover the complete event at the end of such a line."""
    out = []
    for ln in lines:
        if ln.value is not None:
            out.append(ln)
            continue
        at = ln.raw.rfind('{"ts"')
        tail = parse_json_bytes(ln.raw[at:].encode("utf-8")) if at > 0 else None
        if tail is None or tail.corrupt or not isinstance(tail.value, dict):
            out.append(ln)
            continue
        out.append(WorklogLine(ln.line, None, ln.raw[:at], ln.torn))
        out.append(WorklogLine(ln.line, tail.value, ln.raw[at:], salvaged=True))
    return out


_TS_IN_TEXT = re.compile(r'"ts"\s*:\s*"([^"]{10,40})"')


def _ident(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | str):
        text = str(value).strip()
        return text or None
    return None


def _action(ln: WorklogLine) -> str | None:
    a = (ln.value or {}).get("action")
    return a if isinstance(a, str) else None


def _keys(todo: list[dict[str, Any]], file: str, notes: list[Diagnostic]) -> list[str]:
    """A step key per todo item: its decimal id, else (or when taken) the next free key."""
    keys: list[str | None] = []
    used: set[str] = set()
    for item in todo:
        ident = _ident(item.get("id"))
        key = str(int(ident)) if ident is not None and _DECIMAL.match(ident) else None
        if key is not None and key in used:
            key = None
        if key is not None:
            used.add(key)
        keys.append(key)
    nxt = max((int(k) for k in used), default=0) + 1
    out = []
    for item, key in zip(todo, keys, strict=True):
        if key is None:
            key = str(nxt)
            nxt += 1
            notes.append(
                diag(
                    "SR810",
                    f"todo item id {item.get('id')!r} cannot be a step key or is used twice; "
                    f"it is step {key} (the mapping is kept in x-todo-ids)",
                    file=file,
                )
            )
        out.append(key)
    return out


def _segments(lines: list[WorklogLine], sid: str) -> list[_Segment]:
    """Split the shared worklog at its ``init`` lines; the last part is the current session."""
    starts = [i for i, ln in enumerate(lines) if _action(ln) == "init"]
    if not starts or starts[0] != 0:
        starts = [0, *starts]
    out = []
    for n, (a, b) in enumerate(zip(starts, [*starts[1:], len(lines)], strict=True)):
        part = lines[a:b]
        if n == len(starts) - 1:
            out.append(_Segment(sid, part))
            continue
        head = part[0].value if part and part[0].value else {}
        out.append(
            _Segment(
                derive_session_id("st", str(head.get("detail") or ""), str(head.get("ts") or a)),
                part,
            )
        )
    return out or [_Segment(sid, [])]


@dataclass
class _History:
    """What the current session's worklog says about each todo id."""

    starts: dict[str, list[str]] = field(default_factory=dict)
    dones: dict[str, list[str]] = field(default_factory=dict)
    syncs: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    last_ts: str | None = None
    # (ts, step id current then, action, value) for file evidence
    file_events: list[tuple[str | None, str | None, str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, lines: list[WorklogLine], clock: Timestamps, file: str) -> _History:
        h = cls()
        current: str | None = None
        for ln in lines:
            v = ln.value
            if v is None:
                continue
            ts = clock.ts(v.get("ts"), file, where=f"line {ln.line} ts")
            if ts is not None:
                h.last_ts = latest(h.last_ts, ts)
            action = _action(ln)
            sid = _ident(v.get("step_id"))
            if action == "step_start" and sid is not None:
                if ts:
                    h.starts.setdefault(sid, []).append(ts)
                current = sid
                for f in v.get("files") or []:
                    h.file_events.append((ts, sid, "declared", f))
            elif action == "step_done" and sid is not None:
                if ts:
                    h.dones.setdefault(sid, []).append(ts)
                h.file_events.append((ts, sid, "step_done", sid))
                if current == sid:
                    current = None
            elif action == "sync_update" and sid is not None and ts:
                new = v.get("new_status")
                if isinstance(new, str):
                    h.syncs.setdefault(sid, []).append((new, ts))
            elif action in ("file_working", "file_reading", "file_done"):
                status = {"file_working": "working", "file_reading": "reading"}.get(
                    action, "completed"
                )
                h.file_events.append((ts, current, status, v.get("file")))
            elif action == "file_rename":
                h.file_events.append(
                    (ts, current, "rename", (v.get("old_path"), v.get("new_path")))
                )
        return h

    def synced(self, ident: str | None, status: str) -> str | None:
        return max((ts for s, ts in self.syncs.get(ident or "", []) if s == status), default=None)


def _pick_running(
    running: list[str],
    current_id: Any,
    id_key: dict[str, str],
    hist: _History,
    todo: list[dict[str, Any]],
    keys: list[str],
) -> str:
    """Which of several in-progress items stays in progress: the tracker's current step, else
    the one started last, else the first in todo order (what the tracker's resume names)."""
    cur = id_key.get(_ident(current_id) or "")
    if cur in running:
        return cur
    key_id = {k: _ident(item.get("id")) for item, k in zip(todo, keys, strict=True)}
    started = [(max(hist.starts.get(key_id[k] or "", [""])), k) for k in running]
    best = max(started, key=lambda x: x[0])
    return best[1] if best[0] else running[0]


def _files(
    src: TrackerSource,
    steps: dict[str, Any],
    keys: list[str],
    id_key: dict[str, str],
    hist: _History,
    notes: list[Diagnostic],
    f_state: str,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Inventory → artifacts / context files; returns (possibly incomplete, outside repo)."""
    anchors = [src.project_root]
    if posixpath.normpath(src.project_root) != DEFAULT_PROJECT_ROOT:
        anchors.append(DEFAULT_PROJECT_ROOT)

    def locate(key: Any) -> str | None:
        """A tracker path relative to its project root, or None."""
        if not isinstance(key, str) or not key or "\0" in key:
            return None
        if key.startswith("/"):
            for a in anchors:
                rel = under(key, a)
                if rel not in (None, "."):
                    return rel
            return None
        rel = posixpath.normpath(key)
        if rel == ".." or rel.startswith("../"):
            return locate(posixpath.normpath(posixpath.join(src.project_root, key)))
        return None if rel == "." else rel

    inventory = src.state.get("files")
    if not isinstance(inventory, dict):
        inventory = {}
    groups: dict[str, list[tuple[str, str, str | None]]] = {}
    outside: list[dict[str, Any]] = []
    for key, info in inventory.items():
        info = info if isinstance(info, dict) else {}
        raw_status = info.get("status")
        status: str = raw_status if isinstance(raw_status, str) else "working"
        raw_purpose = info.get("purpose")
        purpose: str | None = raw_purpose if isinstance(raw_purpose, str) else None
        rel = locate(key)
        repo = repo_path(src.repo_prefix, rel) if rel is not None else None
        if repo is None:
            outside.append({"key": key, "status": status, "code": "SR812"})
            notes.append(
                diag(
                    "SR812",
                    f"file {key!r} is outside the tracker's project root "
                    f"({src.project_root}) or the repository; it is not an artifact and is "
                    "kept under x-legacy",
                    file=f_state,
                    pointer="/files",
                )
            )
            continue
        groups.setdefault(repo, []).append((key, status, purpose))
    for repo, entries in groups.items():
        if len(entries) > 1:
            notes.append(
                diag(
                    "SR811",
                    f"{repo} is in the inventory under {len(entries)} keys ("
                    + ", ".join(repr(e[0]) for e in entries)
                    + "); they are one file",
                    file=f_state,
                    pointer="/files",
                )
            )

    # latest worklog evidence and first step association per file
    todo_files: dict[str, list[str]] = {}
    for item, key in zip(src.todo, keys, strict=True):
        for f in item.get("files") or []:
            rel = locate(f)
            repo = repo_path(src.repo_prefix, rel) if rel is not None else None
            if repo is not None:
                todo_files.setdefault(key, []).append(repo)
    evidence: dict[str, str] = {}
    first_step: dict[str, str] = {}
    written: set[str] = set()  # `file --working` seen: the step wrote it
    read: set[str] = set()  # `file --reading` seen: an input

    def note(path: Any, status: str, step_id: str | None, *, explicit: bool = False) -> None:
        rel = locate(path)
        repo = repo_path(src.repo_prefix, rel) if rel is not None else None
        if repo is None:
            return
        evidence[repo] = status
        if explicit and status == "working":
            written.add(repo)
        if status == "reading":
            read.add(repo)
        key = id_key.get(step_id or "")
        if key is not None:
            first_step.setdefault(repo, key)

    for _ts, step_id, what, value in hist.file_events:
        if what == "declared":  # step --start --files: being worked on, read or written
            note(value, "working", step_id)
        elif what == "step_done":
            for repo in todo_files.get(id_key.get(value, ""), []):
                evidence[repo] = "completed"
        elif what == "rename":
            old, new = value
            rel = locate(old)
            repo = repo_path(src.repo_prefix, rel) if rel is not None else None
            if repo is not None and repo in evidence:
                note(new, evidence.pop(repo), step_id)
        else:
            note(value, what, step_id, explicit=True)

    content_key: dict[str, list[str]] = {}
    for item, key in zip(src.todo, keys, strict=True):
        if isinstance(item.get("content"), str):
            content_key.setdefault(item["content"], []).append(key)
    current_key = id_key.get(_ident(src.state.get("current_step_id")) or "")
    possibly: list[dict[str, Any]] = []
    for repo, entries in groups.items():
        statuses = list(dict.fromkeys(e[1] for e in entries))
        if len(statuses) == 1:
            status = statuses[0]
        elif evidence.get(repo) in statuses:
            status = evidence[repo]
        else:  # no evidence which key is newer: the cautious reading
            status = next((s for s in ("working", "reading") if s in statuses), statuses[0])
        owner = next((k for k in keys if repo in todo_files.get(k, [])), None)
        if owner is None:
            purposes = [e[2] for e in entries if e[2] and len(content_key.get(e[2], [])) == 1]
            owner = content_key[purposes[0]][0] if purposes else None
        owner = owner or first_step.get(repo) or current_key
        # An input: read (`file --reading`, or an inventory status) and never written.
        is_input = status == "reading" or (
            repo not in written and (repo in read or any(e[1] == "reading" for e in entries))
        )
        if owner is not None and owner in steps:
            target = "context_files_used" if is_input else "artifacts"
            if repo not in steps[owner][target]:
                steps[owner][target].append(repo)
        if status in ("working", "reading"):
            possibly.append(
                {"path": repo, "status": status, "step": owner, "keys": [e[0] for e in entries]}
            )
    for o in outside:
        if o["status"] in ("working", "reading"):
            possibly.append({"path": o["key"], "status": o["status"], "step": None, "keys": []})
    return possibly, outside


def _events(
    segments: list[_Segment],
    id_key: dict[str, str],
    clock: Timestamps,
    file: str,
    fallback_ts: str,
    notes: list[Diagnostic],
) -> list[ImportEvent]:
    out: list[ImportEvent] = []
    last_ts = None
    for n, seg in enumerate(segments):
        # Earlier sessions' todo lists were overwritten by a later init: their step ids name
        # other items, so only the current session's events are tied to steps.
        keys = id_key if n == len(segments) - 1 else {}
        for ln in seg.lines:
            v = ln.value
            base: dict[str, Any] = {"source": SOURCE, "line": ln.line}
            if ln.salvaged:
                base["salvaged"] = True
            if v is None:
                notes.append(
                    diag(
                        "SR807",
                        (
                            "the last worklog line is incomplete"
                            if ln.torn
                            else "a worklog line is not a JSON object"
                        )
                        + " (session-tracker drops it silently); it is kept as a note event"
                        + (
                            "; the complete event appended after the cut is recovered"
                            if any(x.salvaged and x.line == ln.line for x in seg.lines)
                            else ""
                        ),
                        file=file,
                        line=ln.line,
                    )
                )
                m = _TS_IN_TEXT.search(ln.raw)
                hinted = clock.ts(m.group(1), file, where=f"line {ln.line} ts") if m else None
                out.append(
                    ImportEvent(
                        "note",
                        hinted or last_ts or fallback_ts,
                        seg.session,
                        detail={**base, "unparsed": ln.raw[:4096], "torn": ln.torn},
                    )
                )
                continue
            ts = clock.ts(v.get("ts"), file, where=f"line {ln.line} ts")
            if ts is None:
                ts = last_ts or fallback_ts
                base["ts_missing"] = True
            last_ts = ts
            action = _action(ln)
            step = keys.get(_ident(v.get("step_id")) or "")
            event = EVENT_MAP.get(action or "", "note")
            if action == "sync_update":
                event = {"in_progress": "step_start", "completed": "step_complete"}.get(
                    str(v.get("new_status")), "note"
                )
            if event in ("step_start", "step_complete") and step is None:
                event = "note"
            out.append(
                ImportEvent(
                    event,
                    ts,
                    seg.session,
                    step=step,
                    detail={**base, "action": action, "original": v},
                )
            )
    return out


# --- reading the source directory (I/O) -------------------------------------------------------


def _read_json(path: Path, what: str, *, required: bool) -> Any:
    if not os.path.lexists(path):
        if not required:
            return None
        raise ImportRefused(
            [
                diag(
                    "SR800",
                    f"no {what} here: this is not a session-tracker session directory",
                    file=str(path),
                )
            ],
            exit_code=2,
        )
    res = read_limited(path)
    if res.data is None:
        raise ImportRefused(
            [
                diag("SR801", f"cannot read {what}: {d.message}", file=str(path))
                for d in res.diagnostics
            ]
        )
    parsed = parse_json_bytes(res.data, file=str(path), require_object=False)
    if parsed.corrupt:
        raise ImportRefused(
            [
                diag(
                    "SR801",
                    f"{what} does not parse ({d.code}: {d.message}); session-tracker would "
                    "silently treat it as empty. Repair it first",
                    file=str(path),
                    line=d.line,
                    column=d.column,
                )
                for d in parsed.diagnostics
                if d.code != "SR113"
            ]
        )
    return parsed.value


def read_worklog(path: Path) -> list[WorklogLine]:
    if not os.path.lexists(path):
        return []
    res = read_limited(path, max_size=MAX_WORKLOG)
    if res.data is None:
        raise ImportRefused(
            [
                diag("SR801", f"cannot read the worklog: {d.message}", file=str(path))
                for d in res.diagnostics
            ]
        )
    data = res.data
    out = []
    pieces = data.split(b"\n")
    torn_last = not data.endswith(b"\n")
    for i, raw in enumerate(pieces):
        if not raw.strip():
            continue
        text = raw.decode("utf-8", errors="replace")
        parsed = parse_json_bytes(raw, require_object=True)
        value = parsed.value if not parsed.corrupt and isinstance(parsed.value, dict) else None
        out.append(WorklogLine(i + 1, value, text, torn=torn_last and i == len(pieces) - 1))
    return out


def read_source(
    src_dir: str | os.PathLike[str],
    *,
    repo_root: Path,
    project_root: str | os.PathLike[str] | None = None,
) -> TrackerSource:
    """Read a ``.session`` directory. Nothing in it is written, renamed or locked."""
    d = Path(os.path.abspath(src_dir))
    if not d.is_dir():
        raise ImportRefused([diag("SR800", "no such directory", file=str(d))], exit_code=2)
    state = _read_json(d / STATE_FILE, "state.json", required=True)
    if not isinstance(state, dict):
        raise ImportRefused(
            [diag("SR801", "state.json is not a JSON object", file=str(d / STATE_FILE))]
        )
    todo = _read_json(d / TODO_FILE, "todo.json", required=False)
    if todo is None:
        todo = []
    if not isinstance(todo, list) or not all(isinstance(x, dict) for x in todo):
        raise ImportRefused(
            [
                diag(
                    "SR801",
                    "todo.json is not a JSON array of objects",
                    file=str(d / TODO_FILE),
                )
            ]
        )
    sentinel = None
    if os.path.isfile(d / SENTINEL_FILE):
        sentinel = (d / SENTINEL_FILE).read_bytes()[:65536].decode("utf-8", errors="replace")
    monitor = None
    if os.path.isfile(d / MONITOR_FILE):
        mres = read_limited(d / MONITOR_FILE, max_size=65536)
        if mres.data is not None:
            mp = parse_json_bytes(mres.data)
            monitor = mp.value if isinstance(mp.value, dict) and not mp.corrupt else None
    root = Path(os.path.abspath(project_root)) if project_root else d.parent
    real_repo = Path(os.path.abspath(repo_root))
    try:
        prefix: str | None = root.relative_to(real_repo).as_posix()
        prefix = "" if prefix == "." else prefix
    except ValueError:
        prefix = None
    return TrackerSource(
        dir=str(d),
        state=state,
        todo=todo,
        worklog=read_worklog(d / WORKLOG_FILE),
        sentinel=sentinel,
        temp_files=sorted(n for n in os.listdir(d) if _TEMP.match(n)),
        project_root=root.as_posix(),
        repo_prefix=prefix,
        monitor=monitor,
    )
