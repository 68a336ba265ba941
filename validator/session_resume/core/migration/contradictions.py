"""The end of every migration that changes a document (docs/spec.md §9.3, §9.4): the new
``revision`` and ``updated`` (the original ``updated`` kept as ``x-legacy.updated``), the
``current_step`` the steps say, and the contradictions no rule can settle — refused, or with
``--salvage`` resolved one documented way per code, every displaced value kept under
``x-legacy`` (SR151). Pure; the clock is the context's."""

from __future__ import annotations

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic, Severity, pointer_join
from session_resume.core.migration.context import LEGACY, MigrationContext, MigrationError
from session_resume.core.migration.repair_v3.values import ts_value
from session_resume.core.rules import RuleOptions, check_state, ordered_step_keys, step_order_key
from session_resume.core.timeutil import format_ts, parse_ts
from session_resume.core.workflow import Workflow

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The semantic errors a migration refuses to write (and --salvage resolves).
CONTRADICTIONS = ("SR301", "SR302", "SR303", "SR304", "SR306", "SR307")


def finish(
    original: dict[str, Any], doc: dict[str, Any], wf: Workflow | None, ctx: MigrationContext
) -> None:
    """``revision`` + 1, ``updated`` the migration time, the original ``updated`` kept as
    ``x-legacy.updated``. In the document, so the dry-run patch holds them too."""
    prev = doc.get("revision")
    doc["revision"] = (prev if isinstance(prev, int) and not isinstance(prev, bool) else 0) + 1
    new = format_ts(ctx.now)
    raw = original.get("updated")
    ts, _ok = ts_value(raw)
    if ts is not None and raw != new:
        ctx.aside(doc, "updated", raw, f"updated {raw!r} replaced by the migration time {new}")
    doc["updated"] = new


def settle(doc: dict[str, Any], wf: Workflow | None, ctx: MigrationContext) -> None:
    """Settle what a rule can, then refuse (SR152, one per contradiction, naming
    ``--salvage``) or, with ``ctx.salvage``, resolve the rest."""
    if ctx.salvage:
        _salvage(doc, wf, ctx)
    _current_step(doc, ctx)
    left = contradictions(doc, wf, ctx.file)
    if not left:
        return
    if ctx.salvage:
        tail = "no salvage rule resolves it; fix it by hand"
    else:
        tail = (
            f"`session-resume migrate --salvage {ctx.file or 'PATH'}` resolves it "
            "(docs/spec.md §9.4)"
        )
    raise MigrationError(
        [
            diag(
                "SR152",
                _cause(d, ctx)
                + f"the migrated state would contradict itself: {d.code} {d.message}; {tail}",
                file=ctx.file,
                pointer=d.pointer,
            )
            for d in left
        ]
    )


def _cause(d: Diagnostic, ctx: MigrationContext) -> str:
    """What the file itself holds that led to contradiction ``d``: the repairs the migration
    made to the same step (``step 1: status 'done-ish' is not a 3.0 status; set to
    pending``), so a refusal names the file's own finding, not only the repaired copy's."""
    place = d.pointer.split("/")[:3]
    if len(place) < 3:
        return ""
    made = [n.message for n in ctx.notes if n.pointer.split("/")[:3] == place]
    return "; ".join(made) + ", so " if made else ""


def contradictions(doc: dict[str, Any], wf: Workflow | None, file: str) -> list[Diagnostic]:
    """The errors of :data:`CONTRADICTIONS` in ``doc``. A step time later than the state's
    ``updated`` is not one: ``updated`` is the migration time, so that is a question of the
    clock (``validate`` reports it), not of the file."""
    return [
        d
        for d in check_state(doc, wf, RuleOptions(), file)
        if d.severity is Severity.ERROR
        and d.code in CONTRADICTIONS
        and "after the state's updated" not in d.message
    ]


def _current_step(doc: dict[str, Any], ctx: MigrationContext) -> None:
    """SR307: the one in-progress step says more than the counter (docs/spec.md §9.4)."""
    steps = doc.get("steps")
    if not isinstance(steps, dict):
        return
    running = [
        k for k, s in steps.items() if isinstance(s, dict) and s.get("status") == "in_progress"
    ]
    cur = doc.get("current_step")
    if len(running) != 1 or not isinstance(cur, int) or isinstance(cur, bool):
        return
    want = step_order_key(running[0])[0]
    legacy = doc.get(LEGACY)
    if cur != want and isinstance(legacy, dict) and "current_step" in legacy:
        # the original is kept already (this cur was derived from it): only note the change
        ctx.note(f"current_step {cur} set to {want}, the in-progress step", "/current_step")
        doc["current_step"] = want
    elif cur != want:
        ctx.aside(
            doc,
            "current_step",
            cur,
            f"current_step {cur} contradicted the in-progress step {running[0]}; set to {want}",
            "/current_step",
        )
        doc["current_step"] = want


def _move(step: dict[str, Any], key: str, name: str, ctx: MigrationContext, why: str) -> None:
    legacy = step.get(LEGACY)
    legacy = dict(legacy) if isinstance(legacy, dict) else {}
    n, slot = 2, name
    while slot in legacy and legacy[slot] != step.get(name):
        slot = f"{name}_{n}"
        n += 1
    legacy[slot] = step.get(name)
    step[LEGACY] = legacy
    step[name] = None
    ctx.notes.append(
        diag(
            "SR151",
            f"salvage: step {key}: {why}; {name} kept as steps.{key}.{LEGACY}.{slot}",
            file=ctx.file,
            pointer=pointer_join(["steps", key, name]),
        )
    )


def _salvage(doc: dict[str, Any], wf: Workflow | None, ctx: MigrationContext) -> None:
    """One deterministic resolution per contradiction (docs/spec.md §9.4)."""
    steps = doc.get("steps")
    if not isinstance(steps, dict):
        return
    keys = [k for k in ordered_step_keys(steps, wf) if isinstance(steps.get(k), dict)]
    running = [k for k in keys if steps[k].get("status") == "in_progress"]
    for k in running[:-1]:  # SR306: the last in-progress step stays, earlier ones are pending
        step = steps[k]
        step["status"] = "pending"
        step[LEGACY] = {
            **(step[LEGACY] if isinstance(step.get(LEGACY), dict) else {}),
            "status": "in_progress",
        }
        why = f"in progress with the later step {running[-1]}; set to pending"
        for name in ("started", "sub_step", "completed"):
            if step.get(name) is not None:
                _move(step, k, name, ctx, why)
    for k in keys:
        step = steps[k]
        status = step.get("status")
        if status == "pending":  # SR301
            for name in ("started", "completed", "sub_step"):
                if step.get(name) is not None:
                    _move(step, k, name, ctx, f"pending with {name} set")
        elif status == "skipped" and step.get("sub_step") is not None:
            _move(step, k, "sub_step", ctx, "skipped with a sub_step")
        elif status == "in_progress" and step.get("completed") is not None:
            _move(step, k, "completed", ctx, "in progress with a completion time")
        started, completed = parse_ts(step.get("started")), parse_ts(step.get("completed"))
        if started and completed and started > completed:  # SR304
            _move(step, k, "started", ctx, f"started after its completion {step['completed']}")
