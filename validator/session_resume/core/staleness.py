"""Staleness (SR708, docs/spec.md §10): when the state was last worked on, the gap of more
than 7 days the resume decision warns about, and whether an open finding records it already.
Part of the resume decision (:mod:`~session_resume.core.resume_decision`), pure."""

from __future__ import annotations

from datetime import datetime, timedelta

from session_resume.core.jsonread import as_dict
from session_resume.core.timeutil import parse_ts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

OLD_STATE = timedelta(days=7)

# Worklog events that are no work on the state (the lease's own).
_LEASE_EVENTS = ("session_start", "session_end", "heartbeat", "takeover")


def last_work(doc: dict[str, Any], events: tuple[dict[str, Any], ...]) -> datetime | None:
    """When the state was last worked on, for the staleness warning (docs/spec.md §10): its
    ``updated``, unless its latest state event is the migration (nothing written since): then
    the original ``updated`` kept as ``x-legacy.updated``."""
    updated = parse_ts(doc.get("updated"))
    work = [e for e in events if e.get("event") not in _LEASE_EVENTS]
    if not work or work[-1].get("event") != "migrated":
        return updated
    legacy = as_dict(doc.get("x-legacy")).get("updated")
    if parse_ts(legacy) is None and isinstance(legacy, str):
        # kept in the form it had in the file: an offset (docs/spec.md §9.3 step 2)
        # lazy: only a migrated state keeping an offset form
        from session_resume.core.migration.repair_v3.values import ts_value

        legacy = ts_value(legacy)[0]
    return parse_ts(legacy) or updated


# Events after which the user has seen the work at a gate: a stale gap before them is settled.
_GATE_EVENTS = ("step_complete", "step_skip")


def stale_gap(
    doc: dict[str, Any], events: tuple[dict[str, Any], ...], now: datetime
) -> tuple[datetime, datetime] | None:
    """SR708 (docs/spec.md §10): ``(last work, resumed)`` when the state was last worked on
    more than 7 days before now (``resumed`` is now), or when the worklog's tail shows work
    resumed more than 7 days after the work before it with no step completed or skipped
    since, so that the resuming session's first write does not hide the gap; else None."""
    updated = last_work(doc, events)
    if updated is not None and now - updated > OLD_STATE:
        return updated, now
    work = [
        (t, e.get("event"))
        for e in events
        if e.get("event") not in (*_LEASE_EVENTS, "migrated")
        and (t := parse_ts(e.get("ts"))) is not None
    ]
    for (before, _), (after, event) in reversed(list(zip(work, work[1:], strict=False))):
        if event in _GATE_EVENTS:
            return None
        if after - before > OLD_STATE:
            return before, after
    return None


STALE_FINDING = "Resumed after "


def stale_recorded(doc: dict[str, Any]) -> bool:
    """Whether an open finding records the stale gap already (the plan's `finding add` of
    SR708 ran): the user sees it at the gate, so the warning is not repeated."""
    found = doc.get("open_findings")
    return isinstance(found, list) and any(
        isinstance(t, str) and t.startswith(STALE_FINDING) for t in found
    )
