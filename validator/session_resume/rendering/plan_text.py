"""The resume answer as text (``session-resume resume`` without ``--format json``, and what a
host's session-start hook injects): the same content as the JSON (schema/decision/2.json)
in the order an agent acts on it. One function, :func:`plan_text`, renders it; control
characters in values from the session's files are escaped by the caller
(:func:`session_resume.rendering.escape.clean_tree`), and a backtick in the state's values
here (``\x60``), so a value never opens or closes a code span."""

from __future__ import annotations

import json

from session_resume.rendering.escape import no_backticks

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = ["plan_text"]


def _codes(label: str, entries: Any) -> list[str]:
    out = []
    for e in entries or []:
        if isinstance(e, dict):
            message = str(e.get("message")).rstrip(".")
            out.append(f"{label} {e.get('code')}: {message}. To do: {e.get('hint')}")
        else:  # a decision of version 1 (bare codes)
            out.append(f"{label} {e}")
    return out


_LITERALS = frozenset({"none", "null", "true", "false", "nan"})
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-~$/")


def _value(v: Any) -> str:
    """A decision's value: bare when it is a plain word, else as JSON (quoted, escaped). A
    string that reads as a JSON or Python literal (`None`, `null`, `true`) is quoted: bare, it
    would look unset or typed."""
    if isinstance(v, str) and v and set(v) <= _PLAIN and v.lower() not in _LITERALS:
        return v
    return json.dumps(v, ensure_ascii=False)


# A skip reason the text says once, in the state's heading, instead of per file.
_CARRIED = "the briefing carries it"


def _state(b: Mapping[str, Any]) -> list[str]:
    lines = ["state (never open its file):"]
    decisions = b.get("decisions") or {}
    lines.append(
        "  decisions: " + (", ".join(f"{k}={_value(v)}" for k, v in decisions.items()) or "none")
    )
    findings = b.get("open_findings") or []
    lines += [f"  open finding: {f}" for f in findings] or ["  open findings: none"]
    for e in b.get("decision_log") or []:
        lines.append(f"  decision {e.get('id')}: {e.get('title')} -> {e.get('choice')}")
    if b.get("review_audit") is not None:
        lines.append(f"  review audit: {json.dumps(b['review_audit'], sort_keys=True)}")
    load = b.get("load") or []
    loaded = {f["path"] for f in load}
    for a in b.get("artifacts") or []:
        if a["path"] not in loaded:  # one in `read now` is on disk: said there
            lines.append(f"  artifact: {a['path']} ({'on disk' if a['exists'] else 'MISSING'})")
    lines.append("read now:" + ("" if load else " nothing beyond this answer"))
    lines += [
        f"  {f['path']}" + (" (partial: continue it)" if "partial" in f["why"] else "")
        for f in load
    ]
    skip = [f for f in b.get("skip") or [] if f.get("reason") != _CARRIED]
    if skip:
        lines.append("do not read:")
        lines += [f"  {f['path']} ({f['reason']})" for f in skip]
    return lines


def _finish(p: Mapping[str, Any]) -> list[str]:
    lines = [f"to finish step {p['step']}:"]
    audit = p.get("review_audit")
    if audit is not None and audit.get("recorded") is not None:  # else its command says it
        lines.append("  review audit: recorded")
    f = p["open_findings"]
    lines.append(f"  findings: {f['rule']}")
    gate = p.get("gate")
    if gate is not None:  # a session break is said by `session end`'s condition
        lines += _gate(gate, f"after `complete`: {gate['rule']}", brk=False)
    nxt = p.get("next_step")
    later = nxt is not None and nxt.get("by") == "next_chat"
    if nxt is not None and not later:  # else an agent waits for a stop that never comes
        first = "no gate: after `complete`" if gate is None else f"after {gate['id']} is approved"
        lines.append(
            f"  {first}, go on with step {nxt['key']} in this chat (its start"
            + (" or skip" if nxt.get("skip") else "")
            + f" below, then ask `resume` with `--step {nxt['key']}` for its plan)"
        )
    if later and gate is not None and nxt is not None:
        lines.append(
            f"  after {gate['id']} is approved this chat ends (`session end`); the next chat "
            f"starts step {nxt['key']} under its own session, from its own `resume`"
        )
    if nxt is not None:
        opt = "optional" if nxt.get("optional") else "required"
        lines.append(f"  next step: {nxt['key']} ({nxt.get('name')}), {opt}")
        if not later:
            lines.append(f"  start: {_run(nxt['start'])}")
        if nxt.get("skip"):
            who = " (this chat, if the user chose it)" if later else ""
            lines.append(f"  or skip{who}: {_run(nxt['skip'])}")
    else:
        lines.append("  next step: none (the workflow is then complete)")
    lines.append(f"  {p['artifacts_rule']}")
    return lines


def _gate(gate: Mapping[str, Any], where: str, brk: bool = True) -> list[str]:
    """A gate and the decisions recorded there (`decide KEY VALUE`), with allowed values."""
    note = "; a new chat after it" if brk and gate.get("session_break") else ""
    lines = [f"  {gate.get('id')} ({gate.get('kind')}{note}) {where}"]
    for d in gate.get("decisions") or []:
        allowed = " | ".join(map(str, d["allowed"])) if d.get("allowed") else "free text"
        allowed = no_backticks(allowed)
        value = d.get("value")
        now = (
            "not decided"
            if value is None
            else f"now {no_backticks(json.dumps(value, ensure_ascii=False))} (keep unless the user "
            "changes it)"
        )
        lines.append(f"    decide {d['key']} ({allowed}); {now}")
    return lines


def plan_text(decision: Mapping[str, Any]) -> str:
    """The resume answer (a decision of schema/decision/2.json) as text: the action, the
    codes with their words, the state from the briefing and what to read, the commands in
    order with their ``when``, and what finishes the step."""
    r = decision
    head = f"action: {r['action']}"
    if r.get("step"):
        name = f" ({r['step_name']})" if r.get("step_name") else ""
        said = any(
            name in str(e.get("message")) for e in r.get("reasons") or [] if isinstance(e, dict)
        )
        head += f", step {r['step']}" + ("" if said else name)  # once, in the reason if it says it
    if r.get("sub_step") and r.get("action") != "resume_from_checkpoint":  # SR703 says it
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
            no_backticks(
                f"lease: {lease['state']} (session {_known(lease['session'])}, owner "
                f"{_known(lease['owner'])}, heartbeat {_known(lease['heartbeat'])})"
            )
        )
    o = r.get("orphan")
    if o:
        where = f"was in step {o['step']}" if o["step"] else "no step in progress"
        if o["sub_step"]:
            where += f" at {o['sub_step']}"
        lines.append(
            no_backticks(
                f"orphaned session {_known(o['session'])}: silent for {o['silent_seconds']} s "
                f"({o['reason']}), {where}"
            )
        )
        lines += [
            f"  possibly incomplete: {no_backticks(f['path'])} ({f['why']})"
            for f in o["possibly_incomplete"]
        ] or ["  possibly incomplete: none"]
    if r.get("briefing"):  # the state's values: no line of it has a code span of its own
        lines += [no_backticks(line) for line in _state(r["briefing"])]
    gate = (r.get("plan") or {}).get("open_gate")
    if gate:  # before the step starts: the user approves it, `decide KEY VALUE` records
        lines.append(
            f"first, the gate of step {gate['step']} (`approve` records the user's approval; "
            "`decide KEY VALUE` a decision the user changes):"
        )
        lines += _gate(gate, "is still open")
    session = r.get("session") or {}
    commands = r.get("commands") or []
    if commands:
        new = ""
        taker = next(
            (i for i, c in enumerate(commands, 1) if " session start" in _run(c)),
            None,
        )
        if session.get("new") and session.get("id") and taker is not None:
            new = (
                f" ({taker} takes session {session['id']}, new for this answer: name it in a "
                "later resume)"
            )
        lines.append(f"commands in order{new}, each when its [condition] holds:")
        for i, c in enumerate(commands, 1):
            if isinstance(c, dict):
                lines.append(f"{i}. [{c['when']}] {_run(c)}")
            else:
                lines.append(f"{i}. {c}")
    for c in r.get("alternatives") or []:
        lines.append(f"  instead, [{c['when']}] {_run(c)}")
    if r.get("plan"):
        lines += _finish(r["plan"])
    return "\n".join(lines) + "\n"


def _run(c: Any) -> str:
    """A command: its line, or a tool call ``{tool, arguments}`` (the MCP server's answer) as
    the tool's name and its arguments in JSON."""
    if isinstance(c, dict) and "tool" in c:
        return f"{c['tool']} {json.dumps(c['arguments'], ensure_ascii=False)}"
    return c["run"] if isinstance(c, dict) else str(c)


def _known(value: Any) -> str:
    """A lease field as text: ``unknown`` where the lease does not say (never ``None``)."""
    return "unknown" if value is None else str(value)
