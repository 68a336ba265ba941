"""The write-moment tools (init, start, checkpoint, complete, skip, review_audit, decide,
finding, transition): each takes the session's lease for this server process first
(:class:`~session_resume.mcp.lease_keeper.LeaseKeeper`), then makes exactly one write through
:mod:`session_resume.services.writes`."""

from __future__ import annotations

from collections.abc import Callable

from session_resume.core.diagnostics import Diagnostic
from session_resume.core.write_moments import ReviewAudit
from session_resume.mcp.calls import tool_text
from session_resume.mcp.runtime import Runtime, Tool, bad
from session_resume.services import writes
from session_resume.services.context import WriteContext
from session_resume.services.writes import WriteResult

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# --- results -------------------------------------------------------------------------------


def _tool_words(
    diags: list[Diagnostic], where: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """What a write left unrecorded (SR716, SR717), its commands worded as tool calls naming
    the caller's session (``where``)."""
    return [
        {**w, "message": tool_text(w["message"], where), "hint": tool_text(w["hint"], where)}
        for w in (d.to_json() for d in diags)
    ]


def _write(
    rt: Runtime, args: dict[str, Any], fn: Callable[[WriteContext], WriteResult]
) -> dict[str, Any]:
    """A write moment as this server's session: the write itself takes the lease (under its
    lock, after its checks), so a refused write leaves nothing behind, as on the command
    line: no session directory, lock, lease or worklog line (docs/spec.md §7). The lease it
    created or took over then gets this process's pid. ``events`` are every worklog line the
    call appended (a ``session_start`` or ``takeover`` of the lease first), ``lease`` what
    the call did about the lease."""
    ctx = rt.context(args)
    res = fn(ctx)
    rt.keeper.after_write(ctx, res.lease_action)
    where = {k: v for k, v in args.items() if k in ("project", "session_dir")}
    out = res.to_json(lambda diags: _tool_words(diags, where))  # the CLI's --format json mapping
    out["lease"] = {"create": "create", "takeover": "takeover"}.get(res.lease_action, "keep")
    return out


# --- handlers ------------------------------------------------------------------------------


def do_init(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    return _write(
        rt,
        a,
        lambda c: writes.init_session(
            c, a["project"], workflow=a.get("workflow"), fresh=a.get("fresh", False)
        ),
    )


def do_start(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    return _write(
        rt,
        a,
        lambda c: writes.start_step(c, a["step"], force=a.get("force", False), name=a.get("name")),
    )


def do_checkpoint(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    return _write(
        rt,
        a,
        lambda c: writes.checkpoint(
            c, a["step"], a["sub_step"], a.get("artifacts", []), a.get("context_files", [])
        ),
    )


def do_complete(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    return _write(rt, a, lambda c: writes.complete_step(c, a["step"]))


def do_skip(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    return _write(
        rt, a, lambda c: writes.skip_step(c, a["step"], a["reason"], force=a.get("force", False))
    )


def do_review_audit(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    audit = ReviewAudit(
        complexity=a.get("complexity"),
        passes_planned=a.get("passes_planned"),
        passes_executed=a.get("passes_executed"),
        models=tuple(a.get("models", ())),
        skipped=tuple(a.get("skipped", ())),
        skip_reasons=tuple(a.get("skip_reasons", ())),
    )
    return _write(rt, a, lambda c: writes.review_audit(c, a["step"], audit))


_LOG_KEYS = ("title", "choice", "rationale")


def do_decide(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    logged = [k for k in (*_LOG_KEYS, "step", "alternatives") if k in a]
    if "key" in a or "value" in a:
        if logged or "key" not in a or "value" not in a:
            raise bad(
                "decide takes key and value (a decision), or title, choice and rationale "
                "(a decision log entry, with optional step and alternatives), not both"
            )
        return _write(rt, a, lambda c: writes.set_decision(c, a["key"], a["value"]))
    missing = [k for k in _LOG_KEYS if k not in a]
    if missing:
        raise bad(
            "decide needs key and value, or title, choice and rationale (missing: "
            + ", ".join(missing)
            + ")"
        )
    return _write(
        rt,
        a,
        lambda c: writes.log_decision(
            c,
            a["title"],
            a["choice"],
            a["rationale"],
            step=a.get("step"),
            alternatives=a.get("alternatives", []),
        ),
    )


def do_finding(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    fn = writes.add_finding if a["action"] == "add" else writes.resolve_finding
    return _write(rt, a, lambda c: fn(c, a["title"]))


def do_transition(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    return _write(
        rt,
        a,
        lambda c: writes.transition(
            c, a["complete"], a["start"], a.get("decisions") or {}, force=a.get("force", False)
        ),
    )


def do_approve(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    return _write(rt, a, lambda c: writes.approve_gate(c, a["step"], a.get("decisions") or {}))


# --- the table -----------------------------------------------------------------------------

WRITE_TOOLS = [
    Tool(
        "init",
        "Create the session",
        "Create the session's state from the workflow template (revision 1); fresh: "
        "archive an existing session first. Takes the lease.",
        do_init,
    ),
    Tool("start", "Step start", "Write moment: the step starts (in_progress).", do_start),
    Tool(
        "checkpoint",
        "Checkpoint reached",
        "Write moment: the step in progress reached checkpoint sub_step; artifacts and "
        "context files loaded are recorded.",
        do_checkpoint,
    ),
    Tool("complete", "Step done", "Write moment: the step is complete.", do_complete),
    Tool("skip", "Skip a step", "Skip a pending or in-progress step.", do_skip),
    Tool(
        "review_audit",
        "Review audit",
        "Write moment: record the step's challenger review in review_audit (complexity, "
        "passes planned and run, models, skipped passes with reasons), checked against the "
        "workflow.",
        do_review_audit,
    ),
    Tool(
        "decide",
        "Decision made",
        "Write moment: set decisions[key] = value, or append a decision log entry "
        "(title, choice, rationale).",
        do_decide,
    ),
    Tool(
        "finding",
        "Review finding",
        "Write moment: add or resolve a must-fix review finding.",
        do_finding,
    ),
    Tool(
        "approve",
        "Gate approved",
        "Right after the user approved the gate of a complete step: record the approval and "
        "the decisions the user gave (decision_log), and render 00-handoff.md.",
        do_approve,
    ),
    Tool(
        "transition",
        "Gate transition",
        "At an approval gate, in one write: complete one step, record decisions, start the next.",
        do_transition,
    ),
]
