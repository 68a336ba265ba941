"""The write services: `init` and every write moment (start, checkpoint, complete, skip,
decide, finding, transition).

Every state-changing operation is exactly one atomic :func:`store.save` of a whole document
built by a pure function of :mod:`session_resume.core.changes`, with ``expected_revision`` set
to the revision just loaded (the whole load-modify-save is retried up to
:data:`MAX_ATTEMPTS` times when another writer saved first), one worklog event, and a
heartbeat refresh of the session's lease (``00-session.active``; for an owner with a timer of
its own, only of a heartbeat the timer let grow old: :func:`_heartbeat_due`).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from session_resume.core import changes, write_moments
from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.outcomes import LeaseAction
from session_resume.core.timeutil import format_ts
from session_resume.core.versions import CURRENT
from session_resume.core.workflow import Workflow, WorkflowError, load_workflow, state_workflow_spec
from session_resume.core.write_checks import one_form
from session_resume.core.write_moments import TransitionError
from session_resume.records import field, record, replace
from session_resume.services.context import Reading, WriteContext, make_session_dir
from session_resume.services.errors import ServiceError
from session_resume.services.leases import (
    LEASE_TAIL_EVENTS,
    MAX_ATTEMPTS,
    LeaseChanged,
    LeasePlan,
    acquire,
    no_lease_left_on_failure,
    plan_lease,
    read_lease,
    refresh_locked,
)
from session_resume.storage import store, worklog

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from session_resume.core.changes import Build


@record
class WriteResult:
    revision: int
    document: dict[str, Any]
    session: str
    event: dict[str, Any] | None
    events: list[dict[str, Any]]  # every worklog line this write appended, in order
    step: str | None = None
    lease_action: LeaseAction = "keep"
    previous_session: str | None = None
    attempts: int = 1  # load-modify-save rounds it took
    archived_to: str | None = None
    handoff: str | None = None  # the 00-handoff.md this write rendered (`approve`)
    warnings: list[Diagnostic] = field(default_factory=list)  # left unrecorded (SR716, SR717)

    @property
    def step_record(self) -> dict[str, Any] | None:
        """The step this write was about, with its key (None for a session-wide write)."""
        if self.step is None:
            return None
        step = (self.document.get("steps") or {}).get(self.step)
        return {"key": self.step, **step} if isinstance(step, dict) else None

    def to_json(
        self, warnings: Callable[[list[Diagnostic]], list[dict[str, Any]]] | None = None
    ) -> dict[str, Any]:
        """The write's answer as both front ends give it: the CLI's ``--format json`` and the
        MCP write tools' result (one mapping, so the two cannot drift). ``warnings`` words
        what the write left unrecorded (SR716, SR717) for the front end: CLI commands or tools."""
        out: dict[str, Any] = {
            "ok": True,
            "revision": self.revision,
            "step": self.step_record,
            "event": self.event,
            "events": self.events,
            "session": self.session,
            "lease": self.lease_action,
        }
        if self.previous_session is not None:
            out["previous_session"] = self.previous_session
        if self.archived_to is not None:
            out["archived_to"] = self.archived_to
        if self.handoff is not None:
            out["handoff"] = self.handoff
        if self.warnings:
            out["warnings"] = (warnings or _warnings_json)(self.warnings)
        return out


def _warnings_json(diags: list[Diagnostic]) -> list[dict[str, Any]]:
    return [d.to_json() for d in diags]


def _located(diags: list[Diagnostic], file: str) -> list[Diagnostic]:
    return [d if d.file else replace(d, file=file) for d in diags]


def refuse_unwritable(loaded: store.Loaded, ctx: WriteContext) -> None:
    """Raise SR161 (with the right advice) unless the loaded state may be changed."""
    if loaded.status == "ok":
        return
    f = ctx.state_path
    d = ctx.session_dir
    if loaded.status == "absent" and loaded.backup_usable:
        raise ServiceError(
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
        "absent": f"there is no state file in {d}; run `session-resume init PROJECT"
        + (f" --workflow {shlex.quote(ctx.init_workflow)}" if ctx.init_workflow else "")
        + "` first",
        "needs_migration": f"the state file is schema version {loaded.version}; run "
        f"`session-resume migrate {d}` first (nothing was written)",
        "corrupt": "the state file is corrupt; run `session-resume recover "
        f"{d}` first (it restores {'.bak' if loaded.backup_usable else 'a fresh state'})",
        "too_new": f"the state file is schema version {loaded.version}, newer than this tool "
        "knows; upgrade session-resume (nothing was written)",
        "invalid": f"the state file does not match the {CURRENT} schema; "
        + (
            f"run `session-resume {fix} {d}`: it repairs the file (nothing was written)"
            if (fix := _repair_command(loaded, ctx))
            else f"fix the problems `session-resume validate {d}` lists (nothing was written)"
        ),
        "bad_version": "the state file's schema_version is not a known version; fix it by "
        "hand (nothing was written)",
        "refused": "refusing to use this session directory (nothing was written)",
    }.get(loaded.status, f"the state file is {loaded.status}")
    raise ServiceError([diag("SR161", msg, file=f), *_located(loaded.diagnostics, f)])


def _repair_command(loaded: store.Loaded, ctx: WriteContext) -> str | None:
    """``migrate`` (or ``migrate --salvage``) when it would repair the loaded state."""
    if not isinstance(loaded.document, dict):
        return None
    # lazy: the migration chain only for a state that needs it, not on every write
    from session_resume.core.migration import repair_command

    return repair_command(
        loaded.document, now=ctx.now, project_hint=Path(ctx.session_dir).resolve().name
    )


def _with_repair_advice(
    diags: list[Diagnostic], loaded: store.Loaded, ctx: WriteContext
) -> list[Diagnostic]:
    """A write refused (SR161) because the state on disk already breaks a rule: name
    `migrate` when it repairs the file (docs/spec.md §9.5)."""
    if not any(d.code == "SR161" for d in diags):
        return diags
    fix = _repair_command(loaded, ctx)
    if fix is None:
        if isinstance(loaded.document, dict) and _breaks_rules(loaded.document, ctx):
            advice = diag(
                "SR161",
                "the state on disk already breaks these rules and migrate cannot repair "
                f"them: fix them by hand (`session-resume validate {ctx.session_dir}` lists "
                "them), then run this command again",
                file=ctx.state_path,
            )
            return [advice, *diags]
        return diags
    advice = diag(
        "SR161",
        f"the state on disk already breaks these rules; run `session-resume {fix} "
        f"{ctx.session_dir}`: it repairs the file, then run this command again",
        file=ctx.state_path,
    )
    return [advice, *diags]


def _breaks_rules(doc: dict[str, Any], ctx: WriteContext) -> bool:
    try:
        store.check_writable(doc, _workflow_of(doc, None, ctx.default_workflow), ctx.now, "")
    except (store.StoreError, ServiceError):
        return True
    return False


def _workflow_of(doc: dict[str, Any] | None, spec: str | None, default: str) -> Workflow:
    own = doc.get("workflow") if doc is not None else None
    try:
        return load_workflow(spec or state_workflow_spec(own, default))
    except WorkflowError as exc:
        # a broken workflow (SR400-SR403) is an input error: exit 2 in every command
        raise ServiceError(exc.diagnostics, 2) from None


def _check_new_state(
    ctx: WriteContext, loaded: store.Loaded, doc: dict[str, Any], wf: Workflow
) -> None:
    """§4 step 3 before the lease is taken: the new document as the save would write it
    (``updated`` now, the next revision) is refused (SR161, SR166) if it is not a valid
    state, so a write that must take a lease first never takes one it would give back."""
    new = {**doc, "updated": format_ts(ctx.now), "revision": loaded.revision + 1}
    data = store.serialize(new)
    try:
        store.check_size(ctx.store_session, data)
        store.check_writable(new, wf, ctx.now, ctx.state_path, data=data)
    except store.StoreError as exc:
        located = _located(exc.diagnostics, ctx.state_path)
        raise ServiceError(_with_repair_advice(located, loaded, ctx)) from None


class _Heartbeat:
    """The lease heartbeat of a write, refreshed under its save's lock (``store.save(then=)``)
    after the state and the worklog event. A failure to write the lease (SR515) is raised
    once the save has returned, as when the refresh took the lock again after it."""

    def __init__(self, ctx: WriteContext, plan: LeasePlan) -> None:
        self.ctx, self.session = ctx, plan.session
        self.due = _heartbeat_due(ctx, plan)
        self.failure: store.StoreError | None = None

    def __call__(self) -> None:
        if not self.due:
            return
        try:
            refresh_locked(self.ctx, self.session)
        except store.StoreError as exc:
            self.failure = exc

    def raise_failure(self) -> None:
        if self.failure is not None:
            raise self.failure


def _heartbeat_due(ctx: WriteContext, plan: LeasePlan) -> bool:
    """Whether the write refreshes the heartbeat: always, but for an owner that beats on a
    timer of its own (``heartbeat_on_write`` false, docs/spec.md §7). Its writes refresh only
    a heartbeat older than half the stale threshold (its timer held up: a suspended machine,
    a busy loop) or in the future; a lease just acquired has a fresh one."""
    if ctx.heartbeat_on_write:
        return True
    if plan.action != "keep":
        return False
    age = plan.lease.age_seconds
    return plan.lease.state != "live" or age is None or not 0 <= age <= ctx.stale_seconds / 2


@no_lease_left_on_failure  # a lease this write created goes if it is refused (leases.py)
def write_state(ctx: WriteContext, build: Build) -> WriteResult:
    """Load, check, build, acquire the lease, save (one write, one event) and refresh the
    heartbeat under the save's lock. Retried from the load when another writer saved first
    (up to MAX_ATTEMPTS)."""
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
        plan = plan_lease(
            read_lease(ctx),
            session=ctx.session,
            file=ctx.sentinel_path,
            stale_seconds=ctx.stale_seconds,
        )
        orphaned = orphan_seen or plan.orphaned
        try:
            change = build(loaded.document, wf, orphaned)
        except TransitionError as exc:
            raise ServiceError(_located(exc.diagnostics, ctx.state_path)) from None
        if plan.action != "keep":
            # every check that can refuse the write comes before the lease is taken: a
            # refused write writes nothing (docs/spec.md §7, "Refused writes")
            _check_new_state(ctx, loaded, change.document, wf)
            try:
                before += acquire(ctx, plan, log_start=True, implicit=ctx.session is None)
            except LeaseChanged:
                continue
            acquired = plan
            orphan_seen = orphan_seen or plan.orphaned
        heartbeat = _Heartbeat(ctx, plan)
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
                then=heartbeat,
            )
        except store.ConflictError as exc:
            conflict = exc.diagnostics
            continue
        except store.StoreError as exc:
            located = _located(exc.diagnostics, ctx.state_path)
            raise ServiceError(_with_repair_advice(located, loaded, ctx)) from None
        heartbeat.raise_failure()
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
            warnings=_located(change.warnings, ctx.state_path),
        )
    raise ServiceError(
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
    # lazy: only init --fresh archives
    from session_resume.storage.archive import archive_session as archive

    res = archive(session_dir, now=now, keep=keep, label=project, include_lease=False, root=root)
    return Path(res.archived_to) if res.archived_to else None


def _refuse_existing(ctx: WriteContext, loaded: store.Loaded, project: str) -> None:
    """Refuse (SR710) an init without ``--fresh`` where a state exists, or where only its
    .bak does."""
    if loaded.status == "absent" and loaded.backup_usable:
        # A later save would rotate the new state over the only good copy of the old one.
        raise ServiceError(
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
    if loaded.status != "absent":
        old = loaded.document or {}
        what = (
            f"revision {loaded.revision}, project {old.get('project')!r}"
            if loaded.status == "ok"
            else loaded.status
        )
        raise ServiceError(
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


@no_lease_left_on_failure  # a lease this write created goes if it is refused (leases.py)
def init_session(
    ctx: WriteContext, project: str, *, workflow: str | None = None, fresh: bool = False
) -> WriteResult:
    """Create the session's state from the workflow template (``revision`` 1). An existing
    state is refused unless ``fresh``: then the old files are archived first."""
    wf = _workflow_of(None, workflow, ctx.default_workflow)
    try:
        doc = write_moments.init_state(wf, project, ctx.now)
    except TransitionError as exc:
        raise ServiceError(_located(exc.diagnostics, ctx.state_path)) from None
    make_session_dir(ctx)
    s = ctx.store_session
    loaded = store.load(s)
    if loaded.status == "refused":
        refuse_unwritable(loaded, ctx)
    plan = plan_lease(
        read_lease(ctx),
        session=ctx.session,
        file=ctx.sentinel_path,
        stale_seconds=ctx.stale_seconds,
    )
    archived = None
    if not fresh:
        _refuse_existing(ctx, loaded, project)
    if fresh:
        old_project = (loaded.document or {}).get("project")
        try:
            archived = archive_session(
                ctx.session_dir,
                ctx.now,
                project=old_project if isinstance(old_project, str) else project,
                root=ctx.root,
                keep=ctx.archive_keep,
            )
        except store.StoreError as exc:
            raise ServiceError(exc.diagnostics) from None
    before: list[dict[str, Any]] = []
    if plan.action != "keep":
        try:
            before = acquire(ctx, plan, log_start=False, implicit=ctx.session is None)
        except LeaseChanged:
            raise ServiceError(
                [
                    diag(
                        "SR511",
                        "another session changed the lease while this init ran; nothing "
                        "was written",
                        file=ctx.state_path,
                        hint="Run the same command again.",
                    )
                ]
            ) from None
    detail: dict[str, Any] = {"note": "init", "project": project, "workflow": wf.id}
    if archived is not None:
        detail["archived_to"] = archived.relative_to(ctx.session_dir).as_posix()
    # A session that already held the lease (and keeps its worklog) has logged its start.
    event = "note" if plan.action in ("keep", "adopt") and archived is None else "session_start"
    heartbeat = _Heartbeat(ctx, plan)
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
            then=heartbeat,
        )
    except store.StoreError as exc:
        raise ServiceError(_located(exc.diagnostics, ctx.state_path)) from None
    heartbeat.raise_failure()
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


def start_step(
    ctx: WriteContext, step: str, *, force: bool = False, name: str | None = None
) -> WriteResult:
    """Write moment 1: ``step`` starts (pending → in_progress; a crashed attempt restarts;
    a step handed over at a gate and never checkpointed starts without costing an attempt)."""
    tail = worklog.read_tail(ctx.session_dir / worklog.WORKLOG, LEASE_TAIL_EVENTS)
    handover = write_moments.started_at_gate(tail.events, step)
    return write_state(
        ctx, changes.start_step(step, ctx.now, force=force, name=name, handover=handover)
    )


def checkpoint(
    ctx: WriteContext,
    step: str,
    sub_step: str,
    artifacts: Sequence[str] = (),
    context_files: Sequence[str] = (),
) -> WriteResult:
    """Write moment 2: the step in progress reaches checkpoint ``sub_step``. Listed paths
    are stored in one form: repository-relative POSIX, a bare name resolved against the
    session directory (docs/spec.md §4)."""
    base = None
    if ctx.root is not None:
        rel = os.path.relpath(os.path.abspath(ctx.session_dir), os.path.abspath(ctx.root))
        base = None if rel.startswith("..") else Path(rel).as_posix()
    res = write_state(
        ctx, changes.checkpoint(step, sub_step, list(artifacts), list(context_files), base)
    )
    if ctx.root is not None and base is not None:
        res.warnings.extend(_missing_artifacts(ctx, step, artifacts, base))
    return res


def _missing_artifacts(
    ctx: WriteContext, step: str, artifacts: Sequence[str], base: str
) -> list[Diagnostic]:
    """SR714 for each file the checkpoint lists that is not on disk: a checkpoint records work
    already done (a fresh agent recorded one naming a file it had not written)."""
    out = []
    for given in artifacts:
        rel = one_form(given, base)
        if not os.path.lexists(os.path.join(str(ctx.root), *rel.split("/"))):
            out.append(
                diag(
                    "SR714",
                    f"the checkpoint of step {step} was recorded, but {rel}, which it lists, "
                    "is not on disk",
                    file=ctx.state_path,
                    hint=f"Write {rel} now (it is this checkpoint's work), before the next "
                    "checkpoint; record a checkpoint only after its files exist.",
                )
            )
    return out


def complete_step(ctx: WriteContext, step: str) -> WriteResult:
    """Write moment 3: ``step`` is done (in_progress → complete)."""
    return write_state(ctx, changes.complete_step(step, ctx.now))


def skip_step(ctx: WriteContext, step: str, reason: str, *, force: bool = False) -> WriteResult:
    """Skip a pending or in-progress step (optional steps; others with ``force``)."""
    return write_state(ctx, changes.skip_step(step, reason, ctx.now, force=force))


def set_decision(ctx: WriteContext, key: str, value: Any) -> WriteResult:
    """Write moment 4: ``decisions[key] = value`` (checked against the workflow)."""
    return write_state(ctx, changes.set_decision(key, value))


def log_decision(
    ctx: WriteContext,
    title: str,
    choice: str,
    rationale: str,
    *,
    step: str | None = None,
    alternatives: Sequence[str] = (),
) -> WriteResult:
    """Write moment 4: append a ``decision_log`` entry with the next id (D001, D002, ...)."""
    return write_state(
        ctx,
        changes.log_decision(
            title, choice, rationale, ctx.now, step=step, alternatives=list(alternatives)
        ),
    )


def approve_gate(
    ctx: WriteContext, step: str, decisions: dict[str, Any] | None = None, *, handoff: bool = True
) -> WriteResult:
    """The user approved the gate of complete step ``step``, with ``decisions``: they are
    recorded, an approval entry is appended to ``decision_log``, the worklog gets
    ``gate_approved`` (docs/spec.md §4.1), and ``00-handoff.md`` is rendered from the new
    state (``handoff``; off for the conformance adapter, whose files the suite compares)."""
    res = write_state(ctx, changes.approve_gate(step, dict(decisions or {}), ctx.now))
    if handoff:
        # lazy: only an approval renders the handoff (Jinja)
        from session_resume.services.rendering import render_handoff

        reading = Reading(root=ctx.root, default_workflow=ctx.default_workflow)
        out = render_handoff(ctx.session_dir, reading, now=ctx.now)
        res.handoff = str(out.path) if out.path is not None else None
    return res


def review_audit(ctx: WriteContext, step: str, audit: write_moments.ReviewAudit) -> WriteResult:
    """Write moment 6: the challenger review of ``step`` is recorded in ``review_audit``."""
    return write_state(ctx, changes.review_audit(step, audit))


def add_finding(ctx: WriteContext, title: str) -> WriteResult:
    """Write moment 5: open a review finding."""
    return write_state(ctx, changes.add_finding(title))


def resolve_finding(ctx: WriteContext, title: str) -> WriteResult:
    """Write moment 5: resolve an open review finding."""
    return write_state(ctx, changes.resolve_finding(title))


def transition(
    ctx: WriteContext,
    complete: str,
    start: str,
    decisions: dict[str, Any] | None = None,
    *,
    force: bool = False,
) -> WriteResult:
    """An orchestrator gate in one write: complete ``complete``, record ``decisions``, start
    ``start``."""
    return write_state(
        ctx, changes.transition(complete, start, dict(decisions or {}), ctx.now, force=force)
    )
