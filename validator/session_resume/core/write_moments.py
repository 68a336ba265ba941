"""State transitions at the five write moments (pure core: no I/O, the clock injected).

Each function takes a v3.0 state document and returns a **new** document (the input is never
mutated), or raises :class:`TransitionError` with coded diagnostics that say what to do:
SR710 (the change is not allowed from the step's current status), SR711 (no such step),
SR310/SR311/SR312 (an unsafe artifact or context path), SR420 (a decision value the workflow
does not allow). ``updated`` and ``revision`` are the store's business (``store.save``).

Write moments (upstream session-resume skill): step start → :func:`start_step`; sub-step done →
:func:`checkpoint`; step done → :func:`complete_step`; decision made → :func:`set_decision` /
:func:`log_decision`; challenger finding → :func:`add_finding` / :func:`resolve_finding`;
challenger review run → :func:`review_audit`.
A composite orchestrator gate (complete A, record decisions, start B) is :func:`transition`,
one new document and therefore one write.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime

from session_resume.core.codes import diag
from session_resume.core.decision_log import approval_entry, json_text
from session_resume.core.decision_log import next_decision_id as next_decision_id
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.rules import ordered_step_keys, step_order_key
from session_resume.core.timeutil import format_ts
from session_resume.core.workflow import Workflow, pending_step
from session_resume.core.write_checks import (
    STEP_KEY,
    append_unique,
    check_key,
    check_paths,
    existing_step,
    gate_approval,
    int_or_none,
    one_form_list,
    pointer_to,
    refuse,
    step_label,
    steps_of,
)
from session_resume.core.write_checks import (
    TransitionError as TransitionError,
)
from session_resume.core.write_checks import (
    copy_document as copy_document,
)
from session_resume.core.write_checks import (
    one_form as one_form,
)
from session_resume.core.write_checks import (
    started_at_gate as started_at_gate,
)
from session_resume.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DONE = ("complete", "skipped")


# --- the transitions ---------------------------------------------------------------------


def init_state(wf: Workflow, project: str, now: datetime) -> dict[str, Any]:
    """A fresh v3.0 state for ``wf``: every step pending, revision 0 (the store makes it 1)."""
    if not isinstance(project, str) or not re.fullmatch(
        r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", project
    ):
        raise refuse(
            "SR710",
            f"project name {project!r} is not allowed: use letters, digits, `.`, `_` and `-`, "
            "starting with a letter or digit (at most 128 characters)",
            "/project",
        )
    return wf.template_state(project, format_ts(now))


def start_step(
    doc: dict[str, Any],
    wf: Workflow,
    key: str,
    now: datetime,
    force: bool = False,
    orphaned: bool = False,
    name: str | None = None,
) -> dict[str, Any]:
    """Step start: pending → in_progress (``started`` = now, ``completed`` and ``sub_step``
    cleared, ``current_step`` = the key's integer part, ``attempts`` = 1 on a first start).

    * already in_progress: a restart from the beginning (``sub_step`` and
      ``context_files_used`` cleared, ``started`` = now). With ``orphaned`` (the previous
      session crashed) ``attempts`` is incremented (an absent count means 1 attempt so far).
    * complete or skipped: refused unless ``force`` (a re-run: completion reset, attempts + 1).
    * another step in_progress: refused unless ``force`` (that step goes back to pending).
    * earlier steps (workflow order; numeric order for free steps) not complete or skipped:
      refused unless ``force`` (upstream's direct-invocation check).
    * under a free-steps workflow an unknown key creates the step (``name``, default
      ``Step KEY``).
    """
    new: dict[str, Any] = copy_document(doc)
    check_key(wf, key)
    steps = steps_of(new)
    sdef = wf.step(key)
    if not isinstance(steps.get(key), dict):
        if sdef is not None:
            steps[key] = pending_step(sdef.name, sdef.default_agent)
        else:  # free steps
            steps[key] = pending_step(name or f"Step {key}")
    step = steps[key]
    status = step.get("status")
    others = _check_start(wf, steps, key, step_label(key, step, sdef), force)

    for k in others:  # only reached with force
        o = steps[k]
        o.update(status="pending", started=None, completed=None, sub_step=None)

    attempts = int_or_none(step.get("attempts"))
    if status == "pending":
        step["attempts"] = (attempts or 0) + 1
    elif status == "in_progress":
        if orphaned:
            step["attempts"] = (attempts if attempts is not None else 1) + 1
    else:  # a forced re-run of a complete or skipped step
        step["attempts"] = (attempts if attempts is not None else 1) + 1
    if status != "pending":
        step["context_files_used"] = []
    step.pop("skip_reason", None)
    step.update(status="in_progress", started=format_ts(now), completed=None, sub_step=None)
    new["current_step"] = step_order_key(key)[0]
    return new


def _check_start(
    wf: Workflow, steps: dict[str, Any], key: str, label: str, force: bool
) -> list[str]:
    """Refuse (SR710) a start of step ``key`` that only ``force`` allows: a complete or
    skipped step, another step in progress, earlier steps not done. Returns the other steps
    in progress (a forced start sets them back to pending)."""
    step = steps[key]
    status = step.get("status")
    ptr = pointer_to("steps", key, "status")

    if status in DONE and not force:
        if status == "complete":
            raise refuse(
                "SR710",
                f"step {label} is already complete; to run it again use "
                f"`session-resume start {key} --force` (its completion is reset)",
                ptr,
            )
        reason = step.get("skip_reason")
        raise refuse(
            "SR710",
            f"step {label} was skipped"
            + (f" ({reason})" if isinstance(reason, str) and reason else "")
            + f"; to run it anyway use `session-resume start {key} --force`",
            ptr,
        )

    others = [
        k
        for k, s in steps.items()
        if k != key and isinstance(s, dict) and s.get("status") == "in_progress"
    ]
    if others and not force:
        names = ", ".join(step_label(k, steps[k], wf.step(k)) for k in others)
        raise refuse(
            "SR710",
            f"step {names} is in progress; complete it (`session-resume complete "
            f"{others[0]}`) or skip it first, or use `--force` to start step {key} anyway "
            f"(step {others[0]} then goes back to pending)",
            pointer_to("steps", others[0], "status"),
        )

    order = ordered_step_keys(steps, wf)
    if key in order:
        behind = [
            k
            for k in order[: order.index(key)]
            if isinstance(steps[k], dict) and steps[k].get("status") not in DONE
        ]
    else:  # pragma: no cover - every key matching STEP_KEY is ordered
        behind = []
    if behind and not force and status != "in_progress":
        names = ", ".join(step_label(k, steps[k], wf.step(k)) for k in behind)
        raise refuse(
            "SR710",
            f"earlier step(s) {names} are neither complete nor skipped; complete or skip "
            f"them first (the orchestrator runs steps in order), or use `--force` to start "
            f"step {key} anyway",
            pointer_to("steps", key),
        )
    return others


def checkpoint(
    doc: dict[str, Any],
    wf: Workflow,
    key: str,
    sub_step: str,
    artifacts: Iterable[str] = (),
    context_files: Iterable[str] = (),
    base: str | None = None,
) -> dict[str, Any]:
    """Sub-step done: record the checkpoint ``sub_step`` and append artifacts and context
    files (deduplicated; with ``base``, the session directory relative to the repository,
    every listed path of the step is stored in its one form, :func:`one_form`). The step must
    be in_progress; ``sub_step`` must be a checkpoint id of the step (a legacy id is written as
    its current id) unless the workflow defines no checkpoints for it."""
    new: dict[str, Any] = copy_document(doc)
    step = existing_step(new, wf, key)
    sdef = wf.step(key)
    label = step_label(key, step, sdef)
    status = step.get("status")
    if status != "in_progress":
        advice = (
            f"run `session-resume start {key}` before recording checkpoints"
            if status == "pending"
            else f"it is {status}; run `session-resume start {key} --force` to work on it again"
        )
        raise refuse(
            "SR710",
            f"step {label} is {status}, not in_progress: {advice}",
            pointer_to("steps", key),
        )
    if not isinstance(sub_step, str) or not sub_step.strip():
        raise refuse("SR710", "the checkpoint id is empty", pointer_to("steps", key, "sub_step"))
    if sdef is not None and sdef.checkpoints and sub_step not in sdef.checkpoint_ids:
        if sub_step in sdef.legacy_checkpoints:
            sub_step = sdef.legacy_checkpoints[sub_step]
        else:
            raise refuse(
                "SR710",
                f"{sub_step!r} is not a checkpoint of step {label} in workflow {wf.id!r}; "
                f"valid ids: {', '.join(sdef.checkpoint_ids)}",
                pointer_to("steps", key, "sub_step"),
            )
    arts = check_paths(list(artifacts), pointer_to("steps", key, "artifacts"))
    ctx = check_paths(list(context_files), pointer_to("steps", key, "context_files_used"))
    for list_name, values in (("artifacts", arts), ("context_files_used", ctx)):
        if not isinstance(step.get(list_name), list):
            step[list_name] = []
        if base is not None:
            one_form_list(step[list_name], base)
            values = [one_form(v, base) for v in values]
        append_unique(step[list_name], values)
    step["sub_step"] = sub_step
    return new


def complete_step(doc: dict[str, Any], wf: Workflow, key: str, now: datetime) -> dict[str, Any]:
    """Step done: in_progress → complete (``completed`` = now, ``sub_step`` cleared)."""
    new: dict[str, Any] = copy_document(doc)
    step = existing_step(new, wf, key)
    label = step_label(key, step, wf.step(key))
    status = step.get("status")
    ptr = pointer_to("steps", key, "status")
    if status == "pending":
        raise refuse(
            "SR710",
            f"step {label} is pending: it has not started; run `session-resume start {key}` first",
            ptr,
        )
    if status == "complete":
        raise refuse(
            "SR710",
            f"step {label} is already complete (at {step.get('completed')}); nothing to do",
            ptr,
        )
    if status != "in_progress":
        raise refuse(
            "SR710",
            f"step {label} is {status}; only a step in progress can be completed "
            f"(`session-resume start {key} --force` to run it)",
            ptr,
        )
    step.update(status="complete", completed=format_ts(now), sub_step=None)
    return new


def completion_gaps(
    doc: Mapping[str, Any], wf: Workflow, key: str, after: Mapping[str, Any] | None = None
) -> list[Diagnostic]:
    """What completing step ``key`` of ``doc`` (the state before the write) leaves unrecorded
    (docs/spec.md §4): SR716 for its checkpoints after ``sub_step`` (all of them when none was
    recorded), SR717 for required decisions its gate records that are still empty in
    ``after`` (the new document; default ``doc``). Warnings: the write goes on."""
    out: list[Diagnostic] = []
    sdef = wf.step(key)
    step = steps_of(dict(doc)).get(key)
    step = step if isinstance(step, dict) else {}
    if sdef is None:
        return out
    label = step_label(key, step, sdef)
    ids = [c.id for c in sdef.checkpoints]
    sub = step.get("sub_step")
    missing = ids[ids.index(sub) + 1 :] if sub in ids else ([] if sub is not None else ids)
    if missing:
        done = len(ids) - len(missing)
        out.append(
            diag(
                "SR716",
                f"step {label} completed with {done} of its {len(ids)} checkpoints recorded; "
                f"not recorded: {', '.join(missing)}",
                pointer=pointer_to("steps", key, "sub_step"),
                hint=f"if that work was not done, reopen the step (`session-resume start {key} "
                f"--force`), do it and record each checkpoint after its work "
                f"(`session-resume checkpoint {key} {missing[0]}` first)",
            )
        )
    gate: dict[str, Any] = sdef.gate if isinstance(sdef.gate, dict) else {}
    raw_keys = gate.get("decisions")
    keys: list[Any] = raw_keys if isinstance(raw_keys, list) else []
    new = doc if after is None else after
    raw = new.get("decisions")
    decisions: dict[str, Any] = raw if isinstance(raw, dict) else {}
    required = {d.key for d in wf.decisions if d.required}
    empty = [k for k in keys if k in required and decisions.get(k) in (None, "")]
    if empty:
        out.append(
            diag(
                "SR717",
                f"step {label} completed while {gate.get('id') or 'its gate'} still has no "
                f"value for {', '.join(empty)}",
                pointer=pointer_to("decisions", empty[0]),
                hint=f"ask the user at {gate.get('id') or 'the gate'} and record each: "
                f"`session-resume decide {empty[0]} VALUE`",
            )
        )
    return out


def skip_step(
    doc: dict[str, Any],
    wf: Workflow,
    key: str,
    reason: str,
    now: datetime,
    force: bool = False,
) -> dict[str, Any]:
    """pending or in_progress → skipped with ``skip_reason``. A step the workflow does not
    mark optional is skipped only with ``force``. (``now`` is accepted for symmetry; the
    store stamps ``updated``.)"""
    del now
    new: dict[str, Any] = copy_document(doc)
    step = existing_step(new, wf, key)
    sdef = wf.step(key)
    label = step_label(key, step, sdef)
    status = step.get("status")
    ptr = pointer_to("steps", key, "status")
    if not isinstance(reason, str) or not reason.strip():
        raise refuse("SR710", f"give the reason for skipping step {label} (--reason)", ptr)
    if status not in ("pending", "in_progress"):
        raise refuse(
            "SR710",
            f"step {label} is {status}; only a pending or in-progress step can be skipped",
            ptr,
        )
    if sdef is not None and not sdef.optional and not force:
        raise refuse(
            "SR710",
            f"step {label} is not optional in workflow {wf.id!r}; use `--force` to skip it anyway",
            ptr,
        )
    step.update(status="skipped", sub_step=None, completed=None, skip_reason=reason)
    return new


def set_decision(
    doc: dict[str, Any], wf: Workflow, key: str, value: Any, *, via: str = "decide"
) -> dict[str, Any]:
    """Decision made: ``decisions[key] = value``, checked against the workflow's keys (SR422,
    when it defines any) and enum (SR420). If the workflow keeps a top-level field of the same
    name (apex ``iac_tool``) and the document has it, the field is updated too so the two
    copies cannot disagree. ``via``: ``decide`` or ``transition``, the command a refusal's hint
    names."""
    if not isinstance(key, str) or not key:
        raise refuse("SR710", "the decision key is empty", "/decisions")
    if wf.decisions and key not in {d.key for d in wf.decisions}:
        raise TransitionError([unknown_decision_key(wf, key, value, via)])
    for d in wf.decisions:
        if d.key == key and d.enum is not None and value not in d.enum:
            allowed = ", ".join(repr(v) for v in d.enum)
            raise refuse(
                "SR420",
                f"decision {key} = {value!r} is not allowed by workflow {wf.id!r}; "
                f"allowed: {allowed}",
                pointer_to("decisions", key),
            )
    new: dict[str, Any] = copy_document(doc)
    decisions = new.get("decisions")
    if not isinstance(decisions, dict):
        decisions = {}
        new["decisions"] = decisions
    decisions[key] = value
    for f in wf.fields:
        if f.name == key and key in new:
            new[key] = value
    return new


def unknown_decision_key(wf: Workflow, key: str, value: Any, via: str) -> Diagnostic:
    """SR422: ``key`` is not one of the decision keys ``wf`` defines. The hint names the
    nearest key (difflib) in the command that sets it, or the keys when none is near."""
    # lazy: only a refused key needs the nearest one
    import difflib

    # lazy: only a refused key's hint quotes the value
    import shlex

    keys = [d.key for d in wf.decisions]
    near = difflib.get_close_matches(key, keys, n=1, cutoff=0.6)
    message = (
        f"decision key {key!r} is not defined by workflow {wf.id!r}; its keys: {', '.join(keys)}"
    )
    shown = value if isinstance(value, str) else json_text(value)
    if near:
        message += f"; did you mean {near[0]!r}?"
        if via in ("transition", "approve"):
            hint = f"Pass `--decision {shlex.quote(f'{near[0]}={shown}')}` instead."
        else:
            hint = f"Run `session-resume decide {near[0]} {shlex.quote(shown)}`."
    else:
        hint = (
            f"Use one of the decision keys of workflow {wf.id!r} ({', '.join(keys)}); a "
            "decision outside them goes in the decision log: `session-resume decide --log "
            "--title T --choice C --rationale R`."
        )
    return diag("SR422", message, pointer=pointer_to("decisions", key), hint=hint)


def log_decision(
    doc: dict[str, Any],
    title: str,
    choice: str,
    rationale: str,
    step: str | None = None,
    alternatives: Iterable[str] = (),
    *,
    now: datetime,
    wf: Workflow | None = None,
) -> dict[str, Any]:
    """Append a decision to ``decision_log`` with the next sequential id (``D001``, … max
    existing + 1). ``step``: the step key it was made in (written as an integer when it is
    one, as upstream does)."""
    for what, value in (("title", title), ("choice", choice), ("rationale", rationale)):
        if not isinstance(value, str) or not value.strip():
            raise refuse("SR710", f"the decision's {what} is empty", "/decision_log")
    entry: dict[str, Any] = {
        "id": next_decision_id(doc),
        "title": title,
        "choice": choice,
        "rationale": rationale,
    }
    if step is not None:
        if wf is not None:
            check_key(wf, step)
        elif not STEP_KEY.match(step):
            raise refuse("SR711", f"{step!r} is not a step key", "/decision_log")
        entry["step"] = int(step) if step.isdigit() else step
    alts = [a for a in alternatives]
    if alts:
        entry["alternatives"] = alts
    entry["timestamp"] = format_ts(now)
    new: dict[str, Any] = copy_document(doc)
    if not isinstance(new.get("decision_log"), list):
        new["decision_log"] = []
    new["decision_log"].append(entry)
    return new


def add_finding(doc: dict[str, Any], title: str) -> dict[str, Any]:
    """Challenger finding: add ``title`` to ``open_findings`` (once; adding it again changes
    nothing)."""
    if not isinstance(title, str) or not title.strip():
        raise refuse("SR710", "the finding title is empty", "/open_findings")
    new: dict[str, Any] = copy_document(doc)
    if not isinstance(new.get("open_findings"), list):
        new["open_findings"] = []
    if title not in new["open_findings"]:
        new["open_findings"].append(title)
    return new


def resolve_finding(doc: dict[str, Any], title: str) -> dict[str, Any]:
    """Remove ``title`` from ``open_findings``; refused when it is not open."""
    findings = doc.get("open_findings")
    if not isinstance(findings, list) or title not in findings:
        listed = ", ".join(repr(f) for f in findings or []) if isinstance(findings, list) else ""
        raise refuse(
            "SR710",
            f"no open finding titled {title!r}; open findings: {listed or 'none'}",
            "/open_findings",
        )
    new: dict[str, Any] = copy_document(doc)
    new["open_findings"] = [f for f in new["open_findings"] if f != title]
    return new


@record(frozen=True)
class ReviewAudit:
    """One `review-audit` write (upstream's `review-audit <key>`): the fields given are set
    (complexity, pass counts) or appended (models, skipped pass numbers, skip reasons)."""

    complexity: str | None = None
    passes_planned: int | None = None
    passes_executed: int | None = None
    models: tuple[str, ...] = ()
    skipped: tuple[int, ...] = ()
    skip_reasons: tuple[str, ...] = ()


def review_audit(doc: dict[str, Any], wf: Workflow, key: str, audit: ReviewAudit) -> dict[str, Any]:
    """Review audit recorded: ``review_audit.step_<key>`` (docs/spec.md §4), checked against
    the workflow: the step must be review-audited (apex: 1, 2, 3_5, 4, 5, 6), the complexity
    one of the workflow's ``complexity`` decision values, the counts non-negative, a skipped
    pass number within the passes planned, and no more passes run than planned plus skipped
    ones accounted for."""
    new: dict[str, Any] = copy_document(doc)
    existing_step(new, wf, key)  # refuses a step unknown to the state and the workflow
    sdef = wf.step(key)
    ptr = pointer_to("review_audit", f"step_{key}")
    if not wf.free_steps and (sdef is None or not sdef.review_audited):
        audited = ", ".join(s.key for s in wf.steps if s.review_audited) or "none"
        raise refuse(
            "SR710",
            f"step {key} has no challenger review in workflow {wf.id!r} (review-audited "
            f"steps: {audited}); nothing was written",
            ptr,
        )
    if audit.complexity is not None:
        allowed = next((d.enum for d in wf.decisions if d.key == "complexity"), None)
        if allowed is not None and audit.complexity not in allowed:
            raise refuse(
                "SR420",
                f"complexity {audit.complexity!r} is not allowed by workflow {wf.id!r}; "
                f"allowed: {', '.join(repr(v) for v in allowed if v)}",
                ptr + "/complexity",
            )
    for name in ("passes_planned", "passes_executed"):
        value = getattr(audit, name)
        if value is not None and value < 0:
            raise refuse("SR710", f"{name} must be 0 or more, not {value}", f"{ptr}/{name}")
    audits = new.get("review_audit")
    if not isinstance(audits, dict):
        audits = {}
        new["review_audit"] = audits
    entry = audits.get(f"step_{key}")
    if not isinstance(entry, dict):
        entry = {
            "complexity": "",
            "passes_planned": 0,
            "passes_executed": 0,
            "skipped": [],
            "skip_reasons": [],
            "models_used": [],
        }
        audits[f"step_{key}"] = entry
    if audit.complexity is not None:
        entry["complexity"] = audit.complexity
    for name in ("passes_planned", "passes_executed"):
        if getattr(audit, name) is not None:
            entry[name] = getattr(audit, name)
    for name, values in (
        ("models_used", audit.models),
        ("skipped", audit.skipped),
        ("skip_reasons", audit.skip_reasons),
    ):
        old = entry.get(name)
        target: list[Any] = old if isinstance(old, list) else []
        entry[name] = [*target, *(v for v in values if v not in target)]
    planned = int_or_none(entry.get("passes_planned"))
    bad = [
        n
        for n in entry["skipped"]
        if not isinstance(n, int) or n < 1 or (planned is not None and n > planned)
    ]
    if bad:
        raise refuse(
            "SR710",
            f"skipped pass {bad[0]} is not a pass of the {planned} planned (1..{planned})",
            ptr + "/skipped",
        )
    executed = int_or_none(entry.get("passes_executed"))
    if planned is not None and executed is not None and executed + len(entry["skipped"]) > planned:
        raise refuse(
            "SR710",
            f"{executed} passes run and {len(entry['skipped'])} skipped exceed the "
            f"{planned} planned; raise --passes-planned or correct the counts",
            ptr,
        )
    if entry["skipped"] and len(entry["skip_reasons"]) < 1:
        raise refuse(
            "SR710",
            'skipped passes need a reason (`--skip-reason TEXT`, e.g. "pass 1: 0 must_fix")',
            ptr + "/skip_reasons",
        )
    return new


def approve_gate(
    doc: dict[str, Any],
    wf: Workflow,
    key: str,
    decisions: Mapping[str, Any],
    now: datetime,
) -> dict[str, Any]:
    """The user approved the gate of complete step ``key``: each decision the user gave is
    recorded (as `decide` would) and an approval entry is appended to ``decision_log``
    (docs/spec.md §4.1). Refused (SR710) for a step without a gate, one not complete, or a
    gate already approved."""
    new: dict[str, Any] = copy_document(doc)
    step = existing_step(new, wf, key)
    sdef = wf.step(key)
    label = step_label(key, step, sdef)
    gate = sdef.gate if sdef is not None and isinstance(sdef.gate, dict) else None
    ptr = pointer_to("steps", key, "status")
    if gate is None or not isinstance(gate.get("id"), str):
        raise refuse(
            "SR710", f"step {label} has no gate in workflow {wf.id!r}: nothing to approve", ptr
        )
    status = step.get("status")
    if status != "complete":
        raise refuse(
            "SR710",
            f"step {label} is {status}: its gate is approved once the step is complete "
            f"(`session-resume complete {key}` first)",
            ptr,
        )
    done = gate_approval(new, key)
    if done is not None:
        raise refuse(
            "SR710",
            f"{gate['id']} of step {label} is already approved ({done.get('id')}); nothing to do",
            "/decision_log",
        )
    for k, v in decisions.items():
        new = set_decision(new, wf, k, v, via="approve")
    log = new.get("decision_log")
    if not isinstance(log, list):
        log = new["decision_log"] = []
    log.append(approval_entry(new, gate["id"], key, decisions, now))
    return new


def transition(
    doc: dict[str, Any],
    wf: Workflow,
    complete_key: str,
    start_key: str,
    decisions: Mapping[str, Any],
    now: datetime,
    force: bool = False,
) -> dict[str, Any]:
    """An orchestrator gate in one document: complete ``complete_key``, record ``decisions``,
    start ``start_key`` (``force`` applies to the start only)."""
    new = complete_step(doc, wf, complete_key, now)
    for k, v in decisions.items():
        new = set_decision(new, wf, k, v, via="transition")
    sdef = wf.step(complete_key)
    gate = sdef.gate if sdef is not None and isinstance(sdef.gate, dict) else None
    if (
        gate is not None
        and isinstance(gate.get("id"), str)
        and not gate_approval(new, complete_key)
    ):
        # passing a gate is its approval (docs/spec.md §4.1)
        new.setdefault("decision_log", [])
        if not isinstance(new["decision_log"], list):
            new["decision_log"] = []
        new["decision_log"].append(approval_entry(new, gate["id"], complete_key, decisions, now))
    return start_step(new, wf, start_key, now, force=force)
