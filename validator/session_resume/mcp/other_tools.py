"""The tools beside the write moments: resume, validate, migrate, recover, render_handoff,
budget, report, session_start and session_end, each one call into ``services``."""

from __future__ import annotations

from pathlib import Path

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.validation import ValidateOptions
from session_resume.mcp.calls import as_tool_calls, tool_text
from session_resume.mcp.runtime import Runtime, Tool
from session_resume.records import replace
from session_resume.reporters.text import clean_tree
from session_resume.services import maintenance
from session_resume.services import resume as resume_service
from session_resume.services.budget import budget
from session_resume.services.context import Reading
from session_resume.services.errors import ServiceError
from session_resume.services.leases import SessionResult
from session_resume.services.rendering import render_handoff
from session_resume.services.resume import plan_text
from session_resume.services.validation import validate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _diags(diags: list[Diagnostic]) -> list[dict[str, Any]]:
    return [d.to_json() for d in diags]


def do_resume(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    """The resume decision (schema/decision/2.json), as this server's session: its own lease
    is not another live session; the plan's commands are this server's tool calls
    (``{tool, arguments, when}``) and the codes' words name tools."""
    out = resume_service.resume(
        rt.session_dir(a), _reading(rt, a), step=a.get("step"), **_read_options(rt)
    )
    return _as_this_server(rt, a, out)


def resume_text(decision: dict[str, Any]) -> str:
    """The resume answer as the plan text the CLI prints (its commands this server's tool
    calls, values from the session's files escaped), about half the length of its JSON:
    hosts that get structured content hand the model that alone, so an agent reads this
    text only when the answer is sent as text alone."""
    return tool_text(plan_text(clean_tree(decision)), _where_of(decision))


def _where_of(decision: dict[str, Any]) -> dict[str, Any]:
    """The arguments naming the session in the answer's own tool calls (the caller's)."""
    for c in decision.get("commands") or []:
        args = c.get("arguments") if isinstance(c, dict) else None
        if isinstance(args, dict):
            return {k: v for k, v in args.items() if k in ("project", "session_dir")}
    return {}


def _reading(rt: Runtime, a: dict[str, Any]) -> Reading:
    """How a read tool reads the session: under the server's root, with the call's workflow,
    else the state's, else the configured one."""
    return Reading(root=rt.root, workflow=a.get("workflow"), default_workflow=rt.workflow)


def _read_options(rt: Runtime) -> dict[str, Any]:
    """The rest of what `resume` and `report` read a session with: the server's clock, its
    session and staleness, and that the server holds its session itself (no command starts
    or names one)."""
    return {
        "now": rt.clock(),
        "session": rt.keeper.session,
        "stale_seconds": rt.stale_seconds,
        "front_end_session": True,
    }


def _as_this_server(rt: Runtime, a: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """A resume answer (or a report's recommendation) as this server gives it: its own
    session's id (None until it takes one), its commands this server's tool calls and the
    codes' words naming tools (:func:`as_tool_calls`)."""
    answer["session"]["id"] = rt.keeper.session
    where: dict[str, Any] = {k: a[k] for k in ("project", "session_dir") if k in a}
    return as_tool_calls(answer, where)


def do_report(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    """The crash report; its recommended commands as this server's session takes them
    (tool calls, no session start), as `resume` gives them."""
    out = resume_service.report(rt.session_dir(a), _reading(rt, a), **_read_options(rt))
    _as_this_server(rt, a, out["recommended"])
    return out


def do_validate(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    """Validate the session's state file: not a refusal when invalid (``ok`` tells)."""

    d = rt.session_dir(a)
    opts = ValidateOptions(
        workflow=a.get("workflow"),
        default_workflow=rt.workflow or ValidateOptions.default_workflow,
        strict=a.get("strict", False),
        check_artifacts=a.get("check_artifacts", False),
        now=rt.clock(),
        root=rt.root,
    )
    reports = validate([str(d)], opts, patterns=False)  # a name, never a glob
    strict = bool(a.get("strict", False))
    return {
        "ok": all(r.ok(strict) for r in reports),
        "files": [
            {
                "path": r.path,
                "ok": r.ok(strict),
                "schema_version": r.schema_version,
                "workflow": r.workflow,
                "diagnostics": _diags(r.diagnostics),
            }
            for r in reports
        ],
    }


def _existing(d: Path) -> Path:
    """``d`` when it is a directory; a write that repairs a session never creates one."""
    if not d.is_dir():
        raise ServiceError([diag("SR100", "no such session directory", file=str(d))], 2)
    return d


def do_migrate(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    """Migrate the state (dry_run: the patch only). A refused migration is a tool error."""
    ctx = rt.context(a)
    d = _existing(ctx.session_dir)
    dry_run = bool(a.get("dry_run", False))

    def run(write: bool) -> maintenance.MigrateReport:
        return maintenance.migrate(
            [str(d)],
            now=ctx.now,
            write=write,
            workflow=a.get("workflow"),
            root=rt.root,
            salvage=bool(a.get("salvage", False)),
            patterns=False,  # a name, never a glob
        )

    rep = run(False)
    if not dry_run and not rep.refused:
        # the lease only for a migration that will be made: a refused one writes nothing
        rt.keeper.ensure(ctx)
        rep = run(True)
    if rep.refused:
        raise ServiceError(
            [*rep.problems, *(n for o in rep.outcomes for n in o.notes)]
            or [diag("SR161", "the migration was refused (nothing was written)", file=str(d))]
        )
    return {
        "ok": True,
        "dry_run": dry_run,
        "pending": rep.pending,
        "outcomes": [
            {
                "path": o.path,
                "status": o.status,
                "from_version": o.from_version,
                "patch": o.patch,
                "notes": _diags(o.notes),
            }
            for o in rep.outcomes
        ],
    }


def do_recover(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    ctx = rt.context(a)
    _existing(ctx.session_dir)
    # refused before the lease is taken: a refused call writes nothing
    maintenance.refuse_stray(ctx.session_dir, rt.root, rt.session_root)
    rt.keeper.ensure(ctx)
    reading = Reading(root=rt.root, workflow=a.get("workflow"))  # the call's, not the configured
    res = maintenance.recover(ctx.session_dir, reading, now=ctx.now, project=a.get("project"))
    return {
        "ok": not any(p.severity.value == "error" for p in res.problems),
        "action": res.action,
        "corrupt_kept_as": res.corrupt_kept_as,
        "diagnostics": _diags(res.diagnostics),
        "problems": _diags(res.problems),
        "revision": (res.document or {}).get("revision"),
    }


def do_render_handoff(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    write = bool(a.get("write", True))
    res = render_handoff(rt.session_dir(a), _reading(rt, a), now=rt.clock(), write=write)
    return {
        "ok": True,
        "path": str(res.path) if res.path is not None else None,
        "workflow": res.workflow,
        "lines": res.lines,
        "text": res.text,
    }


def do_budget(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:

    return budget(a["step"], _reading(rt, a), session_dir=rt.session_dir(a))


def do_session_start(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    """Take the lease now (else the first write does): this process's pid and host."""
    return rt.keeper.start(rt.context(a), takeover=a.get("takeover", False)).to_json()


def do_session_end(rt: Runtime, a: dict[str, Any]) -> dict[str, Any]:
    """End this server's session in the directory (log session_end, remove the lease)."""
    ctx = rt.context(a)
    if not Path(ctx.session_dir).is_dir():
        return SessionResult(None, "none").to_json()
    return rt.keeper.end(replace(ctx), reason=a.get("reason")).to_json()


RESUME_TOOL = Tool(
    "resume",
    "What to do now",
    "The first call of every agent: what to do now, as a plan (the action, each code's "
    "words, the state, what to read, the tool calls in order with when to make each, what "
    "finishes the step). Without step it answers for the orchestrator. Reads only.",
    do_resume,
    read_only=True,
    text=resume_text,
)

OTHER_TOOLS = [
    Tool(
        "validate",
        "Validate the state",
        "Check the session's state file: schema, semantic rules, the workflow's rules. "
        "Reads only; ok false lists the coded problems.",
        do_validate,
        read_only=True,
    ),
    Tool(
        "migrate",
        "Migrate an old state",
        "Migrate the state to the current schema version (the old file kept as .bak); "
        "dry_run: the JSON Patch that would be written, nothing written.",
        do_migrate,
    ),
    Tool(
        "recover",
        "Recover a corrupt state",
        "Restore a corrupt or missing state from a valid .bak, else recreate it from the "
        "workflow template; the corrupt file is kept.",
        do_recover,
    ),
    Tool(
        "render_handoff",
        "Render the handoff",
        "Render 00-handoff.md from the state (write false: return the text only).",
        do_render_handoff,
    ),
    Tool(
        "budget",
        "Context budget of a step",
        "What the step may load at start-up, and the context files it must not re-read.",
        do_budget,
        read_only=True,
    ),
    Tool(
        "report",
        "Crash report",
        "Whether a session crashed, where it stopped, what may be incomplete, the last "
        "events and the recommended action, whose commands are this server's tool calls "
        "(as resume gives them). Reads only.",
        do_report,
        read_only=True,
    ),
    Tool(
        "session_start",
        "Take the lease",
        "Take the session's lease for this server process now (otherwise its first write "
        "does); takeover: take a live lease of another session (logged).",
        do_session_start,
    ),
    Tool(
        "session_end",
        "End the session",
        "End this server's session: log session_end and release the lease (also done when "
        "the client disconnects).",
        do_session_end,
    ),
]
