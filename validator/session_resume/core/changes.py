"""Each write moment as a :class:`Change`: the new document (a pure transformation of
:mod:`session_resume.core.write_moments`) and the one worklog event that describes it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from session_resume.core import write_moments
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.workflow import Workflow
from session_resume.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@record
class Change:
    """A new document and the worklog event that describes it (one write, one line)."""

    document: dict[str, Any]
    event: str
    step: str | None = None
    sub_step: str | None = None
    detail: dict[str, Any] | None = None
    # what the write leaves unrecorded (docs/spec.md §4: SR716, SR717); it is written anyway
    warnings: list[Diagnostic] = field(default_factory=list)


# build(current document, workflow, lease_orphaned) -> Change; may raise TransitionError.
if TYPE_CHECKING:
    Build = Callable[[dict[str, Any], Workflow, bool], Change]


def start_step(
    key: str, now: datetime, *, force: bool, name: str | None, handover: bool = False
) -> Build:
    """``handover``: the step was started at a gate by ``transition`` and recorded no work
    (docs/spec.md §10, SR712): starting it again costs no attempt, even after an orphan."""

    def build(doc: dict[str, Any], wf: Workflow, orphaned: bool) -> Change:
        old = (doc.get("steps") or {}).get(key)
        old_status = old.get("status") if isinstance(old, dict) else None
        untouched = handover and isinstance(old, dict) and old.get("sub_step") is None
        restart_orphan = orphaned and old_status == "in_progress" and not untouched
        new = write_moments.start_step(
            doc, wf, key, now, force=force, orphaned=restart_orphan, name=name
        )
        step = new["steps"][key]
        detail: dict[str, Any] = {"attempts": step.get("attempts")}
        if old_status == "in_progress" and untouched:
            detail["handover"] = True
        elif old_status == "in_progress":
            detail["restart"] = True
        if restart_orphan:
            detail["orphaned"] = True
        if old_status in ("complete", "skipped"):
            detail["rerun"] = old_status
        interrupted = [
            k
            for k, s in (doc.get("steps") or {}).items()
            if k != key and isinstance(s, dict) and s.get("status") == "in_progress"
        ]
        if interrupted:
            detail["interrupted"] = interrupted
        if force:
            detail["forced"] = True
        return Change(new, "step_start", key, None, detail)

    return build


def checkpoint(
    key: str,
    sub_step: str,
    artifacts: list[str],
    context_files: list[str],
    base: str | None = None,
) -> Build:
    def build(doc: dict[str, Any], wf: Workflow, orphaned: bool) -> Change:
        new = write_moments.checkpoint(doc, wf, key, sub_step, artifacts, context_files, base)
        written = new["steps"][key]["sub_step"]
        detail: dict[str, Any] = {}
        if artifacts:
            detail["artifacts"] = artifacts
        if context_files:
            detail["context_files"] = context_files
        if written != sub_step:
            detail["legacy_id"] = sub_step
        return Change(new, "checkpoint", key, written, detail or None)

    return build


def complete_step(key: str, now: datetime) -> Build:
    def build(doc: dict[str, Any], wf: Workflow, orphaned: bool) -> Change:
        new = write_moments.complete_step(doc, wf, key, now)
        gaps = write_moments.completion_gaps(doc, wf, key)
        return Change(new, "step_complete", key, warnings=gaps)

    return build


def skip_step(key: str, reason: str, now: datetime, *, force: bool) -> Build:
    def build(doc: dict[str, Any], wf: Workflow, orphaned: bool) -> Change:
        new = write_moments.skip_step(doc, wf, key, reason, now, force=force)
        detail: dict[str, Any] = {"reason": reason}
        if force:
            detail["forced"] = True
        return Change(new, "step_skip", key, None, detail)

    return build


def set_decision(key: str, value: Any) -> Build:
    def build(doc: dict[str, Any], wf: Workflow, orphaned: bool) -> Change:
        new = write_moments.set_decision(doc, wf, key, value)
        detail: dict[str, Any] = {"key": key, "value": value}
        old = doc.get("decisions") or {}
        if key in old:
            detail["previous"] = old[key]
        return Change(new, "decision", None, None, detail)

    return build


def log_decision(
    title: str,
    choice: str,
    rationale: str,
    now: datetime,
    *,
    step: str | None = None,
    alternatives: list[str] | None = None,
) -> Build:
    def build(doc: dict[str, Any], wf: Workflow, orphaned: bool) -> Change:
        new = write_moments.log_decision(
            doc, title, choice, rationale, step, alternatives or (), now=now, wf=wf
        )
        entry = new["decision_log"][-1]
        detail = {"id": entry["id"], "title": title, "choice": choice}
        return Change(new, "decision", step, None, detail)

    return build


def approve_gate(key: str, decisions: dict[str, Any], now: datetime) -> Build:
    """The user approved step ``key``'s gate: event ``gate_approved`` (docs/spec.md §4.1)."""

    def build(doc: dict[str, Any], wf: Workflow, orphaned: bool) -> Change:
        new = write_moments.approve_gate(doc, wf, key, decisions, now)
        entry = new["decision_log"][-1]
        detail: dict[str, Any] = {"gate": entry["gate"], "decision": entry["id"]}
        if decisions:
            detail["decisions"] = dict(decisions)
        return Change(new, "gate_approved", key, None, detail)

    return build


def review_audit(key: str, audit: write_moments.ReviewAudit) -> Build:
    def build(doc: dict[str, Any], wf: Workflow, orphaned: bool) -> Change:
        new = write_moments.review_audit(doc, wf, key, audit)
        entry = new["review_audit"][f"step_{key}"]
        detail = {k: entry.get(k) for k in ("complexity", "passes_planned", "passes_executed")}
        detail["skipped"] = list(entry.get("skipped") or [])
        return Change(new, "review_audit", key, None, detail)

    return build


def add_finding(title: str) -> Build:
    return _finding("add", title)


def resolve_finding(title: str) -> Build:
    return _finding("resolve", title)


def _finding(action: str, title: str) -> Build:
    def build(doc: dict[str, Any], wf: Workflow, orphaned: bool) -> Change:
        if action == "add":
            new = write_moments.add_finding(doc, title)
            detail: dict[str, Any] = {"title": title}
            if title in (doc.get("open_findings") or []):
                detail["already_open"] = True
            return Change(new, "finding_add", None, None, detail)
        new = write_moments.resolve_finding(doc, title)
        return Change(new, "finding_resolve", None, None, {"title": title})

    return build


def transition(
    complete_key: str, start_key: str, decisions: dict[str, Any], now: datetime, *, force: bool
) -> Build:
    def build(doc: dict[str, Any], wf: Workflow, orphaned: bool) -> Change:
        new = write_moments.transition(doc, wf, complete_key, start_key, decisions, now, force)
        detail: dict[str, Any] = {
            "completed": complete_key,
            "decisions": decisions,
            "attempts": new["steps"][start_key].get("attempts"),
        }
        if force:
            detail["forced"] = True
        gaps = write_moments.completion_gaps(doc, wf, complete_key, new)
        return Change(new, "step_start", start_key, None, detail, gaps)

    return build
