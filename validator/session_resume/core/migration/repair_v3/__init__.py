"""The 3.0 repair pass: normalise the shapes upstream 3.0 writers produced that the 3.0
schema rejects (``3.5`` step keys, the apex-recall decision-log shape, …). A valid 3.0
document comes out unchanged, so migration stays idempotent. Also the second half of the
2.0 → 3.0 step (``from_old``). The package: ``values`` (the version, the closed sets, time
values), ``steps`` (the step records), ``session_wide`` (review audit, findings, decisions, the
decision log) and here the pass itself."""

from __future__ import annotations

import copy
import re

from session_resume.core.diagnostics import pointer_join
from session_resume.core.migration.context import MigrationContext
from session_resume.core.migration.repair_v3.session_wide import (
    repair_decision_log,
    repair_decisions,
    repair_findings,
    repair_review_audit,
)
from session_resume.core.migration.repair_v3.steps import repair_current_step, repair_steps
from session_resume.core.migration.repair_v3.values import (
    VERSION,
    legacy_top_level_keys,
    ts_value,
)
from session_resume.core.rules import CORE_KEYS
from session_resume.core.timeutil import format_ts
from session_resume.core.workflow import (
    BUILTINS,
    Workflow,
    WorkflowError,
    load_workflow,
    state_workflow_spec,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["VERSION", "choose_workflow", "repair"]


def repair(doc: dict[str, Any], ctx: MigrationContext, *, from_old: bool = False) -> dict[str, Any]:
    """Normalise a 3.0 document: fixes only shapes the 3.0 schema rejects, so a valid 3.0
    document comes out unchanged."""
    out = copy.deepcopy(doc)
    wf = choose_workflow(out, ctx)
    if from_old:
        if wf is not None and "workflow" not in out:
            out["workflow"] = wf.id
            ctx.note(f"workflow set to {wf.id!r}", "/workflow")
        _top_level_extras(out, wf, ctx)
    _project(out, ctx)
    _updated(out, ctx)
    steps = repair_steps(out, wf, ctx)
    repair_current_step(out, steps, ctx)
    repair_review_audit(out, ctx)
    repair_findings(out, ctx)
    repair_decisions(out, wf, ctx)
    repair_decision_log(out, ctx)
    return out


def choose_workflow(doc: dict[str, Any], ctx: MigrationContext) -> Workflow | None:
    """The state's own workflow; for a state that names none, the built-in that adopts
    unnamed states when its step names fit, else the first built-in with free steps."""
    if ctx.workflow is not None:
        return ctx.workflow
    named = doc.get("workflow")
    try:
        if named is not None:
            return load_workflow(state_workflow_spec(named))
        builtins = [load_workflow(b) for b in BUILTINS]
    except WorkflowError:
        return None
    adopter = next((w for w in builtins if w.adopts_unnamed_states), None)
    free = next((w for w in builtins if w.free_steps), None)
    if adopter is None:
        return free
    names = {s.name for s in adopter.steps}
    steps = doc.get("steps") if isinstance(doc.get("steps"), dict) else {}
    assert isinstance(steps, dict)
    foreign = sorted(
        {
            str(s["name"])
            for s in steps.values()
            if isinstance(s, dict) and isinstance(s.get("name"), str) and s["name"] not in names
        }
    )
    if foreign and free is not None:
        ctx.note(
            f"step names {', '.join(map(repr, foreign))} are not {adopter.id} steps; the "
            f"session is migrated under the {free.id} workflow"
        )
        return free
    return adopter


def _top_level_extras(doc: dict[str, Any], wf: Workflow | None, ctx: MigrationContext) -> None:

    known = set(CORE_KEYS) | {f.name for f in (wf.fields if wf else ())}
    for key in [k for k in doc if k not in known and not k.startswith("x-")]:
        if key in legacy_top_level_keys():
            continue  # moved into decisions (or kept aside) by repair_decisions
        ctx.aside(
            doc,
            key,
            doc.pop(key),
            f"top-level key {key!r} is not part of {VERSION}",
            pointer_join([key]),
        )


def _project(doc: dict[str, Any], ctx: MigrationContext) -> None:
    p = doc.get("project")
    if isinstance(p, str) and re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*\Z", p) and len(p) <= 128:
        return
    hint = ctx.project_hint
    if hint and re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*\Z", hint):
        if p is not None:
            ctx.aside(doc, "project", p, f"project {p!r} is not a valid project name", "/project")
        doc["project"] = hint
        ctx.note(f"project set to {hint!r} from the session directory", "/project")


def _updated(doc: dict[str, Any], ctx: MigrationContext) -> None:
    raw = doc.get("updated")
    ts, ok = ts_value(raw)
    if ts is not None:
        if ts != raw:
            doc["updated"] = ts
            ctx.note(f"updated {raw!r} rewritten as {ts}", "/updated")
        return
    if not ok:
        ctx.aside(doc, "updated", raw, f"updated {raw!r} is not a timestamp", "/updated")
    doc["updated"] = format_ts(ctx.now)
    ctx.note("updated was empty; set to the migration time", "/updated")
