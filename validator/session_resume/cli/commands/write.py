"""The writer commands: `init`, `start`, `checkpoint`, `complete`, `skip`, `decide`,
`finding add|resolve`, `review-audit`, `transition`, `session start|end` and `ping` — argument
parsing and output only; each runs one service of :mod:`session_resume.services.writes` or
:mod:`session_resume.services.leases`."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path

from session_resume.cli.commands.common import (
    DIR_HELP,
    PROJECT_HELP,
    UsageError,
    config_for,
    config_near,
    diag_json,
    emit_json,
    here_relative,
    now_from,
    print_diagnostics,
    project_dir,
    relpath,
    resolve_path,
    root_of,
)
from session_resume.cli.parser import Command
from session_resume.core.workflow import BUILTINS, DEFAULT_WORKFLOW
from session_resume.services.context import (
    ENV_SESSION,
    PROJECT_NAME,
    SESSION_ID,
    WriteContext,
    session_dir_for_project,
)
from session_resume.services.errors import ServiceError
from session_resume.storage.config import Config
from session_resume.storage.discovery import session_dir_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from session_resume.core.diagnostics import Diagnostic
    from session_resume.services.leases import SessionResult
    from session_resume.services.writes import WriteResult

# lazy imports: the services, and the write moments under them, only when a write runs: a
# parser built to read a command's options (the session-start hook's plan, the suggestions)
# imports no write moment (tests/test_cold_imports.py)


def _writes() -> Any:
    from session_resume.services import writes

    return writes


def _leases() -> Any:
    from session_resume.services import leases

    return leases


# --- command line --------------------------------------------------------------------------


def _session_options(p: argparse.ArgumentParser, project: bool = True) -> None:
    """The options of every write: --session-dir (or --project) among the command's options,
    the rest in the group "session"."""
    where = p.add_mutually_exclusive_group()
    where.add_argument("--session-dir", metavar="DIR", help=DIR_HELP)
    if project:
        where.add_argument("--project", metavar="NAME", help=PROJECT_HELP)
    g = p.add_argument_group("session")
    g.add_argument("--root", metavar="DIR", help="repository root (default: from config/.git)")
    g.add_argument("--now", metavar="TIMESTAMP", help="the time of the write (default: clock)")
    g.add_argument("--format", choices=["text", "json"], default="text")
    g.add_argument(
        "--session",
        metavar="ID",
        help=f"this session's id (default: ${ENV_SESSION}); while a session started "
        "explicitly holds a live lease, a command that does not name it is refused (SR511)",
    )


def _init(p: argparse.ArgumentParser) -> None:
    _session_options(p, project=False)
    p.add_argument("project", metavar="PROJECT")
    p.add_argument("--workflow", metavar="NAME|PATH", help=f"{', '.join(BUILTINS)} or a file")
    p.add_argument("--fresh", action="store_true", help="archive an existing session first")
    p.set_defaults(func=run_init)


def _start(p: argparse.ArgumentParser) -> None:
    _session_options(p)
    p.add_argument("step", metavar="STEP")
    p.add_argument("--force", action="store_true", help="re-run, or start out of order")
    p.add_argument("--name", help="name of a new step (free-steps workflows only)")
    p.set_defaults(func=run_start)


def _checkpoint(p: argparse.ArgumentParser) -> None:
    _session_options(p)
    p.add_argument("step", metavar="STEP")
    p.add_argument("sub_step", metavar="SUB_STEP")
    p.add_argument("--artifact", action="append", default=[], metavar="PATH")
    p.add_argument("--context-file", action="append", default=[], metavar="PATH")
    p.set_defaults(func=run_checkpoint)


def _complete(p: argparse.ArgumentParser) -> None:
    _session_options(p)
    p.add_argument("step", metavar="STEP")
    p.set_defaults(func=run_complete)


def _skip(p: argparse.ArgumentParser) -> None:
    _session_options(p)
    p.add_argument("step", metavar="STEP")
    p.add_argument("--reason", required=True, help="why the step is skipped")
    p.add_argument("--force", action="store_true", help="skip a step that is not optional")
    p.set_defaults(func=run_skip)


def _decide(p: argparse.ArgumentParser) -> None:
    _session_options(p)
    p.add_argument("key", nargs="?", metavar="KEY")
    p.add_argument("value", nargs="?", metavar="VALUE")
    p.add_argument("--log", action="store_true", help="append to decision_log instead")
    p.add_argument("--title")
    p.add_argument("--choice")
    p.add_argument("--rationale")
    p.add_argument("--step", dest="decision_step", metavar="STEP")
    p.add_argument("--alternative", action="append", default=[], metavar="TEXT")
    p.set_defaults(func=run_decide)


def _finding(p: argparse.ArgumentParser) -> None:
    fsub = p.add_subparsers(dest="finding_action", metavar="ACTION", required=True)
    for action, text in (("add", "add an open finding"), ("resolve", "resolve a finding")):
        fp = fsub.add_parser(action, help=text)
        _session_options(fp)
        fp.add_argument("title", metavar="TITLE")
        fp.set_defaults(func=run_finding, finding_action=action)


def _review_audit(p: argparse.ArgumentParser) -> None:
    _session_options(p)
    p.add_argument("step", metavar="STEP")
    p.add_argument("--complexity", metavar="TIER", help="e.g. simple, standard, complex")
    p.add_argument("--passes-planned", type=int, metavar="N")
    p.add_argument("--passes-executed", type=int, metavar="N")
    p.add_argument("--model", action="append", default=[], metavar="MODEL", help="per pass run")
    p.add_argument("--skipped-pass", action="append", default=[], type=int, metavar="N")
    p.add_argument("--skip-reason", action="append", default=[], metavar="TEXT")
    p.set_defaults(func=run_review_audit)


def _transition(p: argparse.ArgumentParser) -> None:
    _session_options(p)
    p.add_argument("--complete", required=True, metavar="A", dest="complete_step")
    p.add_argument("--start", required=True, metavar="B", dest="start_step")
    p.add_argument("--decision", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--force", action="store_true", help="start B out of order")
    p.set_defaults(func=run_transition)


def _approve(p: argparse.ArgumentParser) -> None:
    _session_options(p)
    p.add_argument("step", metavar="STEP", help="the complete step whose gate the user approved")
    p.add_argument(
        "--decision",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a decision the user gave with the approval (repeat for each)",
    )
    p.set_defaults(func=run_approve)


def _session(p: argparse.ArgumentParser) -> None:
    ssub = p.add_subparsers(dest="session_action", metavar="ACTION", required=True)
    sp = ssub.add_parser(
        "start",
        help="take the lease; prints the session id",
        description="Create the lease (00-session.active) and print the new session id "
        "(export it as SESSION_RESUME_SESSION). A live lease of another session refuses "
        "(SR511) unless --takeover; an orphaned one is taken over. Both are logged.",
    )
    _session_options(sp)
    sp.add_argument(
        "--owner",
        help="who runs the session (default: $USER; without it, pid PID@HOST with --pid)",
    )
    sp.add_argument(
        "--pid", type=int, help="a long-lived owner process whose death ends it (1..2^31-1)"
    )
    sp.add_argument("--takeover", action="store_true", help="take over a live lease (logged)")
    sp.set_defaults(func=run_session_start)
    sp = ssub.add_parser(
        "end",
        help="log session_end and remove the lease",
        description="End the session: log session_end and remove the lease. With "
        "--reason paused (the agent must stop before the step is complete, after recording "
        "the last checkpoint whose work is done), the next resume reports the step as paused "
        "at that checkpoint, never as a crash.",
    )
    _session_options(sp)
    sp.add_argument(
        "--reason",
        choices=("paused",),
        help="paused: the step in progress stops here and is continued by the next chat",
    )
    sp.set_defaults(func=run_session_end)


def _ping(p: argparse.ArgumentParser) -> None:
    _session_options(p)
    p.set_defaults(func=run_ping)


COMMANDS = (
    Command(
        "init",
        order=30,
        help="create the session's state from the workflow template and take the lease",
        description="Create 00-session-state.json for PROJECT with every step pending "
        "(revision 1) and take the lease for the session --session ID names (without it, a "
        "new id, printed: name it as --session ID in every later command of this chat). An "
        "existing state is refused unless --fresh, which first moves the old session's files "
        "into .archive/<UTC stamp>_<project>/ (nothing is deleted).",
        arguments=_init,
    ),
    Command(
        "start",
        order=30,
        help="write moment 1: a step starts (pending → in_progress)",
        description="Set the step in_progress, started = now. A step already in progress is "
        "restarted (after a crashed session: attempts + 1). Refused (SR710) when the step is "
        "complete or skipped, another step is in progress, or earlier steps are neither "
        "complete nor skipped, unless --force.",
        arguments=_start,
    ),
    Command(
        "checkpoint",
        order=30,
        help="write moment 2: a sub-step checkpoint is reached",
        description="Record SUB_STEP (a checkpoint id of the step in the workflow) for the "
        "step in progress and append artifacts and context files (deduplicated, "
        "repository-relative).",
        arguments=_checkpoint,
    ),
    Command(
        "complete",
        order=30,
        help="write moment 3: a step is done (in_progress → complete)",
        description="Use it when the step's work is done (its last checkpoint recorded) and "
        "nothing starts the next step in the same write: it records the step complete "
        "(status complete, completed = now; worklog `step_complete`). At an orchestrator gate "
        "that also records the gate's decisions and starts the next step, use `transition`.",
        arguments=_complete,
    ),
    Command(
        "skip",
        order=30,
        help="skip a pending or in-progress step (optional steps; others with --force)",
        arguments=_skip,
    ),
    Command(
        "decide",
        order=30,
        help="write moment 4: record a decision (decisions[KEY] = VALUE, or --log)",
        description="`decide KEY VALUE` sets a decision (checked against the workflow's "
        "allowed values). `decide --log --title T --choice C --rationale R` appends to "
        "decision_log with the next id (D001, D002, ...).",
        arguments=_decide,
    ),
    Command(
        "finding",
        order=30,
        help="write moment 5: open or resolve a review finding",
        arguments=_finding,
    ),
    Command(
        "review-audit",
        order=30,
        help="write moment 6: record how a step's challenger review ran (review_audit)",
        description="Set review_audit.step_STEP: --complexity and the pass counts are set; "
        "--model, --skipped-pass and --skip-reason are appended (deduplicated). Checked against "
        "the workflow: the step must be review-audited, the complexity one of the workflow's "
        "values, skipped passes within those planned, and each skipped pass needs a reason.",
        arguments=_review_audit,
    ),
    Command(
        "approve",
        order=30,
        help="record the user's approval of a complete step's gate (and its decisions)",
        description="Use it right after the user approved the gate of STEP (complete): one "
        "write records each --decision KEY=VALUE the user gave, appends the approval to "
        "decision_log (title '<gate> approval', choice approved, agent user), logs "
        "`gate_approved` and renders 00-handoff.md. No later answer asks for that approval "
        "again.",
        arguments=_approve,
    ),
    Command(
        "transition",
        order=30,
        help="an orchestrator gate in one write: complete A, record decisions, start B",
        description="Use it at an orchestrator gate that hands over from step A to step B at "
        "once: one write records A complete, the gate's decisions (--decision KEY=VALUE) and B "
        "in progress (worklog: B's `step_start` naming A, so B's first resume is a start, not "
        "a restart). To finish a step without starting another, use `complete`.",
        arguments=_transition,
    ),
    Command(
        "session",
        order=30,
        help="start or end a session (the lease 00-session.active)",
        arguments=_session,
    ),
    Command(
        "ping",
        order=30,
        help="refresh the lease's heartbeat (writes only the sentinel)",
        arguments=_ping,
    ),
)


def _usage(message: str) -> Exception:
    return UsageError(message)


def _context(
    args: argparse.Namespace, *, project: str | None = None, creating: bool = False
) -> WriteContext:
    if args.session_dir:
        # the repository of the session directory named (docs/config.md), not of the cwd
        resolved = resolve_path(args.session_dir, args.root)
        cfg: Config = config_near(resolved, args.root)
    else:
        cfg = config_for(args.root)
    root = root_of(args.root, cfg)
    now = now_from(args.now)
    session = args.session or os.environ.get(ENV_SESSION) or None
    if session is not None and not SESSION_ID.match(session):
        raise _usage(
            f"--session: {session!r} is not a session id (letters, digits and . _ : @ -, "
            "at most 128 characters)"
        )
    project = project or getattr(args, "project", None)
    if args.session_dir:
        session_dir = session_dir_of(resolved)
    elif project:
        if not PROJECT_NAME.match(project):
            raise _usage(
                f"project name {project!r} is not allowed (letters, digits, `.`, `_`, `-`, "
                "starting with a letter or digit)"
            )
        if creating:  # `init` creates the session where its workflow keeps them
            spec = getattr(args, "workflow", None) or cfg.workflow or DEFAULT_WORKFLOW
            session_dir = session_dir_for_project(root, project, spec)
        else:
            session_dir = project_dir(args, cfg, root, project, None, dir_option="--session-dir")
    else:
        raise _usage("give the session with --session-dir DIR or --project NAME")
    return WriteContext(
        session_dir=Path(os.path.abspath(session_dir)),
        now=now,
        root=root,
        session=session,
        stale_seconds=cfg.stale_after_seconds,
        default_workflow=cfg.workflow or DEFAULT_WORKFLOW,
        init_workflow=_as_typed(cfg.workflow),
        archive_keep=cfg.archive_keep,
    )


def _as_typed(workflow: str | None) -> str | None:
    """The configured workflow as a command run from here names it: a built-in by its name,
    a file by its path from the current directory."""
    if workflow is None or workflow in BUILTINS:
        return workflow
    return relpath(workflow)


def _command(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Refusals: coded diagnostics on stderr (text) or {"ok": false, ...} on stdout (json)."""

    @functools.wraps(fn)
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except ServiceError as exc:
            # lazy: only a refusal prints suggested commands
            from session_resume.cli.commands.suggest import print_refusal

            print_refusal(args, exc.diagnostics)
            return exc.exit_code

    return run


def _emit(args: argparse.Namespace, res: WriteResult, text: str) -> int:
    if args.format == "json":
        emit_json(res.to_json(lambda ws: diag_json(_suggested(args, ws))))
        return 0
    if res.lease_action == "takeover":
        sys.stdout.write(
            f"took over the lease of session {res.previous_session} (logged); "
            f"this is session {res.session}\n"
        )
    elif res.lease_action == "create":
        sys.stdout.write(f"started session {res.session} (lease 00-session.active)\n")
    elif res.lease_action == "adopt":
        sys.stdout.write(
            f"adopted the implicit lease of session {res.previous_session} (logged); "
            f"this is session {res.session}\n"
        )
    sys.stdout.write(f"{text} (revision {res.revision}, session {res.session})\n")
    if res.warnings:  # written anyway: what the write left unrecorded (SR716, SR717)
        print_diagnostics(_suggested(args, res.warnings), sys.stderr)
    return 0


def _suggested(args: argparse.Namespace, diags: list[Diagnostic]) -> list[Diagnostic]:
    """The commands a warning names, runnable from where the user stands."""
    # lazy: only a warning prints suggested commands
    from session_resume.cli.commands.suggest import complete_diagnostics, naming_of

    return complete_diagnostics(diags, naming_of(args))


def _step_label(res: WriteResult, key: str) -> str:
    step = (res.document.get("steps") or {}).get(key) or {}
    name = step.get("name")
    return f"step {key} ({name})" if name else f"step {key}"


@_command
def run_init(args: argparse.Namespace) -> int:
    ctx = _context(args, project=args.project, creating=True)
    res = _writes().init_session(ctx, args.project, workflow=args.workflow, fresh=args.fresh)
    if args.format == "text" and res.archived_to:
        sys.stdout.write(f"archived the previous session's files to {res.archived_to}\n")
    wf = res.document.get("workflow")
    return _emit(
        args,
        res,
        f"initialised {here_relative(str(ctx.state_path))} (project {args.project}, workflow {wf}, "
        f"{len(res.document.get('steps') or {})} steps pending); session {res.session} holds "
        f"the lease: name it in every later write (--session {res.session})",
    )


@_command
def run_start(args: argparse.Namespace) -> int:
    ctx = _context(args)
    res = _writes().start_step(ctx, args.step, force=args.force, name=args.name)
    detail = (res.event or {}).get("detail") or {}
    extra = ""
    if detail.get("restart"):
        extra = f", restarted (attempt {detail.get('attempts')})"
    return _emit(args, res, f"{_step_label(res, args.step)}: in_progress{extra}")


@_command
def run_checkpoint(args: argparse.Namespace) -> int:
    ctx = _context(args)
    res = _writes().checkpoint(ctx, args.step, args.sub_step, args.artifact, args.context_file)
    sub = res.document["steps"][args.step]["sub_step"]
    return _emit(args, res, f"{_step_label(res, args.step)}: checkpoint {sub}")


@_command
def run_complete(args: argparse.Namespace) -> int:
    ctx = _context(args)
    res = _writes().complete_step(ctx, args.step)
    return _emit(args, res, f"{_step_label(res, args.step)}: complete")


@_command
def run_skip(args: argparse.Namespace) -> int:
    ctx = _context(args)
    res = _writes().skip_step(ctx, args.step, args.reason, force=args.force)
    return _emit(args, res, f"{_step_label(res, args.step)}: skipped ({args.reason})")


@_command
def run_decide(args: argparse.Namespace) -> int:
    if args.log:
        if args.key is not None or args.value is not None:
            raise _usage("decide --log takes no KEY VALUE (use --title, --choice, --rationale)")
        missing = [o for o in ("title", "choice", "rationale") if not getattr(args, o)]
        if missing:
            raise _usage("decide --log needs " + ", ".join(f"--{m}" for m in missing))
        ctx = _context(args)
        res = _writes().log_decision(
            ctx,
            args.title,
            args.choice,
            args.rationale,
            step=args.decision_step,
            alternatives=args.alternative,
        )
        entry = res.document["decision_log"][-1]
        return _emit(args, res, f"decision {entry['id']} logged: {args.title} → {args.choice}")
    if args.key is None or args.value is None:
        raise _usage("decide needs KEY VALUE, or --log --title T --choice C --rationale R")
    if args.title or args.choice or args.rationale or args.decision_step or args.alternative:
        raise _usage("--title, --choice, --rationale, --step and --alternative go with --log")
    ctx = _context(args)
    res = _writes().set_decision(ctx, args.key, args.value)
    return _emit(args, res, f"decision {args.key} = {args.value}")


@_command
def run_finding(args: argparse.Namespace) -> int:
    ctx = _context(args)
    res = (
        _writes().add_finding(ctx, args.title)
        if args.finding_action == "add"
        else _writes().resolve_finding(ctx, args.title)
    )
    n = len(res.document.get("open_findings") or [])
    verb = "added" if args.finding_action == "add" else "resolved"
    return _emit(args, res, f"finding {verb}: {args.title} ({n} open)")


@_command
def run_review_audit(args: argparse.Namespace) -> int:
    ctx = _context(args)
    from session_resume.core.write_moments import ReviewAudit

    audit = ReviewAudit(
        complexity=args.complexity,
        passes_planned=args.passes_planned,
        passes_executed=args.passes_executed,
        models=tuple(args.model),
        skipped=tuple(args.skipped_pass),
        skip_reasons=tuple(args.skip_reason),
    )
    res = _writes().review_audit(ctx, args.step, audit)
    e = res.document["review_audit"][f"step_{args.step}"]
    return _emit(
        args,
        res,
        f"review audit of {_step_label(res, args.step)}: {e.get('passes_executed')} of "
        f"{e.get('passes_planned')} passes run ({e.get('complexity') or 'no tier'})",
    )


def parse_decisions(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise _usage(f"--decision {item!r}: expected KEY=VALUE")
        out[key] = value
    return out


@_command
def run_transition(args: argparse.Namespace) -> int:
    decisions = parse_decisions(args.decision)
    ctx = _context(args)
    res = _writes().transition(
        ctx, args.complete_step, args.start_step, decisions, force=args.force
    )
    text = (
        f"{_step_label(res, args.complete_step)}: complete; "
        f"{_step_label(res, args.start_step)}: in_progress"
    )
    if decisions:
        text += "; decisions: " + ", ".join(f"{k}={v}" for k, v in decisions.items())
    return _emit(args, res, text)


@_command
def run_approve(args: argparse.Namespace) -> int:
    decisions = parse_decisions(args.decision)
    ctx = _context(args)
    res = _writes().approve_gate(ctx, args.step, decisions)
    entry = res.document["decision_log"][-1]
    text = f"{entry['gate']} of {_step_label(res, args.step)}: approved ({entry['id']})"
    if decisions:
        text += "; decisions: " + ", ".join(f"{k}={v}" for k, v in decisions.items())
    if res.handoff:
        text += f"; rendered {res.handoff}"
    return _emit(args, res, text)


def _emit_session(args: argparse.Namespace, res: SessionResult, text: str) -> int:
    if args.format == "json":
        emit_json(res.to_json())
    else:
        sys.stdout.write(text)
    return 0


@_command
def run_session_start(args: argparse.Namespace) -> int:
    ctx = _context(args)
    res = _leases().start_session(ctx, owner=args.owner, pid=args.pid, takeover=args.takeover)
    if res.action == "adopted" and args.format == "text":
        sys.stderr.write(
            f"session-resume: adopted the lease of session {res.previous_session}, taken "
            "by earlier writes that named no session (logged)\n"
        )
    if res.action == "takeover" and args.format == "text":
        sys.stderr.write(
            f"session-resume: took over the lease of session {res.previous_session} (logged)\n"
        )
    return _emit_session(args, res, f"{res.session}\n")


@_command
def run_session_end(args: argparse.Namespace) -> int:
    ctx = _context(args)
    res = _leases().end_session(ctx, reason=args.reason)
    text = f"session {res.session} ended\n" if res.session else "no active session\n"
    if res.session and args.reason == "paused":
        text = f"session {res.session} ended, paused: the next resume continues the step\n"
    return _emit_session(args, res, text)


@_command
def run_ping(args: argparse.Namespace) -> int:
    ctx = _context(args)
    res = _leases().ping_session(ctx)
    hb = (res.lease or {}).get("heartbeat")
    return _emit_session(args, res, f"session {res.session}: heartbeat {hb}\n")
