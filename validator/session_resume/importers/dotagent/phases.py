"""The phases → the workflow's steps (pure): ``completed_phases`` → complete steps with their
outputs as artifacts; the phase in progress → a step in progress at the checkpoint the files
on disk prove (the skill's "Determine Resume Point" table); their worklog events."""

from __future__ import annotations

import json

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.importers.common import ImportEvent, latest
from session_resume.importers.dotagent.context import MapContext
from session_resume.importers.dotagent.source import (
    DEMAND,
    EXECUTION_FILE,
    FINAL_DESIGN,
    PHASES,
    STEP_KEY,
    TASK_DONE,
    VERIFICATION,
    DotagentSource,
    memory_relative,
    task_output,
)
from session_resume.importers.dotagent.tasks import mtime_ts, reconcile
from session_resume.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def completed_phases(ctx: MapContext) -> dict[str, dict[str, Any]]:
    """The usable ``completed_phases`` entries by phase; SR817 for a bad entry, an order that
    is not the canonical one, or a ``current_phase`` that does not follow them."""
    f_phase = ctx.f_phase
    completed: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    raw_done = ctx.src.phase.get("completed_phases")
    for i, entry in enumerate(raw_done if isinstance(raw_done, list) else []):
        if not isinstance(entry, dict) or entry.get("phase") not in PHASES:
            ctx.notes.append(
                diag(
                    "SR817",
                    f"completed_phases[{i}] is not a {{phase, completed_at, output}} entry of "
                    "a known phase; ignored (kept under x-legacy)",
                    file=f_phase,
                    pointer=f"/completed_phases/{i}",
                )
            )
            continue
        order.append(entry["phase"])
        completed[entry["phase"]] = entry
    expected = list(PHASES[: len(order)])
    if order != expected:
        ctx.notes.append(
            diag(
                "SR817",
                "completed_phases is "
                + (", ".join(order) or "empty")
                + f", not the canonical order {', '.join(expected)} without gaps or repeats",
                file=f_phase,
                pointer="/completed_phases",
            )
        )
    current = ctx.current
    done_keys = [i for i, p in enumerate(PHASES) if p in completed]
    nxt = PHASES[max(done_keys) + 1] if done_keys and max(done_keys) + 1 < len(PHASES) else None
    if current in completed and ctx.status == "in_progress":
        ctx.notes.append(
            diag(
                "SR817",
                f"{current} is in completed_phases and also the phase in progress; it is taken "
                "as being run again",
                file=f_phase,
                pointer="/current_phase",
            )
        )
    elif done_keys and current not in completed and nxt is not None and current != nxt:
        ctx.notes.append(
            diag(
                "SR817",
                f"current_phase is {current} but the phase after the last completed one is {nxt}",
                file=f_phase,
                pointer="/current_phase",
            )
        )
    return completed


def complete_steps(
    ctx: MapContext, steps: dict[str, Any], completed: dict[str, dict[str, Any]]
) -> None:
    """Mark the step of each completed phase complete (not the phase being run again), with
    its output as artifact (SR816 when it does not exist) and a ``step_complete`` event."""
    src = ctx.src
    for p, entry in completed.items():
        if p == ctx.current and ctx.status == "in_progress":
            continue
        key = STEP_KEY[p]
        st = steps[key]
        done_at = ctx.clock.ts(entry.get("completed_at"), ctx.f_phase, where=f"{p} completed_at")
        st.update(
            status="complete",
            completed=done_at or ctx.last_updated or ctx.now_ts,
            sub_step=None,
        )
        out_rel = src.resolve(memory_relative(entry.get("output"), src.dir))
        if entry.get("output") is not None and out_rel is None:
            ctx.legacy_paths.append({"path": entry.get("output"), "why": f"{p} output"})
        repo = ctx.artifact(out_rel, f"{p} output")
        if repo is not None:
            st["artifacts"].append(repo)
        if out_rel is not None and src.fact(out_rel).mtime is None:
            ctx.notes.append(
                diag(
                    "SR816",
                    f"{p} is complete but its output {entry.get('output')} does not exist "
                    "(the skill's 'artifacts exist' check fails)",
                    file=ctx.f_phase,
                    pointer="/completed_phases",
                )
            )
        ctx.events.append(
            ImportEvent(
                "step_complete",
                st["completed"],
                ctx.sid,
                step=key,
                detail={**ctx.base(), "phase": p, "output": entry.get("output")},
            )
        )


@record
class InProgress:
    """What the phase in progress and execution.json add: the reconciled tasks, the files for
    the session directory (the reconciled execution.json), open findings."""

    reconciled: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)
    findings: list[str] = field(default_factory=list)


def phase_in_progress(ctx: MapContext, steps: dict[str, Any]) -> InProgress:
    """Reconcile execution.json's tasks, and put the current phase's step in progress when the
    phase was started: at no checkpoint with an open finding when it failed (SR818), else at
    the checkpoint its files prove, with a ``step_start`` (and ``checkpoint``) event."""
    out = InProgress()
    execution = ctx.src.execution
    new_exec = None
    if execution is not None:
        new_exec, out.reconciled = reconcile(ctx.src, execution, ctx.now_ts, ctx.f_exec, ctx.notes)
        out.files[EXECUTION_FILE] = (
            json.dumps(new_exec, ensure_ascii=False, separators=(",", ":")) + "\n"
        ).encode("utf-8")
    if not ctx.running:
        return out
    current = ctx.current
    ckey = STEP_KEY[current]
    st = steps[ckey]
    prev_done = [
        steps[STEP_KEY[p]]["completed"]
        for p in PHASES[: PHASES.index(current)]
        if steps[STEP_KEY[p]]["status"] == "complete"
    ]
    began = latest(*prev_done, ctx.started_at) or ctx.last_updated or ctx.now_ts
    st.update(status="in_progress", started=began, completed=None, attempts=1)
    ctx.events.append(
        ImportEvent(
            "step_start", began, ctx.sid, step=ckey, detail={**ctx.base(), "estimated": True}
        )
    )
    if ctx.status == "failed":
        out.findings.append(f"dotagent phase {current} failed")
        ctx.notes.append(
            diag(
                "SR818",
                f"phase {current} failed; the skill would not resume it (it starts "
                "fresh). Step "
                f"{ckey} is in progress with no checkpoint (run the phase again) and a "
                "finding is open",
                file=ctx.f_phase,
                pointer="/phase_status",
            )
        )
    else:
        _resume_at_checkpoint(ctx, st, began, new_exec)
    return out


def _resume_at_checkpoint(
    ctx: MapContext, st: dict[str, Any], began: str, execution: dict[str, Any] | None
) -> None:
    """The step in progress at the checkpoint its phase's files prove, with their outputs
    as artifacts and a ``checkpoint`` event (none: the step restarts)."""
    current = ctx.current
    sub, evidence, arts = _resume_point(ctx.src, current, execution, ctx.f_phase, ctx.notes)
    for rel in arts:
        repo = ctx.artifact(rel, f"{current} output")
        if repo is not None and repo not in st["artifacts"]:
            st["artifacts"].append(repo)
    if sub is None:
        return
    st["sub_step"] = sub
    when = ctx.src.fact(evidence).mtime
    cp_ts = mtime_ts(when, ctx.now_ts) if when is not None else began
    cp_ts = max(cp_ts, began)
    ctx.events.append(
        ImportEvent(
            "checkpoint",
            cp_ts,
            ctx.sid,
            step=STEP_KEY[current],
            sub_step=sub,
            detail={**ctx.base(), "evidence": evidence},
        )
    )


def _resume_point(
    src: DotagentSource,
    phase: str,
    execution: dict[str, Any] | None,
    file: str,
    notes: list[Diagnostic],
) -> tuple[str | None, str | None, list[str]]:
    """(checkpoint, the file proving it, the phase's outputs so far): the skill's "Determine
    Resume Point" table."""
    if phase == "REQUIREMENTS":
        f = src.fact(DEMAND)
        if f.mtime is not None and f.json_ok:
            return "demand_written", DEMAND, [DEMAND]
        if f.mtime is not None:
            notes.append(
                diag(
                    "SR816",
                    f"{DEMAND} exists but is not valid JSON: the PM runs again",
                    file=file,
                )
            )
        return None, None, []
    if phase == "ARCHITECTURE":
        designs = [d for d in src.designs if src.fact(d).mtime is not None]
        final = src.fact(FINAL_DESIGN)
        if final.mtime is not None and final.json_ok:
            return "final_design_written", FINAL_DESIGN, [*designs, FINAL_DESIGN]
        if designs:
            newest = max(designs, key=lambda d: src.fact(d).mtime or 0)
            return "designs_written", newest, designs
        return None, None, []
    if phase == "IMPLEMENTATION":
        if execution is None:
            return None, None, []
        tasks = [t for t in execution.get("tasks") or [] if isinstance(t, dict)]
        outputs = [
            o
            for o in (task_output(t, src.dir) for t in tasks)
            if o is not None and src.fact(o).mtime is not None
        ]
        if (
            tasks
            and all(t.get("status") in TASK_DONE for t in tasks)
            and len(outputs) == len(tasks)
        ):
            newest = max(outputs, key=lambda o: src.fact(o).mtime or 0)
            return "tasks_complete", newest, outputs
        return "execution_planned", EXECUTION_FILE, outputs
    if phase == "VERIFICATION":
        for rel in VERIFICATION:
            if src.fact(rel).mtime is not None:
                return "verification_written", rel, [rel]
        return None, None, []
    refl = [r for r in src.reflections if src.fact(r).mtime is not None]
    if refl:
        return "reflection_written", max(refl, key=lambda r: src.fact(r).mtime or 0), refl
    return None, None, []
