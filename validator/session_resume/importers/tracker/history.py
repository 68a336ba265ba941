"""The tracker's shared worklog as history (pure): torn lines salvaged, the worklog split
into tracker sessions at its ``init`` lines, and what the current session says about each
todo item (starts, completions, status syncs, file evidence)."""

from __future__ import annotations

from session_resume.core.jsonread import parse_json_bytes
from session_resume.importers.common import Timestamps, derive_session_id, latest
from session_resume.importers.tracker.source import WorklogLine, action_of, ident_of
from session_resume.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@record
class Segment:
    """One tracker session inside the shared worklog (from an ``init`` line to the next)."""

    session: str
    lines: list[WorklogLine]


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


def segments_of(lines: list[WorklogLine], sid: str) -> list[Segment]:
    """Split the shared worklog at its ``init`` lines; the last part is the current session."""
    starts = [i for i, ln in enumerate(lines) if action_of(ln) == "init"]
    if not starts or starts[0] != 0:
        starts = [0, *starts]
    out = []
    for n, (a, b) in enumerate(zip(starts, [*starts[1:], len(lines)], strict=True)):
        part = lines[a:b]
        if n == len(starts) - 1:
            out.append(Segment(sid, part))
            continue
        head = part[0].value if part and part[0].value else {}
        out.append(
            Segment(
                derive_session_id("st", str(head.get("detail") or ""), str(head.get("ts") or a)),
                part,
            )
        )
    return out or [Segment(sid, [])]


@record
class History:
    """What the current session's worklog says about each todo id."""

    starts: dict[str, list[str]] = field(default_factory=dict)
    dones: dict[str, list[str]] = field(default_factory=dict)
    syncs: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    last_ts: str | None = None
    # (ts, step id current then, action, value) for file evidence
    file_events: list[tuple[str | None, str | None, str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, lines: list[WorklogLine], clock: Timestamps, file: str) -> History:
        h = cls()
        current: str | None = None
        for ln in lines:
            v = ln.value
            if v is None:
                continue
            ts = clock.ts(v.get("ts"), file, where=f"line {ln.line} ts")
            if ts is not None:
                h.last_ts = latest(h.last_ts, ts)
            action = action_of(ln)
            sid = ident_of(v.get("step_id"))
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
