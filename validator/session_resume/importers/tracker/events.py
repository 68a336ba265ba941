"""Worklog lines → worklog events (pure): one event per tracker line, the original under
``detail.original``; lines that do not parse kept as ``note`` events (SR807)."""

from __future__ import annotations

import re

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.importers.common import ImportEvent, Timestamps
from session_resume.importers.tracker.history import Segment
from session_resume.importers.tracker.source import EVENT_MAP, SOURCE, action_of, ident_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_TS_IN_TEXT = re.compile(r'"ts"\s*:\s*"([^"]{10,40})"')


def worklog_events(
    segments: list[Segment],
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
        # one set per segment: a scan of the segment per unparsed line was quadratic
        # (40,000 such lines took 52 s; docs/security.md §6)
        salvaged_at = {x.line for x in seg.lines if x.salvaged}
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
                            if ln.line in salvaged_at
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
            action = action_of(ln)
            step = keys.get(ident_of(v.get("step_id")) or "")
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
