"""The ``00-handoff.md`` companion of a state, rendered from ``templates/handoff.md.j2``.

Pure: state and workflow in, text out; the clock is injected. Writing the file is the
command's job (:mod:`session_resume.cli.commands.render`). Every value goes through an
escaping filter of :mod:`session_resume.rendering.environment`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from session_resume.core.briefing import STATE_FILES
from session_resume.core.handoff_rules import MAX_LINES, SECTIONS
from session_resume.core.jsonread import as_list
from session_resume.core.resume_decision import Snapshot, decide
from session_resume.core.rules import ordered_step_keys
from session_resume.core.timeutil import format_ts, parse_ts
from session_resume.core.workflow import StepDef, Workflow
from session_resume.records import record
from session_resume.rendering.environment import Escaped, md_inline, render_template

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Cut", "handoff_context", "render_handoff"]


@record
class Cut:
    """A list shown in a handoff section: the items kept and how many were cut."""

    items: list[Any]
    more: int = 0


def _fit(lists: Sequence[Sequence[Any]], budget: int) -> list[Cut]:
    """Cut the lists so that together they take at most ``budget`` lines. An empty list takes
    one line ("None"); a cut list shows its first items and a "… and N more" line. The longest
    list gives up a line first (the later one on a tie), never below two lines."""
    caps = [max(1, len(x)) for x in lists]
    while sum(caps) > budget:
        i = max(range(len(caps)), key=lambda j: (caps[j], j))
        if caps[i] <= 2:
            raise ValueError("the handoff template leaves no room for its lists")
        caps[i] -= 1
    out = []
    for items, cap in zip(lists, caps, strict=True):
        if len(items) <= cap:
            out.append(Cut(list(items)))
        else:
            out.append(Cut(list(items[: cap - 1]), len(items) - (cap - 1)))
    return out


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _paths(values: Iterable[object], limit: int | None = None) -> Cut:
    # dict.fromkeys: unique in first-seen order in one pass (a list membership test made
    # 40,000 artifacts quadratic)
    seen = list(dict.fromkeys(v for v in values if isinstance(v, str)))
    if limit is None or len(seen) <= limit:
        return Cut([md_inline(p) for p in seen])
    return Cut([md_inline(p) for p in seen[:limit]], len(seen) - limit)


def _decision_value(value: object) -> Escaped | None:
    if value is None or value == "":
        return None
    return md_inline(value)


def handoff_context(
    doc: dict[str, Any], workflow: Workflow, *, now: datetime, decision: dict[str, Any]
) -> dict[str, Any]:
    """Everything the handoff template shows, escaped, before the lists are cut."""

    steps_doc = doc.get("steps") if isinstance(doc.get("steps"), dict) else {}
    assert isinstance(steps_doc, dict)
    order = ordered_step_keys(steps_doc, workflow)
    steps = []
    last_complete = "0"
    for key in order:
        st = steps_doc[key] if isinstance(steps_doc[key], dict) else {}
        status = _str(st.get("status"))
        if status == "complete":
            last_complete = key
        steps.append(
            {
                "key": md_inline(key),
                "name": md_inline(_str(st.get("name"))),
                "status": status,
                "sub_step": md_inline(st["sub_step"]) if st.get("sub_step") is not None else None,
                "paths": _paths(as_list(st.get("artifacts")), limit=3),
                "skip_reason": md_inline(st["skip_reason"])
                if st.get("skip_reason") is not None
                else None,
            }
        )

    decisions_doc = doc.get("decisions") if isinstance(doc.get("decisions"), dict) else {}
    assert isinstance(decisions_doc, dict)
    declared = [d.key for d in workflow.decisions if d.key in decisions_doc]
    keys = declared + [k for k in decisions_doc if k not in declared]
    decisions: list[dict[str, Any]] = [
        {"kind": "key", "key": md_inline(k), "value": _decision_value(decisions_doc[k])}
        for k in keys
    ]
    log = [e for e in as_list(doc.get("decision_log")) if isinstance(e, dict)]
    for entry in reversed(log):  # the newest first: they matter most to the next step
        decisions.append(
            {
                "kind": "log",
                "id": md_inline(entry.get("id", "")),
                "title": md_inline(entry.get("title", "")),
                "choice": md_inline(entry.get("choice", "")),
            }
        )

    findings = [md_inline(f) for f in as_list(doc.get("open_findings"))]

    artifacts: list[object] = []
    for key in order:
        st = steps_doc[key] if isinstance(steps_doc[key], dict) else {}
        artifacts.extend(as_list(st.get("artifacts")))

    state_updated = parse_ts(doc.get("updated"))
    shown = now if state_updated is None or now >= state_updated else state_updated
    header = {
        "project": md_inline(_str(doc.get("project"))),
        "step": md_inline(last_complete),
        "updated": md_inline(format_ts(shown)),
        "workflow": md_inline(workflow.id),
        # the workflow's own header values (docs/spec.md §3.1), else its id
        "values": [
            {
                "label": md_inline(v.label),
                "value": _decision_value(
                    doc.get(v.value) or (decisions_doc or {}).get(v.value) or None
                ),
                "missing": md_inline(v.missing),
            }
            for v in workflow.handoff_header
        ],
    }

    target = decision.get("step")
    sdef = workflow.step(target) if isinstance(target, str) else None
    next_ctx = _next_context(decision, target, sdef, len(findings))
    facts = _skill_facts(doc, decisions_doc, workflow, sdef, target)
    return {
        "header": header,
        "steps": steps,
        "decisions": decisions,
        "findings": findings,
        "next": next_ctx,
        "facts": facts,
        "artifacts": _paths(artifacts).items,
    }


def _next_context(
    decision: dict[str, Any], target: object, sdef: StepDef | None, findings: int
) -> dict[str, Any]:
    """The handoff's "next" part: what the resume decision says to do, escaped."""
    skip = _paths(decision.get("skip_files") or [], limit=4)
    # what the briefing has the step read first (its `load`): never the state file, whose
    # content the resume answer carries (docs/spec.md §10)
    load = (decision.get("briefing") or {}).get("load") or []
    startup = _paths([f["path"] for f in load if isinstance(f, dict)], limit=None)
    return {
        "action": decision.get("action", ""),
        "action_text": md_inline(decision.get("action", "")),
        "step": md_inline(target) if target else None,
        "name": md_inline(decision.get("step_name") or (sdef.name if sdef else "")),
        "sub_step": md_inline(decision["sub_step"])
        if decision.get("sub_step") is not None
        else None,
        "next_checkpoint": md_inline(decision["next_checkpoint"])
        if decision.get("next_checkpoint") is not None
        else None,
        "skip": skip,
        "startup": startup,
        "max_files": sdef.budget.max_startup_files if sdef and sdef.budget else None,
        "findings": findings,
    }


def _skill_facts(
    doc: dict[str, Any],
    decisions: dict[str, Any],
    wf: Workflow,
    sdef: StepDef | None,
    target: object,
) -> list[dict[str, Any]]:
    facts: list[dict[str, Any]] = [
        {"label": md_inline("Workflow"), "value": md_inline(f"{wf.id} (version {wf.version})")}
    ]
    declared = {d.key for d in wf.decisions}
    tier = _recorded_tier(doc, wf)
    for fact in wf.handoff_facts:
        name = fact.value
        if name in doc or name in decisions or name in declared:
            value = doc.get(name) or decisions.get(name)
            if not value and tier is not None and name == tier[0]:
                # the decision is unset, but a review audit recorded the tier it ran with
                value = f"{tier[1]} (recorded by the review audit of step {tier[2]})"
            facts.append(
                {"label": md_inline(fact.label), "value": md_inline(value or fact.missing)}
            )
    if sdef is None:
        if target:
            facts.append(
                {"label": md_inline("Next step"), "value": md_inline(f"{target} (free step)")}
            )
        return facts
    facts.append(
        {"label": md_inline(f"Step {sdef.key} agent"), "value": md_inline(_agent(doc, wf, sdef))}
    )
    if sdef.budget is not None:
        # the budget's state file is the resume answer's briefing: never a file to open
        inputs = [f for f in sdef.budget.startup_files if f not in STATE_FILES]
        facts.append(
            {
                "label": md_inline(f"Step {sdef.key} startup inputs"),
                "value": md_inline(
                    ", ".join(inputs) or "none (the resume answer carries the state)"
                ),
            }
        )
    if sdef.checkpoints:
        facts.append(
            {
                "label": md_inline(f"Step {sdef.key} checkpoints"),
                "value": md_inline(" → ".join(sdef.checkpoint_ids)),
            }
        )
    if sdef.gate:
        gate = sdef.gate
        text = f"{gate.get('id', '')} ({gate.get('kind', '')}"
        text += ", session break recommended)" if gate.get("session_break") else ")"
        facts.append({"label": md_inline(f"Step {sdef.key} gate"), "value": md_inline(text)})
    if sdef.review_audited:
        audits = doc.get("review_audit")
        entry = audits.get(f"step_{sdef.key}") if isinstance(audits, dict) else None
        if isinstance(entry, dict):
            models = ", ".join(str(m) for m in entry.get("models_used") or []) or "none named"
            skipped = entry.get("skipped") or []
            text = (
                f"review_audit.step_{sdef.key}: {entry.get('passes_executed')} of "
                f"{entry.get('passes_planned')} passes run ({entry.get('complexity') or 'no tier'}"
                f"; models {models}"
                + (f"; skipped passes {', '.join(str(n) for n in skipped)}" if skipped else "")
                + ")"
            )
        else:
            text = (
                f"not recorded yet: after the challenger review run `session-resume "
                f"review-audit {sdef.key} --complexity TIER --passes-planned N "
                f"--passes-executed N --model MODEL` (review_audit.step_{sdef.key})"
            )
        facts.append({"label": md_inline(f"Step {sdef.key} review"), "value": md_inline(text)})
    return facts


def _recorded_tier(doc: dict[str, Any], wf: Workflow) -> tuple[str, str, str] | None:
    """(the workflow's tier decision, the tier, the step) of the latest review audit, in
    workflow order, that records a tier; None when none does or the workflow has no tiers."""
    review = wf.raw.get("review")
    decision = review.get("tier_decision") if isinstance(review, dict) else None
    audits = doc.get("review_audit")
    if not isinstance(decision, str) or not isinstance(audits, dict):
        return None
    steps = doc.get("steps") if isinstance(doc.get("steps"), dict) else {}
    for key in reversed(ordered_step_keys(steps or {}, wf)):
        entry = audits.get(f"step_{key}")
        tier = entry.get("complexity") if isinstance(entry, dict) else None
        if isinstance(tier, str) and tier:
            return decision, tier, key
    return None


def _agent(doc: dict[str, Any], wf: Workflow, sdef: StepDef) -> str:
    """The agent that runs the step: the one the state records; else, when the workflow's
    agents are one per value of a decision (`iac_tool`: the Bicep and the Terraform agent),
    the one for the value decided, or the one naming no value; else the workflow's first
    (the others are older ids it still accepts: apex step 3's `03-Design`)."""
    steps = doc.get("steps") if isinstance(doc.get("steps"), dict) else {}
    record = (steps or {}).get(sdef.key)
    agent = record.get("agent") if isinstance(record, dict) else None
    if isinstance(agent, str) and agent in sdef.agents:
        return agent
    decisions = doc.get("decisions") if isinstance(doc.get("decisions"), dict) else {}
    for d in wf.decisions:
        values = [v for v in d.enum or () if isinstance(v, str) and v]
        named = {a: [v for v in values if v in a] for a in sdef.agents}
        if sum(1 for vs in named.values() if vs) < 2:
            continue  # not one agent per value of this decision
        chosen = doc.get(d.key) or (decisions or {}).get(d.key)
        if isinstance(chosen, str) and chosen:
            by_value = [a for a, vs in named.items() if chosen in vs]
            if len(by_value) == 1:
                return by_value[0]
        general = [a for a, vs in named.items() if not vs]
        if len(general) == 1:
            return general[0]
        return " or ".join(sdef.agents) + f" (by {d.key}, not decided yet)"
    return sdef.agents[0]


def render_handoff(
    doc: dict[str, Any],
    workflow: Workflow,
    *,
    now: datetime,
    decision: dict[str, Any] | None = None,
) -> str:
    """The ``00-handoff.md`` of a (schema-valid) v3.0 state: the header, the six sections in
    order, at most :data:`MAX_LINES` lines.

    ``Updated:`` is ``now`` (the render time), or the state's own ``updated`` if that is
    later (clock skew), so a freshly rendered handoff is never older than its state.
    ``decision``: the resume decision to describe; by default :func:`decide.decide` for the
    orchestrator on this state alone (no lease: the handoff describes the state).
    """
    if decision is None:
        decision = decide(Snapshot(state_status="ok", document=doc), None, now, workflow)
    ctx = handoff_context(doc, workflow, now=now, decision=decision)
    lists = [ctx["steps"], ctx["decisions"], ctx["findings"], ctx["facts"], ctx["artifacts"]]
    empty = _handoff_text(ctx, [Cut([]) for _ in lists])
    budget = MAX_LINES - len(empty.splitlines()) + len(lists)
    text = _handoff_text(ctx, _fit(lists, budget))
    lines = text.splitlines()
    if len(lines) > MAX_LINES:  # a template change broke the budget: never write it
        raise ValueError(f"rendered handoff has {len(lines)} lines (max {MAX_LINES})")
    return text


def _handoff_text(ctx: dict[str, Any], cuts: list[Cut]) -> str:
    steps, decisions, findings, facts, artifacts = cuts
    return render_template(
        "handoff.md.j2",
        header=ctx["header"],
        next=ctx["next"],
        steps=steps,
        decisions=decisions,
        findings=findings,
        facts=facts,
        artifacts=artifacts,
        sections=[Escaped(s) for s in SECTIONS],
    )
