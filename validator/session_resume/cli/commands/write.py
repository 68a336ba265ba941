"""The writer commands: `init`, `start`, `checkpoint`, `complete`, `skip`, `decide`,
`finding add|resolve`, `transition`, `session start|end` and `ping`.

Every state-changing command is exactly one atomic :func:`store.save` of a whole document
built by a pure function of :mod:`session_resume.transitions`, with ``expected_revision`` set
to the revision just loaded (the whole load-modify-save is retried up to
:data:`MAX_ATTEMPTS` times when another writer saved first), one worklog event, and a
heartbeat refresh of the session's lease (``00-session.active``).

Lease rules for a state write (DESIGN §6–7, spec §7):

* no lease (or one whose session ended): the write creates one (the id given with
  ``--session`` / ``$SESSION_RESUME_SESSION``, else a new id) and logs ``session_start``;
* a live lease: the write acts as its session, unless a *different* session id was given
  explicitly: then it is refused (SR511);
* an orphaned lease (stale heartbeat or dead owner pid) of another session: the write takes
  it over and logs ``takeover``; `start` of the step the orphan left in progress counts a
  new attempt.

The library functions (:func:`write_state`, :func:`init_session`, :func:`start_session`,
:func:`end_session`, :func:`ping_session`, :func:`archive_session`) are what the commands
call; other programs and tests can call them too.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from session_resume.cli.commands.common import (
    CommandError,
    config_for,
    diag_json,
    emit_json,
    now_from,
    print_diagnostics,
    root_of,
    session_dir_of,
)
from session_resume.core import write_moments as transitions
from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic, Severity
from session_resume.core.timeutil import format_ts
from session_resume.core.workflow import Workflow, WorkflowError, load_workflow, state_workflow_spec
from session_resume.core.write_moments import TransitionError
from session_resume.storage import lease_file as sentinel_mod
from session_resume.storage import store, worklog
from session_resume.storage.config import Config
from session_resume.storage.lease_file import Lease

ENV_SESSION = "SESSION_RESUME_SESSION"
MAX_ATTEMPTS = 3
LEASE_TAIL_EVENTS = 200  # enough of the worklog's tail to find the lease's session_end
_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")
_PROJECT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


# --- library -------------------------------------------------------------------------------


def default_owner() -> str:
    return os.environ.get("USER") or os.environ.get("USERNAME") or "unknown"


@dataclass(frozen=True)
class WriteContext:
    """Where and when a write happens, and as which session.

    ``session``: the caller's session id when given explicitly (``--session`` or
    ``$SESSION_RESUME_SESSION``), else None. ``default_workflow``: for a state without a
    ``workflow`` field.
    """

    session_dir: Path
    now: datetime
    root: Path | None = None
    session: str | None = None
    owner: str = field(default_factory=default_owner)
    stale_seconds: int = sentinel_mod.DEFAULT_STALE_SECONDS
    default_workflow: str = "apex"

    @property
    def store_session(self) -> store.Session:
        return store.Session(self.session_dir, self.root)

    @property
    def state_path(self) -> str:
        return str(self.session_dir / store.STATE)

    @property
    def sentinel_path(self) -> str:
        return str(self.session_dir / sentinel_mod.SENTINEL)


@dataclass
class Change:
    """A new document and the worklog event that describes it (one write, one line)."""

    document: dict[str, Any]
    event: str
    step: str | None = None
    sub_step: str | None = None
    detail: dict[str, Any] | None = None


# build(current document, workflow, lease_orphaned) -> Change; may raise TransitionError.
Build = Callable[[dict[str, Any], Workflow, bool], Change]


@dataclass
class WriteResult:
    revision: int
    document: dict[str, Any]
    session: str
    event: dict[str, Any] | None
    events: list[dict[str, Any]]  # every worklog line this write appended, in order
    step: str | None = None
    lease_action: str = "keep"  # keep | create | takeover
    previous_session: str | None = None
    attempts: int = 1  # load-modify-save rounds it took
    archived_to: str | None = None


@dataclass
class SessionResult:
    session: str | None
    action: str  # created | kept | takeover | ended | refreshed | none
    events: list[dict[str, Any]] = field(default_factory=list)
    lease: dict[str, Any] | None = None
    previous_session: str | None = None


@dataclass(frozen=True)
class LeasePlan:
    """What a write does about the lease: ``keep`` it (act as its session), ``create`` one,
    or ``takeover`` another session's lease (``orphaned``: that session crashed)."""

    action: str
    session: str
    lease: Lease
    orphaned: bool = False

    @property
    def previous(self) -> str | None:
        s = self.lease.sentinel
        return s.get("session") if s is not None and self.action == "takeover" else None


class _LeaseChanged(Exception):
    """The lease changed between assessing it and acquiring it: start over."""


def read_lease(ctx: WriteContext) -> Lease:
    """The lease of the session directory now (none when there is no valid sentinel)."""
    d = ctx.session_dir
    path = d / sentinel_mod.SENTINEL
    sent, problems = sentinel_mod.read(d)
    if problems and os.path.lexists(path) and os.path.isdir(path) and not os.path.islink(path):
        raise CommandError(
            problems
            + [
                diag(
                    "SR510",
                    "the sentinel path is a directory; remove it before starting a session",
                    file=str(path),
                )
            ]
        )
    ended = False
    if sent is not None:
        tail = worklog.read_tail(d / worklog.WORKLOG, LEASE_TAIL_EVENTS)
        ended = any(
            e.get("event") == "session_end" and e.get("session") == sent.get("session")
            for e in tail.events
        )
    return sentinel_mod.lease_state(
        sent,
        now=ctx.now,
        ended=ended,
        owner_alive=sentinel_mod.owner_alive(sent),
        stale_seconds=ctx.stale_seconds,
    )


def _holder_text(lease: Lease) -> str:
    s = lease.sentinel or {}
    age = "" if lease.age_seconds is None else f", heartbeat {round(lease.age_seconds)} s ago"
    return f"session {s.get('session')} (owner {s.get('owner') or '?'}{age})"


def plan_lease(
    lease: Lease,
    *,
    session: str | None,
    claim: bool = False,
    takeover: bool = False,
    file: str = "",
) -> LeasePlan:
    """Decide what to do about ``lease`` (pure apart from minting a new session id).

    ``session``: the caller's explicit id or None. ``claim``: the caller starts a new
    session (`session start`), so a live lease of any other session is in the way.
    ``takeover``: a live lease may be taken over (logged). Raises SR511 otherwise.
    """
    holder = (lease.sentinel or {}).get("session")
    if lease.state in ("none", "ended", "unreadable") or not isinstance(holder, str):
        return LeasePlan("create", session or sentinel_mod.new_session_id(), lease)
    if session is not None and session == holder:
        return LeasePlan("keep", holder, lease)
    if lease.state == "live":
        if session is None and not claim:
            return LeasePlan("keep", holder, lease)
        if takeover:
            return LeasePlan("takeover", session or sentinel_mod.new_session_id(), lease)
        raise CommandError(
            [
                diag(
                    "SR511",
                    f"{_holder_text(lease)} holds the lease of this session directory"
                    + (f"; session {session} may not write" if session else "")
                    + ". Nothing was written: wait for it to end (`session-resume session "
                    "end`), or take over with `session-resume session start --takeover` "
                    "(logged)",
                    file=file,
                )
            ]
        )
    # stale or dead owner: an orphan, which any other session may take over
    return LeasePlan("takeover", session or sentinel_mod.new_session_id(), lease, orphaned=True)


def _check_same_lease(ctx: WriteContext, plan: LeasePlan) -> None:
    sent, _ = sentinel_mod.read(ctx.session_dir)
    if sent != plan.lease.sentinel:
        raise _LeaseChanged


def _acquire(
    ctx: WriteContext,
    plan: LeasePlan,
    *,
    log_start: bool,
    pid: int | None = None,
    owner: str | None = None,
) -> list[dict[str, Any]]:
    """Write the new lease of ``plan`` (create or takeover) under the session lock and log
    ``takeover`` (or ``session_start`` when ``log_start``). Raises _LeaseChanged if another
    process changed the lease since it was assessed."""
    d = ctx.session_dir
    ts = format_ts(ctx.now)
    events: list[dict[str, Any]] = []
    with store.locked(ctx.store_session):
        _check_same_lease(ctx, plan)
        new = sentinel_mod.make(plan.session, owner=owner or ctx.owner, now=ctx.now, pid=pid)
        if plan.action == "takeover":
            prev = plan.lease.sentinel or {}
            detail: dict[str, Any] = {
                "previous": prev.get("session"),
                "previous_owner": prev.get("owner"),
                "orphaned": plan.orphaned,
                "reason": plan.lease.state,
            }
            if plan.lease.age_seconds is not None:
                detail["silent_seconds"] = round(plan.lease.age_seconds)
            events.append(worklog.append(d, "takeover", ts=ts, session=plan.session, detail=detail))
        elif log_start:
            detail = {"owner": new["owner"]}
            if pid is not None:
                detail["pid"] = pid
            events.append(
                worklog.append(d, "session_start", ts=ts, session=plan.session, detail=detail)
            )
        sentinel_mod.write(d, new)
    return events


def _refresh(ctx: WriteContext, session: str) -> dict[str, Any] | None:
    """Refresh the heartbeat of ``session``'s lease (if it still holds it)."""
    with store.locked(ctx.store_session):
        sent, _ = sentinel_mod.read(ctx.session_dir)
        if sent is None or sent.get("session") != session:
            return sent
        sent = {**sent, "heartbeat": format_ts(ctx.now)}
        sentinel_mod.write(ctx.session_dir, sent)
        return sent


def _located(diags: list[Diagnostic], file: str) -> list[Diagnostic]:
    return [d if d.file else replace(d, file=file) for d in diags]


def refuse_unwritable(loaded: store.Loaded, ctx: WriteContext) -> None:
    """Raise SR161 (with the right advice) unless the loaded state may be changed."""
    if loaded.status == "ok":
        return
    f = ctx.state_path
    d = ctx.session_dir
    if loaded.status == "absent" and loaded.backup_usable:
        raise CommandError(
            [
                diag(
                    "SR161",
                    f"the state file is missing but {store.BAK} is a valid state; run "
                    f"`session-resume recover {d}` to restore it (nothing was written)",
                    file=f,
                )
            ]
        )
    msg = {
        "absent": f"there is no state file in {d}; run `session-resume init PROJECT` first",
        "needs_migration": f"the state file is schema version {loaded.version}; run "
        f"`session-resume migrate {d}` first (nothing was written)",
        "corrupt": "the state file is corrupt; run `session-resume recover "
        f"{d}` first (it restores {'.bak' if loaded.backup_usable else 'a fresh state'})",
        "too_new": f"the state file is schema version {loaded.version}, newer than this tool "
        "knows; upgrade session-resume (nothing was written)",
        "invalid": "the state file does not match the 3.0 schema; fix the problems "
        f"`session-resume validate {d}` lists (nothing was written)",
        "bad_version": "the state file's schema_version is not a known version; fix it by "
        "hand (nothing was written)",
        "refused": "refusing to use this session directory (nothing was written)",
    }.get(loaded.status, f"the state file is {loaded.status}")
    raise CommandError([diag("SR161", msg, file=f), *_located(loaded.diagnostics, f)])


def _workflow_of(doc: dict[str, Any] | None, spec: str | None, default: str) -> Workflow:
    own = doc.get("workflow") if doc is not None else None
    try:
        return load_workflow(spec or state_workflow_spec(own, default))
    except WorkflowError as exc:
        raise CommandError(exc.diagnostics) from None


def write_state(ctx: WriteContext, build: Build) -> WriteResult:
    """Load, check, build, acquire the lease, save (one write, one event), refresh the
    heartbeat. Retried from the load when another writer saved first (up to MAX_ATTEMPTS)."""
    s = ctx.store_session
    conflict: list[Diagnostic] = []
    before: list[dict[str, Any]] = []
    acquired: LeasePlan | None = None
    orphan_seen = False
    for attempt in range(1, MAX_ATTEMPTS + 1):
        loaded = store.load(s)
        refuse_unwritable(loaded, ctx)
        assert loaded.document is not None
        wf = _workflow_of(loaded.document, None, ctx.default_workflow)
        plan = plan_lease(read_lease(ctx), session=ctx.session, file=ctx.sentinel_path)
        orphaned = orphan_seen or plan.orphaned
        try:
            change = build(loaded.document, wf, orphaned)
        except TransitionError as exc:
            raise CommandError(_located(exc.diagnostics, ctx.state_path)) from None
        if plan.action != "keep":
            try:
                before += _acquire(ctx, plan, log_start=True)
            except _LeaseChanged:
                continue
            acquired = plan
            orphan_seen = orphan_seen or plan.orphaned
        try:
            res = store.save(
                s,
                change.document,
                now=ctx.now,
                expected_revision=loaded.revision,
                workflow=wf,
                event=change.event,
                event_step=change.step,
                event_sub_step=change.sub_step,
                event_detail=change.detail,
                session_id=plan.session,
            )
        except store.ConflictError as exc:
            conflict = exc.diagnostics
            continue
        except store.StoreError as exc:
            raise CommandError(_located(exc.diagnostics, ctx.state_path)) from None
        _refresh(ctx, plan.session)
        events = [*before, *([res.worklog_event] if res.worklog_event else [])]
        return WriteResult(
            revision=res.revision,
            document=res.document,
            session=plan.session,
            event=res.worklog_event,
            events=events,
            step=change.step,
            lease_action=acquired.action if acquired else "keep",
            previous_session=acquired.previous if acquired else None,
            attempts=attempt,
        )
    raise CommandError(
        conflict
        + [
            diag(
                "SR162",
                f"gave up after {MAX_ATTEMPTS} attempts: other writers keep changing the "
                "state; run the command again",
                file=ctx.state_path,
            )
        ]
    )


def archive_session(
    session_dir: str | os.PathLike[str],
    now: datetime,
    *,
    project: str | None = None,
    root: str | os.PathLike[str] | None = None,
    keep: int = 5,
) -> Path | None:
    """Archive the session's protocol files for ``init --fresh`` (the lease stays: the same
    session goes on); see :func:`session_resume.archive.archive_session`. Returns the archive
    folder, or None when there was nothing to archive."""
    from session_resume.storage.archive import archive_session as archive

    res = archive(session_dir, now=now, keep=keep, label=project, include_lease=False, root=root)
    return Path(res.archived_to) if res.archived_to else None


def init_session(
    ctx: WriteContext, project: str, *, workflow: str | None = None, fresh: bool = False
) -> WriteResult:
    """Create the session's state from the workflow template (``revision`` 1). An existing
    state is refused unless ``fresh``: then the old files are archived first."""
    wf = _workflow_of(None, workflow, ctx.default_workflow)
    try:
        doc = transitions.init_state(wf, project, ctx.now)
    except TransitionError as exc:
        raise CommandError(_located(exc.diagnostics, ctx.state_path)) from None
    ctx.session_dir.mkdir(parents=True, exist_ok=True)
    s = ctx.store_session
    loaded = store.load(s)
    if loaded.status == "refused":
        refuse_unwritable(loaded, ctx)
    plan = plan_lease(read_lease(ctx), session=ctx.session, file=ctx.sentinel_path)
    archived = None
    if loaded.status == "absent" and loaded.backup_usable and not fresh:
        # A later save would rotate the new state over the only good copy of the old one.
        raise CommandError(
            [
                diag(
                    "SR710",
                    f"{ctx.state_path} is missing but {store.BAK} holds a valid state; "
                    f"restore it with `session-resume recover {ctx.session_dir}`, or start "
                    f"over with `session-resume init {project} --fresh` (it is archived, "
                    "not deleted)",
                    file=ctx.state_path,
                )
            ]
        )
    if loaded.status != "absent" and not fresh:
        old = loaded.document or {}
        what = (
            f"revision {loaded.revision}, project {old.get('project')!r}"
            if loaded.status == "ok"
            else loaded.status
        )
        raise CommandError(
            [
                diag(
                    "SR710",
                    f"{ctx.state_path} already exists ({what}); to continue it run "
                    f"`session-resume resume {ctx.session_dir}`, or start over with "
                    f"`session-resume init {project} --fresh` (the old files are "
                    "archived under .archive/, nothing is deleted)",
                    file=ctx.state_path,
                )
            ]
        )
    if fresh:
        old_project = (loaded.document or {}).get("project")
        try:
            archived = archive_session(
                ctx.session_dir,
                ctx.now,
                project=old_project if isinstance(old_project, str) else project,
                root=ctx.root,
            )
        except store.StoreError as exc:
            raise CommandError(exc.diagnostics) from None
    before: list[dict[str, Any]] = []
    if plan.action != "keep":
        try:
            before = _acquire(ctx, plan, log_start=False)
        except _LeaseChanged:
            raise CommandError(
                [
                    diag(
                        "SR511",
                        "another session changed the lease while this init ran; nothing "
                        "was written, run it again",
                        file=ctx.state_path,
                    )
                ]
            ) from None
    detail: dict[str, Any] = {"note": "init", "project": project, "workflow": wf.id}
    if archived is not None:
        detail["archived_to"] = archived.relative_to(ctx.session_dir).as_posix()
    # A session that already held the lease (and keeps its worklog) has logged its start.
    event = "note" if plan.action == "keep" and archived is None else "session_start"
    try:
        res = store.save(
            s,
            doc,
            now=ctx.now,
            expected_revision=0,
            workflow=wf,
            event=event,
            event_detail=detail,
            session_id=plan.session,
        )
    except store.StoreError as exc:
        raise CommandError(_located(exc.diagnostics, ctx.state_path)) from None
    _refresh(ctx, plan.session)
    return WriteResult(
        revision=res.revision,
        document=res.document,
        session=plan.session,
        event=res.worklog_event,
        events=[*before, *([res.worklog_event] if res.worklog_event else [])],
        lease_action=plan.action,
        previous_session=plan.previous,
        archived_to=str(archived) if archived is not None else None,
    )


def start_session(
    ctx: WriteContext,
    *,
    owner: str | None = None,
    pid: int | None = None,
    takeover: bool = False,
) -> SessionResult:
    """`session start`: create the lease (logging ``session_start``), keep it when the
    caller's own session already holds it, or take over an orphaned lease, or a live one
    with ``takeover`` (logging ``takeover``). A live lease of another session: SR511."""
    ctx.session_dir.mkdir(parents=True, exist_ok=True)
    for _ in range(MAX_ATTEMPTS):
        lease = read_lease(ctx)
        plan = plan_lease(
            lease, session=ctx.session, claim=True, takeover=takeover, file=ctx.sentinel_path
        )
        if plan.action == "keep":
            with store.locked(ctx.store_session):
                sent, _ = sentinel_mod.read(ctx.session_dir)
                if sent is None or sent.get("session") != plan.session:
                    continue
                sent = {**sent, "heartbeat": format_ts(ctx.now)}
                if owner:
                    sent["owner"] = owner
                if pid is not None:
                    sent["pid"] = pid
                sentinel_mod.write(ctx.session_dir, sent)
            return SessionResult(plan.session, "kept", lease=sent)
        try:
            events = _acquire(ctx, plan, log_start=True, pid=pid, owner=owner)
        except _LeaseChanged:
            continue
        sent, _ = sentinel_mod.read(ctx.session_dir)
        return SessionResult(
            plan.session,
            "takeover" if plan.action == "takeover" else "created",
            events,
            sent,
            plan.previous,
        )
    raise CommandError([diag("SR511", "the lease keeps changing; try again", file=ctx.state_path)])


def end_session(ctx: WriteContext) -> SessionResult:
    """`session end`: log ``session_end`` for the lease's session and remove the sentinel.
    Refused (SR511) for a live lease of another session named explicitly."""
    if not ctx.session_dir.is_dir():
        return SessionResult(None, "none")
    with store.locked(ctx.store_session):
        lease = read_lease(ctx)
        holder = (lease.sentinel or {}).get("session")
        if lease.state == "none" or not isinstance(holder, str):
            return SessionResult(None, "none")
        if lease.state == "live" and ctx.session is not None and ctx.session != holder:
            plan_lease(lease, session=ctx.session, file=ctx.sentinel_path)  # raises SR511
        events = []
        if lease.state != "ended":
            detail: dict[str, Any] = {}
            if lease.orphaned:
                detail = {"orphaned": True, "reason": lease.state}
                if ctx.session is not None:
                    detail["ended_by"] = ctx.session
            events.append(
                worklog.append(
                    ctx.session_dir,
                    "session_end",
                    ts=format_ts(ctx.now),
                    session=holder,
                    detail=detail or None,
                )
            )
        sentinel_mod.remove(ctx.session_dir)
    return SessionResult(holder, "ended", events, None)


def ping_session(ctx: WriteContext) -> SessionResult:
    """`ping`: refresh the lease's heartbeat; writes only the sentinel (no state write, no
    worklog line)."""
    if not ctx.session_dir.is_dir():
        raise CommandError(_no_lease(ctx))
    with store.locked(ctx.store_session):
        lease = read_lease(ctx)
        holder = (lease.sentinel or {}).get("session")
        if lease.state in ("none", "ended", "unreadable") or not isinstance(holder, str):
            raise CommandError(_no_lease(ctx))
        mine = ctx.session is None or ctx.session == holder
        if lease.state == "live" and not mine:
            plan_lease(lease, session=ctx.session, file=ctx.sentinel_path)  # raises SR511
        if lease.orphaned and ctx.session != holder:
            raise CommandError(
                [
                    diag(
                        "SR512",
                        f"the lease of {_holder_text(lease)} is orphaned ({lease.state}); a "
                        "ping does not revive another session: take it over with "
                        "`session-resume session start` (or any write)",
                        file=str(ctx.session_dir / sentinel_mod.SENTINEL),
                        severity=Severity.ERROR,
                    )
                ]
            )
        sent = {**(lease.sentinel or {}), "heartbeat": format_ts(ctx.now)}
        sentinel_mod.write(ctx.session_dir, sent)
    return SessionResult(holder, "refreshed", lease=sent)


def _no_lease(ctx: WriteContext) -> list[Diagnostic]:
    return [
        diag(
            "SR514",
            f"no session holds a lease in {ctx.session_dir}; run `session-resume session "
            "start` first",
            file=str(ctx.session_dir / sentinel_mod.SENTINEL),
        )
    ]


# --- builds (pure, over transitions) ----------------------------------------------------------


def _step_record(doc: dict[str, Any], key: str | None) -> dict[str, Any] | None:
    if key is None:
        return None
    step = (doc.get("steps") or {}).get(key)
    return {"key": key, **step} if isinstance(step, dict) else None


def build_start(key: str, now: datetime, *, force: bool, name: str | None) -> Build:
    def build(doc: dict[str, Any], wf: Workflow, orphaned: bool) -> Change:
        old = (doc.get("steps") or {}).get(key)
        old_status = old.get("status") if isinstance(old, dict) else None
        restart_orphan = orphaned and old_status == "in_progress"
        new = transitions.start(doc, wf, key, now, force=force, orphaned=restart_orphan, name=name)
        step = new["steps"][key]
        detail: dict[str, Any] = {"attempts": step.get("attempts")}
        if old_status == "in_progress":
            detail["restart"] = True
        if restart_orphan:
            detail["orphaned"] = True
        if old_status in ("complete", "skipped"):
            detail["rerun"] = old_status
        interrupted = [
            k
            for k, s in (doc.get("steps") or {}).items()
            if k != key and isinstance(s, dict) and s.get("status") == "in_progress"
        ]
        if interrupted:
            detail["interrupted"] = interrupted
        if force:
            detail["forced"] = True
        return Change(new, "step_start", key, None, detail)

    return build


def build_checkpoint(
    key: str, sub_step: str, artifacts: list[str], context_files: list[str]
) -> Build:
    def build(doc: dict[str, Any], wf: Workflow, orphaned: bool) -> Change:
        new = transitions.checkpoint(doc, wf, key, sub_step, artifacts, context_files)
        written = new["steps"][key]["sub_step"]
        detail: dict[str, Any] = {}
        if artifacts:
            detail["artifacts"] = artifacts
        if context_files:
            detail["context_files"] = context_files
        if written != sub_step:
            detail["legacy_id"] = sub_step
        return Change(new, "checkpoint", key, written, detail or None)

    return build


def build_complete(key: str, now: datetime) -> Build:
    def build(doc: dict[str, Any], wf: Workflow, orphaned: bool) -> Change:
        return Change(transitions.complete(doc, wf, key, now), "step_complete", key)

    return build


def build_skip(key: str, reason: str, now: datetime, *, force: bool) -> Build:
    def build(doc: dict[str, Any], wf: Workflow, orphaned: bool) -> Change:
        new = transitions.skip(doc, wf, key, reason, now, force=force)
        detail: dict[str, Any] = {"reason": reason}
        if force:
            detail["forced"] = True
        return Change(new, "step_skip", key, None, detail)

    return build


def build_set_decision(key: str, value: Any) -> Build:
    def build(doc: dict[str, Any], wf: Workflow, orphaned: bool) -> Change:
        new = transitions.set_decision(doc, wf, key, value)
        detail: dict[str, Any] = {"key": key, "value": value}
        old = doc.get("decisions") or {}
        if key in old:
            detail["previous"] = old[key]
        return Change(new, "decision", None, None, detail)

    return build


def build_log_decision(
    title: str,
    choice: str,
    rationale: str,
    now: datetime,
    *,
    step: str | None = None,
    alternatives: list[str] | None = None,
) -> Build:
    def build(doc: dict[str, Any], wf: Workflow, orphaned: bool) -> Change:
        new = transitions.log_decision(
            doc, title, choice, rationale, step, alternatives or (), now=now, wf=wf
        )
        entry = new["decision_log"][-1]
        detail = {"id": entry["id"], "title": title, "choice": choice}
        return Change(new, "decision", step, None, detail)

    return build


def build_finding(action: str, title: str) -> Build:
    def build(doc: dict[str, Any], wf: Workflow, orphaned: bool) -> Change:
        if action == "add":
            new = transitions.add_finding(doc, title)
            detail: dict[str, Any] = {"title": title}
            if title in (doc.get("open_findings") or []):
                detail["already_open"] = True
            return Change(new, "finding_add", None, None, detail)
        new = transitions.resolve_finding(doc, title)
        return Change(new, "finding_resolve", None, None, {"title": title})

    return build


def build_transition(
    complete_key: str, start_key: str, decisions: dict[str, Any], now: datetime, *, force: bool
) -> Build:
    def build(doc: dict[str, Any], wf: Workflow, orphaned: bool) -> Change:
        new = transitions.transition(doc, wf, complete_key, start_key, decisions, now, force)
        detail: dict[str, Any] = {
            "completed": complete_key,
            "decisions": decisions,
            "attempts": new["steps"][start_key].get("attempts"),
        }
        if force:
            detail["forced"] = True
        return Change(new, "step_start", start_key, None, detail)

    return build


# --- command line --------------------------------------------------------------------------


def _common(project: bool = True) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("session")
    where = g.add_mutually_exclusive_group()
    where.add_argument(
        "--session-dir",
        metavar="DIR",
        help="the session directory (or its state file)",
    )
    if project:
        where.add_argument(
            "--project",
            metavar="NAME",
            help="the project: the session directory is the workflow's session_dir pattern "
            "(default agent-output/{project}) under the repository root",
        )
    g.add_argument("--root", metavar="DIR", help="repository root (default: from config/.git)")
    g.add_argument("--now", metavar="TIMESTAMP", help="the time of the write (default: clock)")
    g.add_argument("--format", choices=["text", "json"], default="text")
    g.add_argument(
        "--session",
        metavar="ID",
        help=f"this session's id (default: ${ENV_SESSION}); a live lease of another session "
        "refuses the write (SR511)",
    )
    return p


def add_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    common = _common()
    common_init = _common(project=False)

    p = sub.add_parser(
        "init",
        parents=[common_init],
        help="create the session's state from the workflow template",
        description="Create 00-session-state.json for PROJECT with every step pending "
        "(revision 1). An existing state is refused unless --fresh, which first moves the "
        "old session's files into .archive/<UTC stamp>_<project>/ (nothing is deleted).",
    )
    p.add_argument("project", metavar="PROJECT")
    p.add_argument("--workflow", metavar="NAME|PATH", help="apex, dotagent, generic or a file")
    p.add_argument("--fresh", action="store_true", help="archive an existing session first")
    p.set_defaults(func=run_init)

    p = sub.add_parser(
        "start",
        parents=[common],
        help="write moment 1: a step starts (pending → in_progress)",
        description="Set the step in_progress, started = now. A step already in progress is "
        "restarted (after a crashed session: attempts + 1). Refused (SR710) when the step is "
        "complete or skipped, another step is in progress, or earlier steps are neither "
        "complete nor skipped, unless --force.",
    )
    p.add_argument("step", metavar="STEP")
    p.add_argument("--force", action="store_true", help="re-run, or start out of order")
    p.add_argument("--name", help="name of a new step (free-steps workflows only)")
    p.set_defaults(func=run_start)

    p = sub.add_parser(
        "checkpoint",
        parents=[common],
        help="write moment 2: a sub-step checkpoint is reached",
        description="Record SUB_STEP (a checkpoint id of the step in the workflow) for the "
        "step in progress and append artifacts and context files (deduplicated, "
        "repository-relative).",
    )
    p.add_argument("step", metavar="STEP")
    p.add_argument("sub_step", metavar="SUB_STEP")
    p.add_argument("--artifact", action="append", default=[], metavar="PATH")
    p.add_argument("--context-file", action="append", default=[], metavar="PATH")
    p.set_defaults(func=run_checkpoint)

    p = sub.add_parser(
        "complete",
        parents=[common],
        help="write moment 3: a step is done (in_progress → complete)",
    )
    p.add_argument("step", metavar="STEP")
    p.set_defaults(func=run_complete)

    p = sub.add_parser(
        "skip",
        parents=[common],
        help="skip a pending or in-progress step (optional steps; others with --force)",
    )
    p.add_argument("step", metavar="STEP")
    p.add_argument("--reason", required=True, help="why the step is skipped")
    p.add_argument("--force", action="store_true", help="skip a step that is not optional")
    p.set_defaults(func=run_skip)

    p = sub.add_parser(
        "decide",
        parents=[common],
        help="write moment 4: record a decision (decisions[KEY] = VALUE, or --log)",
        description="`decide KEY VALUE` sets a decision (checked against the workflow's "
        "allowed values). `decide --log --title T --choice C --rationale R` appends to "
        "decision_log with the next id (D001, D002, ...).",
    )
    p.add_argument("key", nargs="?", metavar="KEY")
    p.add_argument("value", nargs="?", metavar="VALUE")
    p.add_argument("--log", action="store_true", help="append to decision_log instead")
    p.add_argument("--title")
    p.add_argument("--choice")
    p.add_argument("--rationale")
    p.add_argument("--step", dest="decision_step", metavar="STEP")
    p.add_argument("--alternative", action="append", default=[], metavar="TEXT")
    p.set_defaults(func=run_decide)

    p = sub.add_parser("finding", help="write moment 5: open or resolve a review finding")
    fsub = p.add_subparsers(dest="finding_action", metavar="ACTION")
    fsub.required = True
    for action, text in (("add", "add an open finding"), ("resolve", "resolve a finding")):
        fp = fsub.add_parser(action, parents=[common], help=text)
        fp.add_argument("title", metavar="TITLE")
        fp.set_defaults(func=run_finding, finding_action=action)

    p = sub.add_parser(
        "transition",
        parents=[common],
        help="an orchestrator gate in one write: complete A, record decisions, start B",
    )
    p.add_argument("--complete", required=True, metavar="A", dest="complete_step")
    p.add_argument("--start", required=True, metavar="B", dest="start_step")
    p.add_argument("--decision", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--force", action="store_true", help="start B out of order")
    p.set_defaults(func=run_transition)

    p = sub.add_parser("session", help="start or end a session (the lease 00-session.active)")
    ssub = p.add_subparsers(dest="session_action", metavar="ACTION")
    ssub.required = True
    sp = ssub.add_parser(
        "start",
        parents=[common],
        help="take the lease; prints the session id",
        description="Create the lease (00-session.active) and print the new session id "
        "(export it as SESSION_RESUME_SESSION). A live lease of another session refuses "
        "(SR511) unless --takeover; an orphaned one is taken over. Both are logged.",
    )
    sp.add_argument("--owner", help="who runs the session (default: $USER)")
    sp.add_argument("--pid", type=int, help="a long-lived owner process whose death ends it")
    sp.add_argument("--takeover", action="store_true", help="take over a live lease (logged)")
    sp.set_defaults(func=run_session_start)
    sp = ssub.add_parser("end", parents=[common], help="log session_end and remove the lease")
    sp.set_defaults(func=run_session_end)

    p = sub.add_parser(
        "ping",
        parents=[common],
        help="refresh the lease's heartbeat (writes only the sentinel)",
    )
    p.set_defaults(func=run_ping)


def _usage(message: str) -> Exception:
    from session_resume.cli.main import UsageError

    return UsageError(message)


def _context(args: argparse.Namespace, *, project: str | None = None) -> WriteContext:
    cfg: Config = config_for(args.root)
    root = root_of(args.root, cfg)
    now = now_from(args.now)
    session = args.session or os.environ.get(ENV_SESSION) or None
    if session is not None and not _SESSION_ID.match(session):
        raise _usage(
            f"--session: {session!r} is not a session id (letters, digits and . _ : @ -, "
            "at most 128 characters)"
        )
    project = project or getattr(args, "project", None)
    if args.session_dir:
        session_dir = session_dir_of(args.session_dir)
    elif project:
        if not _PROJECT.match(project):
            raise _usage(
                f"project name {project!r} is not allowed (letters, digits, `.`, `_`, `-`, "
                "starting with a letter or digit)"
            )
        spec = getattr(args, "workflow", None) or cfg.workflow or "apex"
        wf = _workflow_of(None, spec, "apex")
        session_dir = root / wf.session_dir.replace("{project}", project)
    else:
        raise _usage("give the session with --session-dir DIR or --project NAME")
    return WriteContext(
        session_dir=Path(os.path.abspath(session_dir)),
        now=now,
        root=root,
        session=session,
        stale_seconds=cfg.stale_after_seconds,
        default_workflow=cfg.workflow or "apex",
    )


def _command(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Refusals: coded diagnostics on stderr (text) or {"ok": false, ...} on stdout (json)."""

    @functools.wraps(fn)
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except CommandError as exc:
            if args.format == "json":
                emit_json({"ok": False, "diagnostics": diag_json(exc.diagnostics)})
            else:
                print_diagnostics(exc.diagnostics, sys.stderr)
            return exc.exit_code

    return run


def _emit(args: argparse.Namespace, res: WriteResult, text: str) -> int:
    if args.format == "json":
        out: dict[str, Any] = {
            "ok": True,
            "revision": res.revision,
            "step": _step_record(res.document, res.step),
            "event": res.event,
            "events": res.events,
            "session": res.session,
            "lease": res.lease_action,
        }
        if res.previous_session is not None:
            out["previous_session"] = res.previous_session
        if res.archived_to is not None:
            out["archived_to"] = res.archived_to
        emit_json(out)
        return 0
    if res.lease_action == "takeover":
        sys.stdout.write(
            f"took over the lease of session {res.previous_session} (logged); "
            f"this is session {res.session}\n"
        )
    elif res.lease_action == "create":
        sys.stdout.write(f"started session {res.session} (lease 00-session.active)\n")
    sys.stdout.write(f"{text} (revision {res.revision})\n")
    return 0


def _step_label(res: WriteResult, key: str) -> str:
    step = (res.document.get("steps") or {}).get(key) or {}
    name = step.get("name")
    return f"step {key} ({name})" if name else f"step {key}"


@_command
def run_init(args: argparse.Namespace) -> int:
    ctx = _context(args, project=args.project)
    res = init_session(ctx, args.project, workflow=args.workflow, fresh=args.fresh)
    if args.format == "text" and res.archived_to:
        sys.stdout.write(f"archived the previous session's files to {res.archived_to}\n")
    wf = res.document.get("workflow")
    return _emit(
        args,
        res,
        f"initialised {ctx.state_path} (project {args.project}, workflow {wf}, "
        f"{len(res.document.get('steps') or {})} steps pending)",
    )


@_command
def run_start(args: argparse.Namespace) -> int:
    ctx = _context(args)
    res = write_state(ctx, build_start(args.step, ctx.now, force=args.force, name=args.name))
    detail = (res.event or {}).get("detail") or {}
    extra = ""
    if detail.get("restart"):
        extra = f", restarted (attempt {detail.get('attempts')})"
    return _emit(args, res, f"{_step_label(res, args.step)}: in_progress{extra}")


@_command
def run_checkpoint(args: argparse.Namespace) -> int:
    ctx = _context(args)
    res = write_state(
        ctx, build_checkpoint(args.step, args.sub_step, args.artifact, args.context_file)
    )
    sub = res.document["steps"][args.step]["sub_step"]
    return _emit(args, res, f"{_step_label(res, args.step)}: checkpoint {sub}")


@_command
def run_complete(args: argparse.Namespace) -> int:
    ctx = _context(args)
    res = write_state(ctx, build_complete(args.step, ctx.now))
    return _emit(args, res, f"{_step_label(res, args.step)}: complete")


@_command
def run_skip(args: argparse.Namespace) -> int:
    ctx = _context(args)
    res = write_state(ctx, build_skip(args.step, args.reason, ctx.now, force=args.force))
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
        res = write_state(
            ctx,
            build_log_decision(
                args.title,
                args.choice,
                args.rationale,
                ctx.now,
                step=args.decision_step,
                alternatives=args.alternative,
            ),
        )
        entry = res.document["decision_log"][-1]
        return _emit(args, res, f"decision {entry['id']} logged: {args.title} → {args.choice}")
    if args.key is None or args.value is None:
        raise _usage("decide needs KEY VALUE, or --log --title T --choice C --rationale R")
    if args.title or args.choice or args.rationale or args.decision_step or args.alternative:
        raise _usage("--title, --choice, --rationale, --step and --alternative go with --log")
    ctx = _context(args)
    res = write_state(ctx, build_set_decision(args.key, args.value))
    return _emit(args, res, f"decision {args.key} = {args.value}")


@_command
def run_finding(args: argparse.Namespace) -> int:
    ctx = _context(args)
    res = write_state(ctx, build_finding(args.finding_action, args.title))
    n = len(res.document.get("open_findings") or [])
    verb = "added" if args.finding_action == "add" else "resolved"
    return _emit(args, res, f"finding {verb}: {args.title} ({n} open)")


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
    res = write_state(
        ctx,
        build_transition(args.complete_step, args.start_step, decisions, ctx.now, force=args.force),
    )
    text = (
        f"{_step_label(res, args.complete_step)}: complete; "
        f"{_step_label(res, args.start_step)}: in_progress"
    )
    if decisions:
        text += "; decisions: " + ", ".join(f"{k}={v}" for k, v in decisions.items())
    return _emit(args, res, text)


def _emit_session(args: argparse.Namespace, res: SessionResult, text: str) -> int:
    if args.format == "json":
        out: dict[str, Any] = {
            "ok": True,
            "session": res.session,
            "action": res.action,
            "events": res.events,
            "lease": res.lease,
        }
        if res.previous_session is not None:
            out["previous_session"] = res.previous_session
        emit_json(out)
    else:
        sys.stdout.write(text)
    return 0


@_command
def run_session_start(args: argparse.Namespace) -> int:
    ctx = _context(args)
    res = start_session(ctx, owner=args.owner, pid=args.pid, takeover=args.takeover)
    if res.action == "takeover" and args.format == "text":
        sys.stderr.write(
            f"session-resume: took over the lease of session {res.previous_session} (logged)\n"
        )
    return _emit_session(args, res, f"{res.session}\n")


@_command
def run_session_end(args: argparse.Namespace) -> int:
    ctx = _context(args)
    res = end_session(ctx)
    text = f"session {res.session} ended\n" if res.session else "no active session\n"
    return _emit_session(args, res, text)


@_command
def run_ping(args: argparse.Namespace) -> int:
    ctx = _context(args)
    res = ping_session(ctx)
    hb = (res.lease or {}).get("heartbeat")
    return _emit_session(args, res, f"session {res.session}: heartbeat {hb}\n")
