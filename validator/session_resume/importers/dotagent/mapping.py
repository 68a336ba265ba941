"""The mapping of a dotagent checkpoint to a v3.0 session (pure): the checks of the
checkpoint's header fields, then the phases (:mod:`.phases`), the approvals
(:mod:`.approvals`), the lease or the session end, and the document."""

from __future__ import annotations

import copy
import json
import posixpath
from datetime import datetime

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.versions import CURRENT
from session_resume.importers.common import (
    ImportEvent,
    ImportPlan,
    ImportRefused,
    Timestamps,
    current_step_of,
    derive_session_id,
    latest,
    old_source_note,
)
from session_resume.importers.dotagent.approvals import approval_log
from session_resume.importers.dotagent.context import MapContext
from session_resume.importers.dotagent.phases import (
    InProgress,
    complete_steps,
    completed_phases,
    phase_in_progress,
)
from session_resume.importers.dotagent.source import (
    ARCHIVE_DIR,
    EXECUTION_FILE,
    PHASE_STATUSES,
    PHASES,
    SOURCE,
    STEP_KEY,
    DotagentSource,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def map_dotagent(
    src: DotagentSource,
    *,
    now: datetime,
    project: str,
    template_steps: dict[str, Any],
) -> ImportPlan:
    """The v3.0 session a dotagent checkpoint becomes (pure). ``template_steps``: the
    ``dotagent`` workflow's steps, all pending (``Workflow.template_state``)."""
    ctx = _context(src, now)
    steps = copy.deepcopy(template_steps)
    completed = completed_phases(ctx)
    if ctx.started_at:
        ctx.events.append(
            ImportEvent(
                "session_start",
                ctx.started_at,
                ctx.sid,
                detail={**ctx.base(), "workflow_id": ctx.workflow_id},
            )
        )
    complete_steps(ctx, steps, completed)
    progress = phase_in_progress(ctx, steps)
    log = approval_log(ctx)
    lease, last_activity = _lease_or_end(ctx)
    ctx.events.sort(key=lambda e: e.ts)
    for r in progress.reconciled:
        ctx.events.append(
            ImportEvent(
                "note",
                ctx.now_ts,
                ctx.sid,
                step=STEP_KEY["IMPLEMENTATION"],
                detail={"source": SOURCE, "reconciled_task": r},
            )
        )
    ctx.notes += old_source_note(latest(ctx.started_at, ctx.last_updated), now, ctx.f_phase)
    doc = _document(ctx, project, steps, progress, log, last_activity)
    notes = ctx.clock.notes() + ctx.notes
    ph = src.phase
    detail = {
        "source": SOURCE,
        "source_dir": src.dir,
        "workflow_id": ctx.workflow_id,
        "current_phase": ctx.current,
        "phase_status": ph.get("phase_status"),
        "interruption_safe": ph.get("interruption_safe"),
        "from_archive": src.from_archive,
        "events": len(ctx.events),
        "reconciled_tasks": progress.reconciled,
        "codes": sorted({d.code for d in notes}),
    }
    return ImportPlan(
        source=SOURCE,
        workflow="dotagent",
        document=doc,
        session=ctx.sid,
        imported_detail=detail,
        events=ctx.events,
        lease=lease,
        files=progress.files,
        diagnostics=notes,
    )


def _context(src: DotagentSource, now: datetime) -> MapContext:
    """Check ``current_phase`` (SR801 refuses the import) and ``phase_status`` (SR808), read
    the header's times, derive the session id, and note what the directory holds besides the
    checkpoint (SR815, SR806, SR821)."""
    f_phase = posixpath.join(src.dir, src.state_dir, "phase.json")
    notes: list[Diagnostic] = []
    ph = src.phase
    wid = ph.get("workflow_id")
    current = ph.get("current_phase")
    if current not in PHASES:
        raise ImportRefused(
            [
                diag(
                    "SR801",
                    f"current_phase is {current!r}, not one of {', '.join(PHASES)}",
                    file=f_phase,
                    pointer="/current_phase",
                )
            ]
        )
    status = ph.get("phase_status")
    if status not in PHASE_STATUSES:
        notes.append(
            diag(
                "SR808",
                f"phase_status is {status!r}, not pending/in_progress/complete/failed; the "
                "phase is taken as interrupted (in_progress)",
                file=f_phase,
                pointer="/phase_status",
            )
        )
        status = "in_progress"
    ctx = MapContext(src, now, Timestamps(now), str(current), str(status), notes)
    ctx.workflow_id = wid if isinstance(wid, str) and wid else None
    ctx.started_at = ctx.clock.ts(ph.get("started_at"), f_phase, where="started_at")
    ctx.last_updated = ctx.clock.ts(ph.get("last_updated"), f_phase, where="last_updated")
    ctx.sid = derive_session_id("da", ctx.workflow_id or "", str(ph.get("started_at") or ""))
    notes += _directory_notes(src, f_phase)
    return ctx


def _directory_notes(src: DotagentSource, f_phase: str) -> list[Diagnostic]:
    """SR815 for a checkpoint write that did not finish, SR806 for its temp files, SR821 for
    the archived workflows."""
    notes: list[Diagnostic] = []
    ph = src.phase
    if ph.get("interruption_safe") is not True:
        notes.append(
            diag(
                "SR815",
                "interruption_safe is "
                + json.dumps(ph.get("interruption_safe"))
                + ": the last checkpoint write did not finish (the skill's validation fails "
                "and asks whether to start fresh); the state was imported as it is",
                file=f_phase,
                pointer="/interruption_safe",
            )
        )
    if src.temp_files:
        notes.append(
            diag(
                "SR806",
                "ignored temp file(s) of an interrupted checkpoint write: "
                + ", ".join(sorted(src.temp_files)),
                file=posixpath.join(src.dir, src.state_dir),
            )
        )
    if src.archives:
        notes.append(
            diag(
                "SR821",
                f"{len(src.archives)} archived workflow(s) under {ARCHIVE_DIR}/: "
                + ", ".join(a.name for a in src.archives)
                + " (import one with --archive NAME)",
                file=posixpath.join(src.dir, ARCHIVE_DIR),
            )
        )
    return notes


def _lease_or_end(ctx: MapContext) -> tuple[dict[str, Any] | None, str]:
    """(the lease, the last activity): a phase still running leaves a lease whose heartbeat is
    the last activity; otherwise the session ends then (a ``session_end`` event)."""
    # The last activity the checkpoint itself declares (file times are not trusted for it:
    # a copied or restored memory directory has fresh ones).
    declared = [e.ts for e in ctx.events if not (e.detail or {}).get("evidence")]
    last_activity = latest(ctx.last_updated, ctx.started_at, *declared) or ctx.now_ts
    if ctx.running:
        lease = {
            "v": 1,
            "session": ctx.sid,
            "owner": SOURCE,
            "pid": None,
            "host": "",
            "started": ctx.started_at or last_activity,
            "heartbeat": last_activity,
        }
        return lease, last_activity
    ctx.events.append(
        ImportEvent(
            "session_end",
            last_activity,
            ctx.sid,
            detail={**ctx.base(), "phase_status": ctx.status, "current_phase": ctx.current},
        )
    )
    return None, last_activity


def _document(
    ctx: MapContext,
    project: str,
    steps: dict[str, Any],
    progress: InProgress,
    log: list[dict[str, Any]],
    last_activity: str,
) -> dict[str, Any]:
    """The v3.0 state, with ``x-import`` (what was imported, how) and ``x-legacy`` (the
    checkpoint as it was, and the paths that could not be artifacts)."""
    src = ctx.src
    ph = src.phase
    x_import: dict[str, Any] = {
        "source": SOURCE,
        "source_dir": src.dir,
        "imported": ctx.now_ts,
        "session": ctx.sid,
        "workflow_id": ctx.workflow_id,
        "current_phase": ctx.current,
        "phase_status": ph.get("phase_status"),
        "interruption_safe": ph.get("interruption_safe"),
        "from_archive": src.from_archive,
        "archives": [a.name for a in src.archives],
        "execution": EXECUTION_FILE if src.execution is not None else None,
        "reconciled_tasks": progress.reconciled,
        "last_activity": last_activity,
    }
    legacy: dict[str, Any] = {"phase": ph}
    if ctx.legacy_paths:
        legacy["paths"] = ctx.legacy_paths
    doc: dict[str, Any] = {
        "schema_version": CURRENT,
        "project": project,
        "workflow": "dotagent",
        "revision": 0,
        "updated": ctx.now_ts,
        "current_step": current_step_of(steps),
        "decisions": {},
        "open_findings": progress.findings,
        "steps": steps,
        "x-import": x_import,
        "x-legacy": {SOURCE: legacy},
    }
    if log:
        doc["decision_log"] = log
    return doc
