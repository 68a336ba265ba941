"""The lease services: `session start`, `session end`, `ping`, and the lease part of every
write (read the lease, plan what a write does about it, acquire it, refresh its heartbeat).
The judgement itself is pure (:mod:`session_resume.core.lease`); this module does its I/O.

Lease rules for a state write (docs/spec.md §7):

* no lease (or one whose session ended): the write creates one (the id given with
  ``--session`` / ``$SESSION_RESUME_SESSION``, else a new id) and logs ``session_start``;
* a live lease of the session the caller names: the write acts as its session;
* a live *implicit* lease (taken by a write that named no session): a write naming no
  session goes on with it; a caller naming a session, or `session start`, adopts it (logged
  as ``session_start`` with ``adopted``), so a user never meets SR511 from their own calls;
* a live lease of an explicit session (taken by `session start` or a write naming it): every
  write that does not name that session is refused (SR511), one naming no session too: a
  write never acts as, nor refreshes the heartbeat of, a session it did not name;
* an orphaned lease (stale heartbeat or dead owner pid) of another session: the write takes
  it over and logs ``takeover``.
"""

from __future__ import annotations

import contextvars
import functools
import os
import re

from session_resume.core import lease as lease_rules
from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic, Severity
from session_resume.core.lease import SENTINEL as SENTINEL_FILE
from session_resume.core.lease import Lease
from session_resume.core.outcomes import LeaseAction, SessionAction
from session_resume.core.timeutil import format_ts
from session_resume.records import field, record
from session_resume.services.context import (
    WriteContext,
    default_owner,
    env_owner,
    make_session_dir,
)
from session_resume.services.errors import ServiceError
from session_resume.storage import lease_file as sentinel_mod
from session_resume.storage import store, worklog

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ParamSpec, TypeVar

    P = ParamSpec("P")
    R = TypeVar("R")

MAX_ATTEMPTS = 3
LEASE_TAIL_EVENTS = 200  # enough of the worklog's tail to find the lease's session_end
# C0, DEL, C1 and lone surrogates (argv bytes that are not UTF-8 arrive as U+DC80-U+DCFF)
NOT_TEXT = "[\x00-\x1f\x7f-\x9f\ud800-\udfff]"


@record
class SessionResult:
    session: str | None
    action: SessionAction
    events: list[dict[str, Any]] = field(default_factory=list)
    lease: dict[str, Any] | None = None
    previous_session: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The answer of `session start`/`end` as the CLI's ``--format json`` and the MCP
        session tools both give it."""
        out: dict[str, Any] = {
            "ok": True,
            "session": self.session,
            "action": self.action,
            "events": self.events,
            "lease": self.lease,
        }
        if self.previous_session is not None:
            out["previous_session"] = self.previous_session
        return out


@record(frozen=True)
class LeasePlan:
    """What a write does about the lease: ``keep`` it (act as its session), ``create`` one,
    ``adopt`` an implicit one (same user, now naming the session), or ``takeover`` another
    session's lease (``orphaned``: that session crashed)."""

    action: LeaseAction
    session: str
    lease: Lease
    orphaned: bool = False

    @property
    def previous(self) -> str | None:
        s = self.lease.sentinel
        adopting = self.action in ("takeover", "adopt")
        return s.get("session") if s is not None and adopting else None


class LeaseChanged(Exception):
    """The lease changed between assessing it and acquiring it: start over."""


def read_lease(ctx: WriteContext) -> Lease:
    """The lease of the session directory now (none when there is no valid sentinel)."""
    d = ctx.session_dir
    path = d / SENTINEL_FILE
    sent, problems = sentinel_mod.read(d, ctx.root)
    if problems and os.path.lexists(path) and os.path.isdir(path) and not os.path.islink(path):
        raise ServiceError(
            problems
            + [
                diag(
                    "SR510",
                    "the sentinel path is a directory; remove it before starting a session",
                    file=str(path),
                )
            ]
        )
    ended = sent is not None and worklog.session_ended(
        d / worklog.WORKLOG, sent.get("session"), LEASE_TAIL_EVENTS
    )
    return lease_rules.lease_state(
        sent,
        now=ctx.now,
        ended=ended,
        owner_alive=sentinel_mod.owner_alive(sent),
        stale_seconds=ctx.stale_seconds,
    )


def _holder_text(lease: Lease) -> str:
    s = lease.sentinel or {}
    age = "" if lease.age_seconds is None else f", heartbeat {round(lease.age_seconds)} s ago"
    pid = s.get("pid")
    proc = f", pid {pid} on {s.get('host') or '?'}" if isinstance(pid, int) else ""
    return f"session {s.get('session') or 'unknown'} (owner {s.get('owner') or '?'}{proc}{age})"


def _stale_text(lease: Lease, stale_seconds: int) -> str:
    """When the live ``lease`` turns stale if its session stops: the time (its heartbeat plus
    the stale threshold) and the threshold."""
    when = lease_rules.stale_at(lease.sentinel, stale_seconds)
    at = f" at {when}" if when else ""
    return (
        f"Its lease goes stale{at} unless it writes or pings again (the stale threshold: "
        f"{stale_seconds} s after the last heartbeat, `stale_after_seconds` in the config)"
    )


# The words a refusal uses for "run the command you ran again, naming the session": a front
# end that knows the command line replaces them with it (cli/commands/write.py).
SAME_COMMAND = "the same command with `--session {holder}`"


def refuse_live(
    lease: Lease,
    *,
    session: str | None,
    file: str,
    stale_seconds: int = lease_rules.DEFAULT_STALE_SECONDS,
) -> ServiceError:
    """SR511: the live lease of explicit session HOLDER is in the way of a caller naming
    ``session`` (another one), or naming none. The message names the holder and when its
    lease goes stale; the hint gives the commands to run: the caller's own command with
    ``--session HOLDER`` if HOLDER is the caller's, else a takeover only with the user's
    consent."""
    holder = str((lease.sentinel or {}).get("session"))
    if session is None:
        who = "this command named no session (`--session`): only that session may write here"
        mine = (
            f"Session {holder} is yours only if its id appears earlier in this conversation "
            "or in your notes (a `session start` you ran printed it): then run "
            + SAME_COMMAND.format(holder=holder)
            + ". If you cannot find it there, it is not yours, so"
        )
        takeover = "`session-resume session start --takeover`"
    else:
        who = f"session {session} may not write here"
        mine = "It is not yours, so"
        takeover = f"`session-resume session start --takeover --session {session}`"
    return ServiceError(
        [
            diag(
                "SR511",
                f"{_holder_text(lease)} holds a live lease on this session directory and "
                f"{who}; nothing was written. {_stale_text(lease, stale_seconds)}",
                file=file,
                hint=f"{mine} do not write: wait for that session to end or to go stale, or "
                f"take over with {takeover} only with the user's consent (logged).",
            )
        ]
    )


def plan_lease(
    lease: Lease,
    *,
    session: str | None,
    claim: bool = False,
    takeover: bool = False,
    file: str = "",
    stale_seconds: int = lease_rules.DEFAULT_STALE_SECONDS,
) -> LeasePlan:
    """Decide what to do about ``lease`` (pure apart from minting a new session id).

    ``session``: the caller's explicit id or None. ``claim``: the caller starts a new
    session (`session start`), so a live lease of any other session is in the way.
    ``takeover``: a live lease may be taken over (logged). Raises SR511 otherwise, also for
    a caller naming no session when the live lease is an explicit session's: only an
    implicit lease is anybody's (docs/spec.md §7). ``stale_seconds``: for SR511's words.
    """
    holder = (lease.sentinel or {}).get("session")
    if lease.state in ("none", "ended", "unreadable") or not isinstance(holder, str):
        return LeasePlan("create", session or lease_rules.new_session_id(), lease)
    if session is not None and session == holder:
        return LeasePlan("keep", holder, lease)
    if lease.state == "idle":
        # an implicit lease gone quiet: the same user's next write goes on with it (no
        # takeover, no crash); a named session or `session start` adopts it
        if session is None and not claim:
            return LeasePlan("keep", holder, lease)
        return LeasePlan("adopt", session or holder, lease)
    if lease.state == "live":
        if lease_rules.is_implicit(lease.sentinel):
            if session is None and not claim:
                return LeasePlan("keep", holder, lease)
            return LeasePlan("adopt", session or holder, lease)
        if takeover:
            return LeasePlan("takeover", session or lease_rules.new_session_id(), lease)
        # an explicit session's live lease: a caller naming no session may be that session
        # or another one; it is never taken for it (nor its heartbeat refreshed)
        raise refuse_live(
            lease,
            session=session,
            file=file,
            stale_seconds=stale_seconds,
        )
    # stale or dead owner: an orphan, which any other session may take over
    return LeasePlan("takeover", session or lease_rules.new_session_id(), lease, orphaned=True)


def _check_same_lease(ctx: WriteContext, plan: LeasePlan) -> None:
    sent, _ = sentinel_mod.read(ctx.session_dir)
    if sent != plan.lease.sentinel:
        raise LeaseChanged


def check_owner(owner: str, *, file: str) -> None:
    """Refuse (SR182, exit 2) an owner a lease cannot hold: bytes that are not UTF-8 (the
    worklog and the lease could not be encoded) or a control character."""
    # isprintable() is False for every character NOT_TEXT names: the regex (a wide class,
    # costly to compile at start-up) is needed only for an owner that is not plainly printable
    if not owner.isprintable() and re.search(NOT_TEXT, owner):
        raise ServiceError(
            [
                diag(
                    "SR182",
                    f"the owner {ascii(owner)} is not text a lease can hold (bytes that are "
                    "not UTF-8, or a control character); nothing was written. Pass `--owner "
                    "NAME` (the default is $USER)",
                    file=file,
                )
            ],
            exit_code=2,
        )


def check_pid(pid: int | None, *, file: str) -> None:
    """Refuse (SR183, exit 2) an owner pid a lease cannot hold: the reader calls a lease whose
    pid is not 1..PID_MAX unreadable (SR510), so writing one lost the session's lease."""
    if pid is not None and not 0 < pid <= sentinel_mod.PID_MAX:
        raise ServiceError(
            [
                diag(
                    "SR183",
                    f"--pid {pid} is not a process id (1..{sentinel_mod.PID_MAX}); nothing "
                    "was written",
                    file=file,
                )
            ],
            exit_code=2,
        )


def acquire(
    ctx: WriteContext,
    plan: LeasePlan,
    *,
    log_start: bool,
    pid: int | None = None,
    owner: str | None = None,
    implicit: bool = False,
) -> list[dict[str, Any]]:
    """Write the new lease of ``plan`` (create, adopt or takeover) under the session lock and
    log ``takeover`` (or ``session_start`` when ``log_start``; an adoption always logs it,
    naming the implicit session adopted). ``implicit``: the caller named no session.
    Raises LeaseChanged if another process changed the lease since it was assessed."""
    d = ctx.session_dir
    ts = format_ts(ctx.now)
    events: list[dict[str, Any]] = []
    check_owner(owner or ctx.owner, file=ctx.sentinel_path)
    with store.locked(ctx.store_session):
        _check_same_lease(ctx, plan)
        new = lease_rules.make(
            plan.session,
            owner=owner or ctx.owner,
            now=ctx.now,
            pid=pid,
            implicit=implicit and plan.action in ("create", "takeover"),
        )
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
        elif log_start or plan.action == "adopt":
            detail = {"owner": new["owner"]}
            if plan.action == "adopt":
                detail["adopted"] = (plan.lease.sentinel or {}).get("session")
            if pid is not None:
                detail["pid"] = pid
            events.append(
                worklog.append(d, "session_start", ts=ts, session=plan.session, detail=detail)
            )
        sentinel_mod.write(d, new)
    created = _CREATED.get()
    if plan.action == "create" and created is not None:
        created.append((ctx, new, bool(events)))
    return events


# --- a lease created by a write that then fails is removed again ----------------------------

# The leases acquire() created (context, the lease written, whether session_start was logged)
# during the write service now running; None outside one.
_CREATED: contextvars.ContextVar[list[tuple[WriteContext, dict[str, Any], bool]] | None] = (
    contextvars.ContextVar("session_resume_created_leases", default=None)
)


def no_lease_left_on_failure(fn: Callable[P, R]) -> Callable[P, R]:
    """For a write service: a lease that :func:`acquire` created during it (there was none,
    or it had ended or was unreadable) is removed again when the write then fails (a
    :class:`ServiceError` after the lease was taken: SR160, SR162, SR163), so a failed write
    leaves no lease behind (docs/spec.md §7, "Refused writes"; every check that can refuse a
    write runs before the lease is taken). A lease kept, adopted or taken over is left as it
    is."""

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        created: list[tuple[WriteContext, dict[str, Any], bool]] = []
        token = _CREATED.set(created)
        try:
            return fn(*args, **kwargs)
        except ServiceError as exc:
            for ctx, lease, logged in reversed(created):
                _release(ctx, lease, logged, exc)
            raise
        finally:
            _CREATED.reset(token)

    return run


def _release(ctx: WriteContext, lease: dict[str, Any], logged: bool, exc: ServiceError) -> None:
    """Remove ``lease`` if it is still the one on disk (ending the session its creation
    logged); a failure to do so is added to the refusal, never raised instead of it."""
    try:
        with store.locked(ctx.store_session):
            sent, _ = sentinel_mod.read(ctx.session_dir)
            if sent != lease:  # changed since: no longer this write's lease
                return
            if logged:
                worklog.append(
                    ctx.session_dir,
                    "session_end",
                    ts=format_ts(ctx.now),
                    session=lease["session"],
                    detail={"reason": "write_refused"},
                )
            sentinel_mod.remove(ctx.session_dir)
    except (OSError, store.StoreError) as err:
        exc.diagnostics.append(
            diag(
                "SR164",
                f"the lease this refused write created could not be removed: {err}",
                file=ctx.sentinel_path,
            )
        )


def refresh_locked(ctx: WriteContext, session: str) -> dict[str, Any] | None:
    """Refresh the heartbeat of ``session``'s lease (if it still holds it). The caller holds
    the session lock: a write refreshes it under its save's lock (``store.save(then=)``)."""
    sent, _ = sentinel_mod.read(ctx.session_dir)
    if sent is None or sent.get("session") != session:
        return sent
    sent = {**sent, "heartbeat": format_ts(ctx.now)}
    sentinel_mod.write(ctx.session_dir, sent)
    return sent


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
    check_owner(owner or ctx.owner, file=ctx.sentinel_path)
    check_pid(pid, file=ctx.sentinel_path)
    if not owner and pid is not None and ctx.owner == default_owner() and not env_owner():
        # no --owner and no $USER: the owner is the process named, on this host (§7)
        owner = f"pid {pid}@{lease_rules.hostname()}"
    make_session_dir(ctx)
    for _ in range(MAX_ATTEMPTS):
        lease = read_lease(ctx)
        plan = plan_lease(
            lease,
            session=ctx.session,
            claim=True,
            takeover=takeover,
            file=ctx.sentinel_path,
            stale_seconds=ctx.stale_seconds,
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
            events = acquire(ctx, plan, log_start=True, pid=pid, owner=owner)
        except LeaseChanged:
            continue
        sent, _ = sentinel_mod.read(ctx.session_dir)
        done: SessionAction = {"takeover": "takeover", "adopt": "adopted"}.get(  # type: ignore[assignment]
            plan.action, "created"
        )
        return SessionResult(
            plan.session,
            done,
            events,
            sent,
            plan.previous,
        )
    raise ServiceError(
        [
            diag(
                "SR511",
                "the lease keeps changing (other sessions start and end here); nothing was written",
                file=ctx.state_path,
                hint="Run the same command again.",
            )
        ]
    )


def _refuse_unless_named(ctx: WriteContext, lease: Lease, holder: str) -> None:
    """SR511 unless the caller may act on the live ``lease``: it names its session, or the
    lease is implicit (anybody's). `session end` and `ping` never end or refresh an explicit
    session they were not told is theirs."""
    if lease.state != "live" or ctx.session == holder:
        return
    if lease_rules.is_implicit(lease.sentinel):
        return
    raise refuse_live(
        lease, session=ctx.session, file=ctx.sentinel_path, stale_seconds=ctx.stale_seconds
    )


def end_session(ctx: WriteContext, reason: str | None = None) -> SessionResult:
    """`session end`: log ``session_end`` for the lease's session and remove the sentinel.
    ``reason`` ``paused``: the agent stops before the step in progress is complete; the event's
    ``detail.reason`` says so and the next resume reports a pause (SR720, docs/spec.md §7).
    Refused (SR511) for the live lease of an explicit session that the caller does not name
    (``--session``); an implicit, ended or orphaned lease is ended by anyone."""
    if not ctx.session_dir.is_dir():
        return SessionResult(None, "none")
    with store.locked(ctx.store_session):
        lease = read_lease(ctx)
        holder = (lease.sentinel or {}).get("session")
        if lease.state == "none" or not isinstance(holder, str):
            return SessionResult(None, "none")
        _refuse_unless_named(ctx, lease, holder)
        events = []
        if lease.state != "ended":
            detail: dict[str, Any] = {}
            if lease.orphaned:
                detail = {"orphaned": True, "reason": lease.state}
                if ctx.session is not None:
                    detail["ended_by"] = ctx.session
            elif reason is not None:
                detail = {"reason": reason}
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
    worklog line). Refused (SR511) for the live lease of an explicit session the caller does
    not name: a heartbeat is refreshed only by its own session."""
    if not ctx.session_dir.is_dir():
        raise ServiceError(_no_lease(ctx))
    with store.locked(ctx.store_session):
        lease = read_lease(ctx)
        holder = (lease.sentinel or {}).get("session")
        if lease.state in ("none", "ended", "unreadable") or not isinstance(holder, str):
            raise ServiceError(_no_lease(ctx))
        _refuse_unless_named(ctx, lease, holder)
        if lease.orphaned and ctx.session != holder:
            raise ServiceError(
                [
                    diag(
                        "SR512",
                        f"the lease of {_holder_text(lease)} is orphaned ({lease.state}); a "
                        "ping does not revive another session: take it over with "
                        "`session-resume session start` (or any write)",
                        file=str(ctx.session_dir / SENTINEL_FILE),
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
            file=str(ctx.session_dir / SENTINEL_FILE),
        )
    ]
