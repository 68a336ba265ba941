"""The resume answer as text (``session-resume resume`` without ``--format json``, and what a
host's session-start hook injects): the same content as the JSON (schema/decision/2.json)
in the order an agent acts on it. One function, :func:`plan_text`, renders it; control
characters in values from the session's files are escaped by the caller
(``reporters.text.clean_tree``)."""

from __future__ import annotations

import json

TYPE_CHECKING = False  # typing is imported for the type checker only (cold start)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = ["plan_text"]


def _codes(label: str, entries: Any) -> list[str]:
    out = []
    for e in entries or []:
        if isinstance(e, dict):
            out.append(f"{label} {e.get('code')}: {e.get('message')}. To do: {e.get('hint')}")
        else:  # a decision of version 1 (bare codes)
            out.append(f"{label} {e}")
    return out


def _state(b: Mapping[str, Any]) -> list[str]:
    lines = ["state (never open the raw state file):"]
    decisions = b.get("decisions") or {}
    lines.append(
        "  decisions: "
        + (
            ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in decisions.items())
            or "none"
        )
    )
    findings = b.get("open_findings") or []
    lines.append(f"  open findings: {len(findings)}")
    lines += [f"    - {f}" for f in findings]
    for e in b.get("decision_log") or []:
        lines.append(f"  decision {e.get('id')}: {e.get('title')} -> {e.get('choice')}")
    if b.get("review_audit") is not None:
        lines.append(f"  review audit: {json.dumps(b['review_audit'], sort_keys=True)}")
    for a in b.get("artifacts") or []:
        lines.append(f"  artifact: {a['path']} ({'on disk' if a['exists'] else 'MISSING'})")
    load = b.get("load") or []
    lines.append("read now: " + ("" if load else "nothing beyond this answer"))
    lines += [
        f"  - {f['path']}"
        + (" (partial deliverable: continue it)" if "partial" in f["why"] else "")
        for f in load
    ]
    if b.get("skip"):
        lines.append("do not read:")
        lines += [f"  - {f['path']} ({f['reason']})" for f in b["skip"]]
    return lines


def _finish(p: Mapping[str, Any]) -> list[str]:
    lines = [f"to finish step {p['step']}:"]
    audit = p.get("review_audit")
    if audit is not None:
        if audit.get("recorded") is not None:
            lines.append("  review audit: recorded")
        else:
            how = "" if audit.get("tier_decided") else f" ({audit.get('tier_decision')} unset)"
            lines.append(
                f"  review audit: tier {audit.get('tier')}{how}, {audit.get('passes')} "
                "challenger passes"
            )
    f = p["open_findings"]
    lines.append(f"  open findings: {f['count']}; {f['rule']}")
    gate = p.get("gate")
    if gate is not None:
        brk = ", a new chat is recommended after it" if gate.get("session_break") else ""
        lines.append(f"  {gate.get('id')} ({gate.get('kind')}{brk}) after `complete`")
        for d in gate.get("decisions") or []:
            allowed = " | ".join(map(str, d["allowed"])) if d.get("allowed") else "free text"
            now = json.dumps(d.get("value"), ensure_ascii=False)
            lines.append(f"    decide {d['key']} ({allowed}); now {now}")
    nxt = p.get("next_step")
    if nxt is not None:
        opt = "optional" if nxt.get("optional") else "required"
        lines.append(f"  next step: {nxt['key']} ({nxt.get('name')}), {opt}")
        lines.append(f"    start: {nxt['start']}")
        if nxt.get("skip"):
            lines.append(f"    or skip: {nxt['skip']}")
    else:
        lines.append("  next step: none (the workflow is then complete)")
    lines.append(f"  {p['artifacts_rule']}")
    return lines


def plan_text(decision: Mapping[str, Any]) -> str:
    """The resume answer (a decision of schema/decision/2.json) as text: the action, the
    codes with their words, the state from the briefing and what to read, the commands in
    order with their ``when``, and what finishes the step."""
    r = decision
    head = f"action: {r['action']}"
    if r.get("step"):
        head += f", step {r['step']}" + (f" ({r['step_name']})" if r.get("step_name") else "")
    if r.get("sub_step"):
        head += f", after checkpoint {r['sub_step']}"
    lines = [head]
    if r.get("next_step"):
        lines.append(f"next step: {r['next_step']}")
    if r.get("incomplete"):
        lines.append(f"incomplete earlier steps: {', '.join(r['incomplete'])}")
    lines += _codes("reason", r.get("reasons"))
    lines += _codes("warning", r.get("warnings"))
    lease = r.get("lease")
    if lease:
        lines.append(
            f"lease: {lease['state']} (session {lease['session']}, owner {lease['owner']}, "
            f"heartbeat {lease['heartbeat']})"
        )
    o = r.get("orphan")
    if o:
        where = f"in step {o['step']}" if o["step"] else "before any step"
        if o["sub_step"]:
            where += f" at {o['sub_step']}"
        lines.append(
            f"orphaned session {o['session']}: silent for {o['silent_seconds']} s "
            f"({o['reason']}), was {where}"
        )
        lines += [
            f"  possibly incomplete: {f['path']} ({f['why']})" for f in o["possibly_incomplete"]
        ]
    if r.get("briefing"):
        lines += _state(r["briefing"])
    session = r.get("session") or {}
    if session.get("new") and session.get("id"):
        lines.append(
            f"session: {session['id']} (new: the first command takes it; pass "
            f"`--session {session['id']}` to a later resume)"
        )
    commands = r.get("commands") or []
    if commands:
        lines.append("commands, in order, each only when [its condition] holds:")
        for i, c in enumerate(commands, 1):
            if isinstance(c, dict):
                lines.append(f"  {i}. [{c['when']}] {c['run']}")
            else:
                lines.append(f"  {i}. {c}")
    for c in r.get("alternatives") or []:
        lines.append(f"  instead, [{c['when']}] {c['run']}")
    if r.get("plan"):
        lines += _finish(r["plan"])
    return "\n".join(lines) + "\n"
