"""The read services: `resume` (the decision for a fresh agent) and `report` (the crash
report). They read the session directory and write nothing."""

from __future__ import annotations

import os
import shlex
from datetime import datetime
from pathlib import Path

from session_resume.core.briefing import deliverable_files
from session_resume.core.codes import diag
from session_resume.core.fresh_start import INIT
from session_resume.core.jsonread import as_dict
from session_resume.core.lease import DEFAULT_STALE_SECONDS, new_session_id
from session_resume.core.resume_decision import Options, Snapshot, decide, is_writer
from session_resume.core.staleness import stale_gap
from session_resume.records import replace
from session_resume.rendering.plan_text import plan_text
from session_resume.services.context import (
    Reading,
    holds_session,
    load_workflow_or_fail,
    project_session_dirs,
    session_dir_for_project,
)
from session_resume.services.errors import ServiceError
from session_resume.storage.gitlog import commits_since
from session_resume.storage.snapshot import session_files, take

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from session_resume.core.workflow import Workflow


__all__ = ["plan_text", "report", "resume", "runnable"]


def runnable(
    command: str,
    session_dir: Path,
    *,
    project: str | None = None,
    session: str | None = None,
) -> str:
    """The decision's command with this session filled in, ready to run: ``DIR`` replaced,
    and a writer named the way the skill teaches (``--project PROJECT`` when the session
    directory is the project's own, else ``--session-dir DIR``; ``--session ID`` when the
    caller named its session, since agent shells often keep no variables)."""
    command = command.replace(" DIR", f" {shlex.quote(str(session_dir))}")
    if project is not None:
        command = command.replace(" PROJECT", f" {shlex.quote(project)}")
    if is_writer(command):
        if project is not None:
            command += f" --project {shlex.quote(project)}"
        else:
            command += f" --session-dir {shlex.quote(str(session_dir))}"
        if session is not None:
            command += f" --session {shlex.quote(session)}"
    return command


def _project_of(
    doc: dict[str, Any] | None, session_dir: Path, root: Path | None, configured: str | None
) -> Any:
    """The state's project when ``--project`` names ``session_dir`` as a printed writer
    resolves it (no --workflow: the ``configured`` workflow's session_dir, else the built-in
    workflow's directory that holds the session; docs/config.md), else None."""
    project = (doc or {}).get("project")
    if not isinstance(project, str) or root is None:
        return None
    try:
        if configured:
            dirs = [session_dir_for_project(root, project, configured)]
        else:
            found = [d for d, _names in project_session_dirs(root, project)]
            dirs = [d for d in found if holds_session(d)] or found[:1]
    except ServiceError:
        return None
    same = len(dirs) == 1 and os.path.abspath(dirs[0]) == os.path.abspath(session_dir)
    return project if same else None


def resume(
    session_dir: Path,
    reading: Reading,
    *,
    now: datetime,
    step: str | None = None,
    session: str | None = None,
    stale_seconds: int = DEFAULT_STALE_SECONDS,
    front_end_session: bool = False,
) -> dict[str, Any]:
    """The resume decision (schema/decision/2.json) for ``step`` (None: the orchestrator),
    with its briefing, its plan and runnable commands. When the caller names no session and
    the commands write, a new session id is chosen here and every writer names it; the first
    command of a plan (`session start`) takes it (docs/spec.md §10.3). ``front_end_session``:
    the caller holds its session itself (the MCP server): no command starts or names one."""
    fresh = not session_dir.is_dir()
    if fresh and not creatable(session_dir, reading.root):
        raise ServiceError([diag("SR100", "no such session directory", file=str(session_dir))], 2)
    session = session or None
    if fresh:  # a session directory still to create: a fresh start (docs/spec.md §10.2)
        rel = os.path.relpath(os.path.abspath(session_dir), os.path.abspath(str(reading.root)))
        snap = Snapshot(state_status="absent", session_rel=Path(rel).as_posix())
    else:
        snap = take(session_dir, root=reading.root)
    spec = reading.spec_for(snap.document)
    wf = load_workflow_or_fail(spec)
    snap = with_workflow_files(snap, session_dir, wf)
    gap = stale_gap(snap.document, snap.last_events, now) if snap.document is not None else None
    if gap is not None and reading.root is not None:  # SR708 says whether the project moved on
        snap = replace(snap, commits_since=commits_since(reading.root, gap[0], snap.session_rel))
    opts = Options(
        session=session, stale_seconds=stale_seconds, front_end_session=front_end_session
    )
    result = decide(snap, step, now, wf, opts)
    result["session_dir"] = str(session_dir)
    doc = snap.document or snap.backup_document
    if result["action"] == "fresh_start":
        doc = {"project": session_dir.name}
    project = _project_of(doc, session_dir, reading.root, reading.default_workflow)
    sid = session or (new_session_id() if result["session"]["new"] else None)
    result["session"]["id"] = sid
    fill = {"project": project, "session": sid}
    for c in result["commands"] + result["alternatives"]:
        if c["run"] == INIT:
            c["run"] = _init_command(session_dir, project, spec, sid)
        c["run"] = runnable(c["run"], session_dir, **fill)
    _fill_plan(result.get("plan"), session_dir, fill)
    return result


# What makes a directory a repository a session can start in (its root holds one).
REPOSITORY_MARKS = (".git", ".session-resume.yaml", "pyproject.toml")


def creatable(session_dir: Path, root: Path | None) -> bool:
    """Whether ``session_dir``, absent, is a directory `init` may create: nothing by its name
    (not even a dangling link), the root a repository (:data:`REPOSITORY_MARKS`), and the
    nearest existing ancestor a directory inside it (no link leading out of it)."""
    if root is None or os.path.lexists(session_dir):
        return False
    if not any(os.path.lexists(os.path.join(root, m)) for m in REPOSITORY_MARKS):
        return False  # no repository here: nothing to start a session in
    top = os.path.realpath(root)
    at = os.path.abspath(session_dir)
    while not os.path.lexists(at):
        parent = os.path.dirname(at)
        if parent == at:
            return False
        at = parent
    real = os.path.realpath(at)
    return os.path.isdir(real) and (real == top or real.startswith(top.rstrip(os.sep) + os.sep))


def _init_command(session_dir: Path, project: str | None, spec: str, sid: str | None) -> str:
    """A fresh start's first command: `init` for the directory's name as the project, the
    workflow that reads it, the session directory when `--project` would not name it, and
    the session whose lease it takes (docs/spec.md §10.2)."""
    name = project if project is not None else session_dir.name
    run = f"session-resume init {shlex.quote(name)} --workflow {shlex.quote(_typed(spec))}"
    if project is None:
        run += f" --session-dir {shlex.quote(str(session_dir))}"
    return run + (f" --session {shlex.quote(sid)}" if sid is not None else "")


def _typed(spec: str) -> str:
    """A workflow as a command names it: a built-in by its id, a file by its path from here."""
    if "/" not in spec and not spec.endswith((".yaml", ".yml")):
        return spec
    return os.path.relpath(spec) if os.path.isabs(spec) else spec


def with_workflow_files(snap: Snapshot, session_dir: Path, wf: Workflow) -> Snapshot:
    """``snap`` with whether each startup input and deliverable the workflow names is a file
    in the session directory (the briefing's ``load`` and SR714/SR715 need them)."""
    names = [f for s in wf.steps for f in (s.budget.startup_files if s.budget else ())]
    names += deliverable_files(wf)
    return replace(snap, files=session_files(session_dir, tuple(dict.fromkeys(names))))


def _fill_plan(plan: dict[str, Any] | None, session_dir: Path, fill: dict[str, Any]) -> None:
    """The plan's writes, runnable as printed (the same filling as the commands)."""
    if plan is None:
        return
    for c in plan["checkpoints"]:
        c["write"] = runnable(c["write"], session_dir, **fill)
    plan["complete"] = runnable(plan["complete"], session_dir, **fill)
    if plan["review_audit"] is not None:
        plan["review_audit"]["write"] = runnable(plan["review_audit"]["write"], session_dir, **fill)
    for g in (plan.get("gate"), plan.get("open_gate")):
        if g is not None:
            g["approve"] = runnable(g["approve"], session_dir, **fill)
    nxt = plan["next_step"]
    if nxt is not None:
        # after a session break the next chat starts the next step under its own session:
        # no command of its names this chat's (docs/spec.md §10.2)
        later = {**fill, "session": None} if nxt.get("by") == "next_chat" else fill
        for k in ("start", "skip", "transition"):
            if nxt[k] is not None:
                nxt[k] = runnable(nxt[k], session_dir, **(fill if k == "skip" else later))


def _running(doc: dict[str, Any]) -> str | None:
    """The step in progress in ``doc`` (the report of a state read from ``.bak``)."""
    steps = as_dict(doc.get("steps"))
    return next(
        (k for k, s in steps.items() if isinstance(s, dict) and s.get("status") == "in_progress"),
        None,
    )


def report(session_dir: Path, reading: Reading, **options: Any) -> dict[str, Any]:
    """The crash report: whether a session crashed, where it stopped, what may be
    incomplete, the last events and the recommended action. ``options``: the rest of
    :func:`resume`'s keywords (``now``, ``session``, ``stale_seconds``), passed on to it."""
    decision = resume(session_dir, reading, **options)
    snap = take(session_dir, root=reading.root, last_events=10)
    doc = snap.document or snap.backup_document or {}
    steps = [
        {
            "key": k,
            "name": s.get("name"),
            "status": s.get("status"),
            "sub_step": s.get("sub_step"),
            "attempts": s.get("attempts"),
        }
        for k, s in (doc.get("steps") or {}).items()
        if isinstance(s, dict)
    ]
    orphan = decision.get("orphan")
    incomplete = list((orphan or {}).get("possibly_incomplete", []))
    seen = {f["path"] for f in incomplete}
    for k, st in (doc.get("steps") or {}).items():
        for path in st.get("artifacts") or [] if isinstance(st, dict) else []:
            if isinstance(path, str) and path not in seen and snap.artifacts.get(path) is None:
                seen.add(path)
                incomplete.append(
                    {"path": path, "why": f"missing (listed by step {k}, {st.get('status')})"}
                )
    current = decision["step"] or _running(doc)
    # the step's own last checkpoint when the decision names none (`session_active`, a
    # complete step offered again): the header agrees with the step list below it
    recorded = as_dict(as_dict(doc.get("steps")).get(current)).get("sub_step") if current else None
    recorded = recorded if isinstance(recorded, str) else None
    problem = None
    if snap.state_status != "ok":
        problem = {
            "status": snap.state_status,
            "codes": list(snap.state_codes),
            "from_backup": snap.document is None and snap.backup_document is not None,
        }
    return {
        "report_version": 1,
        "session_dir": decision["session_dir"],
        "state": snap.state_status,
        "state_problem": problem,
        "project": doc.get("project"),
        "workflow": decision["workflow"],
        "crashed": orphan is not None,
        "orphan": orphan,
        "lease": decision["lease"],
        "current_step": current,
        "sub_step": decision["sub_step"] or (orphan or {}).get("sub_step") or recorded,
        "steps": steps,
        "possibly_incomplete": incomplete,
        "last_events": list(snap.last_events),
        "temp_files": list(snap.temp_files),
        "recommended": {
            "action": decision["action"],
            "session": decision["session"],
            "commands": decision["commands"],
            "alternatives": decision["alternatives"],
            "reasons": decision["reasons"],
            "warnings": decision["warnings"],
        },
    }
