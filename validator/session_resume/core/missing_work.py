"""What a resume finds missing (docs/spec.md §10, "Missing deliverables"): SR714, a file the
step continued should have by its recorded checkpoint; SR715, a deliverable of a completed
earlier step; SR716, the checkpoints a completed step never recorded. Pure: the file facts
come in the :class:`~session_resume.core.resume_decision.Snapshot`.
"""

from __future__ import annotations

from session_resume.core import briefing as briefing_rules
from session_resume.core.jsonread import as_dict
from session_resume.core.rules import ordered_step_keys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from session_resume.core.resume_decision import Snapshot
    from session_resume.core.workflow import Workflow


def missing_deliverables(out: dict[str, Any], snap: Snapshot, wf: Workflow) -> None:
    """SR714: the step continued after a checkpoint lists an artifact not on disk, or its
    workflow deliverable written at or before that checkpoint is not; SR715: the same for a
    completed earlier step, every deliverable of it (docs/spec.md §10, missing deliverables)."""
    doc = snap.document or {}
    steps = as_dict(doc.get("steps"))
    key = out["step"]
    if key is None or key not in steps:
        return
    st = as_dict(steps[key])
    if out["action"] == "resume_from_checkpoint":
        sdef = wf.step(key)
        due = sdef.deliverables_due(st.get("sub_step")) if sdef is not None else []
        gone = [p for p in st.get("artifacts") or [] if missing(snap, p)]
        gone += [p for p in briefing_rules.lost(snap.session_rel, snap.files, due) if p not in gone]
        if gone:
            out["missing"] = gone
            out["warnings"].append("SR714")
    order = ordered_step_keys(steps, wf)
    before = order[: order.index(key)] if key in order else []
    lost: list[str] = []
    for k in before:
        if as_dict(steps[k]).get("status") != "complete":
            continue
        lost += [p for p in steps[k].get("artifacts") or [] if missing(snap, p)]
        sdef = wf.step(k)
        lost += briefing_rules.lost(snap.session_rel, snap.files, sdef.deliverables if sdef else ())
    if lost:
        out["prereq_missing"] = list(dict.fromkeys(lost))
        out["warnings"].append("SR715")
    if as_dict(st).get("status") == "pending":
        _completed_short(out, snap, steps, before, wf)


def _completed_short(
    out: dict[str, Any], snap: Snapshot, steps: dict[str, Any], before: list[str], wf: Workflow
) -> None:
    """SR716 (docs/spec.md §10): the step to start follows a complete step (skipped ones
    passed over) whose last run, as the worklog's tail records it (its latest `step_start`
    or a checkpoint of it, then its `step_complete`), recorded no checkpoint or not its last
    one."""
    done = [k for k in before if as_dict(steps.get(k)).get("status") != "skipped"]
    if not done or as_dict(steps.get(done[-1])).get("status") != "complete":
        return
    key, sdef = done[-1], wf.step(done[-1])
    ids = list(sdef.checkpoint_ids) if sdef is not None else []
    started, last, at = False, None, None
    for e in snap.last_events:
        if e.get("step") != key:
            continue
        if e.get("event") == "step_start":
            started, last, at = True, None, None
        elif e.get("event") == "checkpoint" and e.get("sub_step") in ids:
            last = e["sub_step"]
        elif e.get("event") == "step_complete" and (started or last is not None):
            # without its start in the tail, the checkpoints the tail holds are still the
            # run's latest (a later start would be in the tail too)
            at = last if last is not None else ""
    if ids and at is not None and at != ids[-1]:
        rest = ids[ids.index(at) + 1 :] if at in ids else ids
        out["short"] = {"step": key, "sub_step": at or None, "unrecorded": rest}
        out["warnings"].append("SR716")


def missing(snap: Snapshot, path: Any) -> bool:
    return isinstance(path, str) and snap.artifacts.get(path) is None
