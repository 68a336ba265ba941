"""The user's phase approvals (``user_checkpoints``) → ``decision_log`` entries and their
``decision`` events (pure)."""

from __future__ import annotations

from session_resume.importers.common import ImportEvent
from session_resume.importers.dotagent.context import MapContext
from session_resume.importers.dotagent.source import PHASES, STEP_KEY

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def approval_log(ctx: MapContext) -> list[dict[str, Any]]:
    """One decision per approval of a known phase, in time order (ids ``D001``…); a
    ``decision`` event each goes to ``ctx.events``."""
    log: list[dict[str, Any]] = []
    approvals = ctx.src.phase.get("user_checkpoints")
    for entry in approvals if isinstance(approvals, list) else []:
        if not isinstance(entry, dict) or entry.get("phase") not in PHASES:
            continue
        when_ts = ctx.clock.ts(entry.get("approved_at"), ctx.f_phase, where="approved_at")
        rec: dict[str, Any] = {
            "id": f"D{len(log) + 1:03d}",
            "title": f"{entry['phase']} approval",
            "choice": "approved",
            "rationale": "the user approved the phase gate (dotagent user_checkpoints)",
            "step": STEP_KEY[entry["phase"]],
            "agent": "user",
        }
        if when_ts:
            rec["timestamp"] = when_ts
        log.append(rec)
    log.sort(key=lambda r: r.get("timestamp") or "")
    for i, rec in enumerate(log):
        rec["id"] = f"D{i + 1:03d}"
        ctx.events.append(
            ImportEvent(
                "decision",
                rec.get("timestamp") or ctx.last_updated or ctx.now_ts,
                ctx.sid,
                step=rec["step"],
                detail={**ctx.base(), "decision": rec["id"], "title": rec["title"]},
            )
        )
    return log
