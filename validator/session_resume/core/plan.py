"""The plan of a resume answer (docs/spec.md §10.2), pure: for the step the decision is about,
every remaining checkpoint with its "after completing" text and the write that records it,
and what completes the step (review audit, open findings, the `complete` write, the gate's
decisions, the next step with its start and skip commands); and the ``commands`` list, each
``{run, when}``, which, followed in order and literally, never records progress before its
work.

Commands are written with the placeholders the service fills in (docs/spec.md §10.3): ``DIR``
(the session directory) and ``PROJECT``; every writer gets the session's name (``--project``
or ``--session-dir``) and ``--session ID`` from the service, which knows them.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence

from session_resume.core.briefing import session_path
from session_resume.core.jsonread import as_dict, as_list
from session_resume.core.rules import ordered_step_keys
from session_resume.core.workflow import Checkpoint, StepDef, Workflow
from session_resume.core.write_checks import gate_approval, one_form

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


NOW = "now"
CONSENT = "only with the user's consent"
# Writers: the service adds the session's name and `--session ID` to these.
WRITERS = (
    "start",
    "checkpoint",
    "complete",
    "skip",
    "session",
    "decide",
    "review-audit",
    "transition",
    "finding",
    "approve",
)
# Actions whose answer is a plan for the step (the agent works on it now).
WORKING = ("start", "restart_step", "resume_from_checkpoint", "continue_step")
SESSION_START = "session-resume session start"
# An alternative's `when` once the commands begin with the session's start (docs/spec.md §10.3)
AFTER_SESSION_START = ", after the first command (`session start`)"
SESSION_END = "session-resume session end"
FINDINGS_RULE = (
    "add each (`finding add TITLE`); fix each, then `finding resolve TITLE`; one "
    "only the user can settle stays open for the gate"
)
GATE_RULE = (
    "ask the user's approval once, showing the deliverables and open findings; then record it "
    "with `approve` and the decisions the user gave"
)
# `when` of the approval's write (docs/spec.md §10.2)
APPROVED_WHEN = "after the user approved"
# A stop before the step is complete (docs/spec.md §7): the session ends paused.
PAUSE = "session-resume session end --reason paused"
PAUSE_WHEN = (
    "only if you must stop before the step is complete: after the write of the last checkpoint "
    "whose work is done, instead of the rest (the next chat continues from there)"
)
ARTIFACT_RULE = (
    "a file a checkpoint's work wrote that its line does not name: add `--artifact PATH` to it"
)


def cmd(run: str, when: str = NOW) -> dict[str, str]:
    return {"run": run, "when": when}


def after(text: str | None, fallback: str) -> str:
    """``when`` of a write that records ``text``'s work: "after <the work>"."""
    t = (text or "").strip().rstrip(".") or fallback
    word = t.split(maxsplit=1)[0].rstrip(",:;") if t.split() else ""
    # a capitalised first word is lowered; an acronym (QA, IaC) or a file name is kept
    if re.fullmatch(r"[A-Z][a-z]+(?:-[a-z]+)*|A", word):
        t = t[0].lower() + t[1:]
    return f"after {t}"


def remaining(sdef: StepDef | None, action: str, sub: str | None) -> list[Checkpoint]:
    """The checkpoints of the step still to reach, in order."""
    if sdef is None:
        return []
    cps = list(sdef.checkpoints)
    if action == "resume_from_checkpoint" and sub is not None:
        ids = [c.id for c in cps]
        return cps[ids.index(sub) + 1 :] if sub in ids else []
    return cps


def _review(doc: Mapping[str, Any], key: str, sdef: StepDef | None, wf: Workflow) -> Any:
    """The review audit the step requires (None: none): the tier from the workflow's
    ``review`` definition and the decision it names, the passes it asks for, what is
    recorded, and the write."""
    if sdef is None or not sdef.review_audited:
        return None
    review = as_dict(wf.raw.get("review"))
    decision = review.get("tier_decision")
    decisions = as_dict(doc.get("decisions"))
    value = decisions.get(decision) if isinstance(decision, str) else None
    passes_by = as_dict(review.get("passes"))
    default = review.get("default_tier")
    tier = value if isinstance(value, str) and value in passes_by else default
    passes = passes_by.get(tier) if isinstance(tier, str) else None
    audits = as_dict(doc.get("review_audit"))
    recorded = audits.get(f"step_{key}")
    write = f"session-resume review-audit {key}"
    if isinstance(tier, str) and isinstance(passes, int):
        write += f" --complexity {tier} --passes-planned {passes} --passes-executed {passes}"
    return {
        "tier": tier if isinstance(tier, str) else None,
        "tier_decision": decision if isinstance(decision, str) else None,
        "tier_decided": isinstance(value, str) and value in passes_by,
        "tier_gate": _deciding_gate(decision, wf, key),
        "passes": passes if isinstance(passes, int) else None,
        "recorded": recorded if isinstance(recorded, dict) else None,
        "before": sdef.review_checkpoint,
        "write": write,
    }


def _deciding_gate(decision: Any, wf: Workflow, key: str) -> str | None:
    """The gate whose decisions include ``decision`` (the review tier's): the first from step
    ``key`` on in workflow order; None when none is (one before it has passed undecided: no
    gate is still to decide it)."""
    steps = list(wf.steps)
    at = next((i for i, s in enumerate(steps) if s.key == key), 0)
    for s in steps[at:]:
        gate = s.gate if isinstance(s.gate, dict) else {}
        if decision in (gate.get("decisions") or []) and isinstance(gate.get("id"), str):
            return str(gate["id"])
    return None


def _open_gate(doc: Mapping[str, Any], key: str, wf: Workflow, action: str) -> Any:
    """The gate still open before step ``key`` (docs/spec.md §10.2): for a step still to start
    (``start`` of a pending step: no `transition` handed it over), the gate of the last
    complete step before it in workflow order, skipped steps passed over; else None."""
    steps = as_dict(doc.get("steps"))
    if action != "start" or as_dict(steps.get(key)).get("status") != "pending":
        return None
    order = ordered_step_keys(dict(steps), wf)
    if key not in order:
        return None
    for k in reversed(order[: order.index(key)]):
        status = as_dict(steps.get(k)).get("status")
        if status == "skipped":
            continue
        gate = _gate(doc, wf.step(k), wf, k) if status == "complete" else None
        return None if gate is None or gate["approved"] else {"step": k, **gate}
    return None


def gate_after(doc: Mapping[str, Any], key: str, wf: Workflow) -> Any:
    """The gate of complete step ``key`` while it is still open: the next step in workflow
    order that is neither complete nor skipped is still pending (none started it, no
    `transition` handed over); else None."""
    steps = as_dict(doc.get("steps"))
    order = ordered_step_keys(dict(steps), wf)
    if as_dict(steps.get(key)).get("status") != "complete" or key not in order:
        return None
    later = [
        k
        for k in order[order.index(key) + 1 :]
        if as_dict(steps.get(k)).get("status") not in ("complete", "skipped")
    ]
    if not later or as_dict(steps.get(later[0])).get("status") != "pending":
        return None
    gate = _gate(doc, wf.step(key), wf, key)
    return None if gate is None or gate["approved"] else gate


def _gate(doc: Mapping[str, Any], sdef: StepDef | None, wf: Workflow, key: str) -> Any:
    """Step ``key``'s gate: its decisions, whether the user's approval is recorded
    (``approved``: the decision log entry's id, docs/spec.md §4.1) and the write recording it."""
    if sdef is None or not isinstance(sdef.gate, dict):
        return None
    entry = gate_approval(doc, key)
    decisions = as_dict(doc.get("decisions"))
    keys = sdef.gate.get("decisions")
    out = []
    for k in keys if isinstance(keys, list) else []:
        d = next((x for x in wf.decisions if x.key == k), None)
        allowed = [v for v in d.enum if v != ""] if d is not None and d.enum else None
        out.append(
            {
                "key": k,
                "allowed": allowed,
                "required": bool(d.required) if d is not None else False,
                "value": decisions.get(k),
            }
        )
    return {
        "id": sdef.gate.get("id"),
        "kind": sdef.gate.get("kind"),
        "session_break": bool(sdef.gate.get("session_break")),
        "decisions": out,
        "rule": GATE_RULE,
        "approved": entry.get("id") if entry is not None else None,
        "approve": f"session-resume approve {key}",
    }


def next_step(doc: Mapping[str, Any], key: str, wf: Workflow) -> Any:
    """The step after ``key`` still to do (None: none), with its start and skip commands."""
    return _next(doc, key, wf)


def _next(doc: Mapping[str, Any], key: str, wf: Workflow) -> Any:
    steps = as_dict(doc.get("steps"))
    order = ordered_step_keys(dict(steps), wf)
    for k in wf.step_keys:
        if k not in order:
            order.append(k)
    if key not in order:
        return None
    for k in order[order.index(key) + 1 :]:
        st = as_dict(steps.get(k))
        if st.get("status") in ("complete", "skipped"):
            continue
        sdef = wf.step(k)
        optional = bool(sdef.optional) if sdef is not None else False
        return {
            "key": k,
            "name": sdef.name if sdef is not None else st.get("name"),
            "optional": optional,
            "start": f"session-resume start {k}",
            "skip": f'session-resume skip {k} --reason "optional step not needed"'
            if optional
            else None,
            "transition": f"session-resume transition --complete {key} --start {k}",
        }
    return None


def _checkpoint_writes(
    key: str,
    sdef: StepDef | None,
    st: Mapping[str, Any],
    cps: Sequence[Checkpoint],
    session_rel: str | None,
) -> list[dict[str, Any]]:
    """Each remaining checkpoint with its write; the write records (``--artifact``) each of the
    step's deliverables its state does not list yet, at the first remaining checkpoint that is
    the one writing it or a later one (docs/spec.md §10.2)."""
    listed = {one_form(p, session_rel) for p in as_list(st.get("artifacts")) if isinstance(p, str)}
    ids = sdef.checkpoint_ids if sdef is not None else []
    todo = [
        d
        for d in (sdef.deliverables if sdef is not None else ())
        if session_path(session_rel, d.file) not in listed
    ]
    out = []
    for c in cps:
        now = [d for d in todo if ids.index(d.written_at) <= ids.index(c.id)]
        todo = [d for d in todo if d not in now]
        args = "".join(f" --artifact {shlex.quote(session_path(session_rel, d.file))}" for d in now)
        out.append(
            {"id": c.id, "after": c.after, "write": f"session-resume checkpoint {key} {c.id}{args}"}
        )
    return out


def build(
    doc: Mapping[str, Any],
    key: str,
    wf: Workflow,
    *,
    action: str,
    sub: str | None,
    session_rel: str | None = None,
) -> dict[str, Any]:
    """The plan for step ``key`` of the usable state ``doc`` (a working action). A
    checkpoint's write records the workflow's deliverables its work first writes."""
    sdef = wf.step(key)
    steps = as_dict(doc.get("steps"))
    st = as_dict(steps.get(key))
    findings = as_list(doc.get("open_findings"))
    gate = _gate(doc, sdef, wf, key)
    nxt = _next(doc, key, wf)
    if nxt is not None:
        # one owner for the next step (docs/spec.md §10.2): after a session break the next
        # chat, under its own session; else this chat
        nxt["by"] = "next_chat" if gate is not None and gate["session_break"] else "this_chat"
    return {
        "step": key,
        "name": sdef.name if sdef is not None else st.get("name"),
        "optional": bool(sdef.optional) if sdef is not None else False,
        "open_gate": _open_gate(doc, key, wf, action),
        "checkpoints": _checkpoint_writes(key, sdef, st, remaining(sdef, action, sub), session_rel),
        "artifacts_rule": ARTIFACT_RULE,
        "review_audit": _review(doc, key, sdef, wf),
        "open_findings": {"count": len(findings), "blocks_complete": False, "rule": FINDINGS_RULE},
        "complete": f"session-resume complete {key}",
        "gate": gate,
        "next_step": nxt,
    }


def commands(plan: Mapping[str, Any], action: str, pending: bool = False) -> list[dict[str, str]]:
    """The plan as the ordered command list: the step's start (when it is to start), each
    checkpoint's write after its work, the review audit after its passes, ``complete``
    after the step's work, and ``session end`` when the session stops. ``pending``: the
    step has not started (an optional one starts only once the user chose to run it; one a
    `transition` started was chosen)."""
    key = plan["step"]
    out: list[dict[str, str]] = []
    if action in ("start", "restart_step"):
        gate = plan.get("open_gate")
        out += gate_decisions(gate, gate["step"]) if gate else []
        out += [cmd(gate["approve"], approved_when(gate))] if gate else []
        out.append(
            cmd(f"session-resume start {key}", _start_when(gate, plan["optional"] and pending))
        )
    cps: Sequence[Mapping[str, Any]] = plan["checkpoints"]
    audit = plan["review_audit"]
    audit_cmd = None
    if audit is not None and audit["recorded"] is None:
        passes = audit["passes"]
        done = (
            f"after {passes} challenger review pass{'es' if passes != 1 else ''}"
            if passes
            else "after the challenger review has run"
        )
        audit_cmd = cmd(audit["write"], done + _tier_words(audit))
    # The audit goes just before the checkpoint whose work includes the review; first when
    # that checkpoint is already recorded; last (before `complete`) when the workflow names none.
    ids = [c["id"] for c in cps]
    before = audit["before"] if audit is not None else None
    at = ids.index(before) if before in ids else (0 if before is not None else len(ids))
    for i, c in enumerate(cps):
        if i == at and audit_cmd is not None:
            out.append(audit_cmd)
        out.append(cmd(c["write"], after(c["after"], f"the work of checkpoint {c['id']}")))
    if at == len(ids) and audit_cmd is not None:
        out.append(audit_cmd)
    out += gate_decisions(plan.get("gate"), key)
    last = cps[-1]["id"] if cps else None
    out.append(
        cmd(
            plan["complete"],
            f"after checkpoint {last}" if last else "after the step's remaining work",
        )
    )
    gate = plan.get("gate")
    if gate is not None and not gate.get("approved"):
        out.append(cmd(gate["approve"], approved_when(gate)))
    out.append(cmd(SESSION_END, end_when(gate, plan.get("next_step"))))
    return out


def approved_when(gate: Mapping[str, Any]) -> str:
    """``when`` of a gate's approval write: once the user approved it (docs/spec.md §10.2)."""
    return (
        f"{APPROVED_WHEN} {gate['id']} (ask once; add `--decision KEY=VALUE` for each decision "
        "the user gave)"
    )


def end_when(gate: Mapping[str, Any] | None, nxt: Mapping[str, Any] | None = None) -> str:
    """``when`` of ``session end``: when the agent stops, or, at a gate that ends the chat
    (``session_break``), right after the gate, where an optional next step's skip the user
    chooses is recorded (review 8: whose chat records it was unclear)."""
    if gate and gate.get("session_break"):
        skip = (
            f" (and the skip of {nxt['key']} if the user chose it)"
            if nxt and nxt.get("optional")
            else ""
        )
        then = (
            f"; the next chat starts step {nxt['key']} under its own session, from its own `resume`"
            if nxt
            else ""
        )
        return f"after the approval of {gate['id']} is recorded{skip}: this chat ends here{then}"
    return "when you stop"


def gate_decisions(gate: Mapping[str, Any] | None, key: str) -> list[dict[str, str]]:
    """The writes of the decisions of step ``key``'s gate that are required and still empty
    (else `complete` warns, SR717, or the next step starts without them): each only with the
    user's choice, which replaces VALUE."""
    if not gate:
        return []
    out = []
    for d in _empty_required(gate):
        allowed = f" (one of: {', '.join(d['allowed'])})" if d["allowed"] else ""
        out.append(
            cmd(
                f"session-resume decide {d['key']} VALUE",
                f"only with the user's choice of {d['key']} at {gate['id']} of step "
                f"{key}{allowed}, which replaces VALUE",
            )
        )
    return out


def _empty_required(gate: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The gate's decisions the workflow requires and the state leaves empty."""
    return [d for d in gate["decisions"] if d["required"] and d["value"] in (None, "")]


def _tier_words(audit: Mapping[str, Any]) -> str:
    """What the review audit's `when` adds while the tier is not decided: the tier printed
    is the default, to use as printed (docs/spec.md §10.3)."""
    if audit["tier_decided"]:
        return ""
    until = (
        f"{audit['tier_gate']} decides {audit['tier_decision']}"
        if audit["tier_gate"]
        else f"{audit['tier_decision']} is decided"
    )
    return f" (tier {audit['tier']} until {until}: use it as printed)"


def _start_when(gate: Mapping[str, Any] | None, optional: bool = False) -> str:
    """``when`` of the step's start: now, or after the gate still open before it; for an
    optional step, once the user chose to run it rather than skip it."""
    chose = "the user chose to run this optional step rather than skip it (ask once)"
    if gate is None:
        return f"only if {chose}" if optional else NOW
    when = f"after the approval of {gate['id']} of step {gate['step']} is recorded (above)"
    return f"{when}, and {chose}" if optional else when


def alternatives(plan: Mapping[str, Any], action: str) -> list[dict[str, str]]:
    """What may be run *instead* of the commands: skipping an optional step not yet worked
    on; for a step being worked on, the pause (docs/spec.md §7)."""
    pause = [cmd(PAUSE, PAUSE_WHEN)] if plan["checkpoints"] else []
    if plan["optional"] and action in ("start", "restart_step"):
        reason = '"optional step not needed"'
        return [
            cmd(
                f"session-resume skip {plan['step']} --reason {reason}",
                "only if the user decides to skip this optional step: instead of its start and its "
                "work",
            ),
            *pause,
        ]
    return pause
