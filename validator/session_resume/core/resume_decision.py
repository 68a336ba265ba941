"""The resume decision (docs/spec.md §10): a pure function of a session snapshot, a step key or
none, the time and options, returning what the agent should do, as JSON.

The snapshot (:class:`Snapshot`) is everything read from the session directory; building it
is the storage layer's job (:func:`session_resume.snapshot.take`). ``decide`` does no I/O.
"""

from __future__ import annotations

import shlex
from datetime import datetime

from session_resume.core import briefing as briefing_rules
from session_resume.core import missing_work
from session_resume.core import plan as plan_rules
from session_resume.core.fresh_start import fresh_plan
from session_resume.core.jsonread import as_dict
from session_resume.core.lease import (
    DEFAULT_STALE_SECONDS,
    Lease,
    is_implicit,
    lease_state,
    stale_at,
    yours_test,
)
from session_resume.core.outcomes import StateStatus
from session_resume.core.resume_messages import explain
from session_resume.core.rules import ordered_step_keys
from session_resume.core.staleness import last_work, stale_gap, stale_recorded
from session_resume.core.timeutil import format_ts, parse_ts
from session_resume.core.workflow import Workflow
from session_resume.core.write_checks import started_at_gate
from session_resume.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


DECISION_VERSION = 2
ACTIONS = (
    "fresh_start",
    "needs_recovery",
    "migrate_first",
    "refuse_newer_version",
    "invalid_state",
    "start",
    "restart_step",
    "resume_from_checkpoint",
    "continue_step",
    "offer_rerun",
    "next_step",
    "prerequisites_incomplete",
    "session_active",
    "workflow_complete",
    "unknown_step",
)


@record(frozen=True)
class Snapshot:
    """What was found in a session directory (produced by the storage layer).

    ``state_status`` is :class:`store.Loaded`'s status; ``artifacts`` maps a repository-relative
    path to its modification time (None: missing) for the step in progress.
    """

    state_status: StateStatus
    document: dict[str, Any] | None = None
    state_codes: tuple[str, ...] = ()
    backup_usable: bool = False
    sentinel: dict[str, Any] | None = None
    session_ended: bool = False
    owner_alive: bool | None = None
    last_events: tuple[dict[str, Any], ...] = ()
    artifacts: dict[str, float | None] = field(default_factory=dict)
    temp_files: tuple[str, ...] = ()
    # For the briefing: which startup inputs (session-directory-relative) exist, and the
    # session directory relative to the repository root.
    files: dict[str, bool] = field(default_factory=dict)
    session_rel: str | None = None
    # A valid .bak beside a corrupt or missing state (the crash report lists its artifacts).
    backup_document: dict[str, Any] | None = None
    # an invalid state that migration repairs: "migrate" or "migrate --salvage" (docs/spec.md §9.5)
    repair: str | None = None
    # SR708: the commits since the last work that touched the repository outside the session
    # directory (counted read-only by the storage layer; None: unknown, no git history)
    commits_since: int | None = None


@record(frozen=True)
class Options:
    session: str | None = None  # the caller's session id; its own lease is not "active"
    stale_seconds: int = DEFAULT_STALE_SECONDS
    takeover: bool = False
    # The front end holds the session itself (the MCP server takes its lease at its first
    # write and keeps the heartbeat): no command starts or names a session, but a takeover.
    front_end_session: bool = False


def decide(
    snap: Snapshot,
    step: str | None,
    now: datetime,
    workflow: Workflow,
    options: Options | None = None,
) -> dict[str, Any]:
    """The resume decision as a JSON-ready dict (schema: schema/decision/2.json): the action,
    its ``briefing`` (None when the state cannot be used as it is, or another session is
    live), the ``plan`` of the step (None unless the agent works on a step now), the
    ``commands`` in order, each ``{run, when}``, and every code with its words."""
    opts = options or Options()
    out = _decide(snap, step, now, workflow, opts)
    out["briefing"] = None
    out["plan"] = None
    out["alternatives"] = []
    usable = snap.document is not None and snap.state_status == "ok"
    key = out["step"]
    if usable and out["action"] != "session_active":
        assert snap.document is not None
        exists = {p: m is not None for p, m in snap.artifacts.items()} | dict(snap.files)
        out["briefing"] = briefing_rules.build(
            snap.document,
            key,
            workflow,
            action=out["action"],
            exists=exists,
            events=snap.last_events,
            session_rel=snap.session_rel,
        )
        missing_work.missing_deliverables(out, snap, workflow)
        _unrecorded_checkpoint(out, snap, workflow)
        if out["action"] == "offer_rerun" and key is not None:
            # A complete step whose gate is still open: its empty required decisions first
            # (only with the user's choice), and the end of the chat the gate may ask for.
            gate = plan_rules.gate_after(snap.document, key, workflow)
            decisions = plan_rules.gate_decisions(gate, key) if gate is not None else []
            if gate is not None:
                approve = plan_rules.cmd(gate["approve"], plan_rules.approved_when(gate))
                nxt = plan_rules.next_step(snap.document, key, workflow)
                end = plan_rules.cmd(plan_rules.SESSION_END, plan_rules.end_when(gate, nxt))
                brk = [end] if gate.get("session_break") else []
                out["commands"][:0] = [*decisions, approve, *brk]
                out["gate_open"] = gate["id"]
        if out["action"] in plan_rules.WORKING and key is not None:
            _paused(out, snap)
            plan = plan_rules.build(
                snap.document,
                key,
                workflow,
                action=out["action"],
                sub=out["sub_step"],
                session_rel=snap.session_rel,
            )
            out["plan"] = plan
            pending = as_dict(as_dict(snap.document.get("steps")).get(key)).get("status")
            out["commands"] = plan_rules.commands(plan, out["action"], pending == "pending")
            out["alternatives"] = plan_rules.alternatives(plan, out["action"])
    gap = stale_gap(snap.document or {}, snap.last_events, now) if usable else None
    if gap is not None and out["plan"] is not None and "SR708" in out["warnings"]:
        # the user may be away: the agent goes on, and the gap stays on record for the gate
        days = ((gap[1] - gap[0]).days, format_ts(gap[0]))
        title = (
            f"Resumed after {days[0]} days idle (last work {days[1]}): is the work still wanted?"
        )
        out["commands"].insert(
            0,
            plan_rules.cmd(
                f"session-resume finding add {shlex.quote(title)}",
                "only if the user cannot be asked now (warning SR708); then go on",
            ),
        )
        out["stale_finding"] = True
    if out["action"] == "fresh_start":
        fresh_plan(out, snap.session_rel, now, workflow)
    writes = any(is_writer(c["run"]) for c in out["commands"] + out["alternatives"])
    new = opts.session is None and writes
    out["session"] = {"id": opts.session, "new": new}
    lease = out["lease"] or {}
    holds = (
        opts.session is not None
        and lease.get("state") == "live"
        and lease.get("session") == opts.session
    )
    # the first command takes the lease whenever the caller does not hold it live already:
    # a new id, or a named one whose lease ended, went stale or is another's implicit one
    if (
        writes
        and not holds
        and not opts.front_end_session
        and out["action"] != "fresh_start"  # `init` takes the lease
        and (out["plan"] is not None or out.get("gate_open"))
    ):
        out["commands"].insert(0, plan_rules.cmd(plan_rules.SESSION_START))
        for alt in out["alternatives"]:
            alt["when"] += plan_rules.AFTER_SESSION_START
    facts = _facts(out, snap, now, workflow, opts)
    out["reasons"] = [explain(c, facts) for c in dict.fromkeys(out["reasons"])]
    out["warnings"] = [explain(c, facts) for c in dict.fromkeys(out["warnings"])]
    return out


PAUSED = "paused"


def _paused(out: dict[str, Any], snap: Snapshot) -> None:
    """SR720 (docs/spec.md §7): the step worked on is in progress and the last session ended
    with ``session end --reason paused`` (no work since; a later `session start` aside)."""
    doc = snap.document or {}
    st = as_dict(as_dict(doc.get("steps")).get(out["step"]))
    if st.get("status") != "in_progress":
        return
    for ev in reversed(snap.last_events):
        name = ev.get("event")
        if name in ("session_start", "heartbeat", "takeover"):
            continue
        detail = ev.get("detail")
        if name == "session_end" and isinstance(detail, dict) and detail.get("reason") == PAUSED:
            out["reasons"].append("SR720")
        return


def is_writer(run: str) -> bool:
    """Whether a command line is a state or lease write (it names the session)."""
    parts = run.split()
    return len(parts) > 1 and parts[1] in plan_rules.WRITERS


def _unrecorded_checkpoint(out: dict[str, Any], snap: Snapshot, wf: Workflow) -> None:
    """SR718 (docs/spec.md §10): the step worked on is in progress, and the worklog's tail,
    after the step's latest `step_start`, records a checkpoint of it later in workflow order
    than the state's `sub_step` (a `.bak` older than the last write was restored)."""
    key = out["step"]
    sdef = wf.step(key) if key is not None else None
    if out["action"] not in plan_rules.WORKING or sdef is None:
        return
    sub = as_dict(as_dict((snap.document or {}).get("steps")).get(key)).get("sub_step")
    later = _worklog_checkpoint_after(snap.last_events, key, sdef.checkpoint_ids, sub)
    if later is not None:
        out["worklog_checkpoint"] = later
        if "SR718" not in out["reasons"]:  # the reason of a `continue_step` already
            out["warnings"].append("SR718")


def _facts(
    out: dict[str, Any], snap: Snapshot, now: datetime, wf: Workflow, opts: Options
) -> dict[str, Any]:
    """What the codes' words name (core/resume_messages.py)."""
    doc = snap.document or {}
    steps = as_dict(doc.get("steps"))
    gap = stale_gap(doc, snap.last_events, now) if snap.document is not None else None
    updated, resumed = gap if gap is not None else (last_work(doc, snap.last_events), None)
    running = [
        k for k, s in steps.items() if isinstance(s, dict) and s.get("status") == "in_progress"
    ]
    lease = out.get("lease") or {}
    sdef = wf.step(out["step"]) if out["step"] is not None else None
    ids = sdef.checkpoint_ids if sdef is not None else []
    load = (out.get("briefing") or {}).get("load") or []
    return {
        "step": out["step"],
        # the step's checkpoints up to the recorded one: the work SR714 may have to redo
        "done_checkpoints": ids[: ids.index(out["sub_step"]) + 1] if out["sub_step"] in ids else [],
        "step_name": out["step_name"],
        "sub_step": out["sub_step"],
        "next_step": out["next_step"],
        "incomplete": out["incomplete"],
        "running": running,
        "updated": format_ts(updated) if updated is not None else None,
        "age_days": ((resumed or now) - updated).days if updated is not None else None,
        "resumed": format_ts(resumed) if resumed is not None and resumed != now else None,
        "commits": snap.commits_since,
        "stale_finding": out.pop("stale_finding", False),
        "now": out["now"],
        "lease": lease,
        "session": lease.get("session"),
        "own": opts.session is not None and lease.get("session") == opts.session,
        "stale_seconds": opts.stale_seconds,
        "front_end_session": opts.front_end_session,
        "session_rel": snap.session_rel,
        "orphan_step": (out.get("orphan") or {}).get("step"),
        "temp_files": list(snap.temp_files),
        "missing": out.pop("missing", []),
        "read_now": [e["path"] for e in load],
        "next_checkpoint": out["next_checkpoint"],
        "prereq_missing": out.pop("prereq_missing", []),
        "short": out.pop("short", None),
        "worklog_checkpoint": out.pop("worklog_checkpoint", None),
        "workflow": wf.id,
        "step_keys": wf.step_keys,
        "action": out["action"],
        "state_codes": snap.state_codes,
        "gate_open": out.pop("gate_open", None),
    }


def _decide(
    snap: Snapshot, step: str | None, now: datetime, workflow: Workflow, opts: Options
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "decision_version": DECISION_VERSION,
        "action": "",
        "step": step,
        "step_name": None,
        "sub_step": None,
        "next_checkpoint": None,
        "skip_files": [],
        "startup_files": [],
        "reasons": [],
        "warnings": [],
        "orphan": None,
        "lease": None,
        "commands": [],
        "now": format_ts(now),
        "workflow": workflow.id,
        "next_step": None,
        "incomplete": [],
    }
    lease = _judge_lease(out, snap, now, opts, step)
    own = _own_session(lease, opts)
    if out["action"] or _gate_on_state(out, snap, lease, workflow):
        return out
    assert snap.document is not None

    doc = snap.document
    steps: dict[str, Any] = doc.get("steps", {})
    if stale_gap(doc, snap.last_events, now) is not None and not stale_recorded(doc):
        out["warnings"].append("SR708")
    order = ordered_step_keys(steps, workflow)
    running = [k for k in order if steps[k].get("status") == "in_progress"]
    if len(running) > 1:
        out["warnings"].append("SR306")

    if step is None:
        target = (
            running[0]
            if running
            else next((k for k in order if steps[k].get("status") == "pending"), None)
        )
        if target is None:
            out.update(action="workflow_complete", step=None, reasons=["SR707"])
            return _with_orphan(out, snap, lease)
        out["step"] = target
        _step_action(
            out, steps, order, target, workflow, orchestrator=True, events=snap.last_events, own=own
        )
    else:
        if step not in steps:
            if workflow.free_steps:
                out.update(action="start", reasons=["SR701"])
                return _with_orphan(out, snap, lease)
            out.update(action="unknown_step", reasons=["SR711"])
            return out
        if running and step not in running:
            out["warnings"].append("SR709")
        _step_action(
            out, steps, order, step, workflow, orchestrator=False, events=snap.last_events, own=own
        )
    return _with_orphan(out, snap, lease)


def _judge_lease(
    out: dict[str, Any], snap: Snapshot, now: datetime, opts: Options, step: str | None
) -> Lease:
    """The lease's part of the decision: its report and warnings, and ``session_active``
    when another live session holds it."""
    lease = lease_state(
        snap.sentinel,
        now=now,
        ended=snap.session_ended,
        owner_alive=snap.owner_alive,
        stale_seconds=opts.stale_seconds,
    )
    if lease.sentinel is not None:
        out["lease"] = {
            "state": lease.state,
            "session": _str(lease.sentinel.get("session")),
            "owner": _str(lease.sentinel.get("owner")),
            "heartbeat": _str(lease.sentinel.get("heartbeat")),
            "age_seconds": None if lease.age_seconds is None else round(lease.age_seconds),
        }
    if snap.temp_files:
        out["warnings"].append("SR170")
    if lease.state == "ended":
        out["warnings"].append("SR513")
    if lease.state == "unreadable":
        out["warnings"].append("SR510")
    if (
        lease.state == "live"
        and not is_implicit(lease.sentinel)  # taken by writes naming no session: adoptable
        and not opts.takeover
        and (opts.session is None or opts.session != (lease.sentinel or {}).get("session"))
    ):
        # Another session is alive: the caller must not act on the state now. The agent
        # cannot know whether it is its own unless the id is in its conversation; else it
        # asks again when the lease goes stale, or takes over with the user's consent.
        holder = str((lease.sentinel or {}).get("session"))
        again = "session-resume resume DIR" + (f" --step {step}" if step else "")
        at = stale_at(lease.sentinel, opts.stale_seconds)
        wait = (
            f"at or after {at} (when the lease goes stale unless its holder writes again); "
            if at
            else ""
        )
        out.update(
            action="session_active",
            reasons=["SR511"],
            commands=[
                *(
                    []
                    if opts.front_end_session  # the holder is never the front end's session
                    else [
                        plan_rules.cmd(
                            f"{again} --session {shlex.quote(holder)}", yours_test(holder)
                        )
                    ]
                ),
                plan_rules.cmd(
                    again,
                    f"{wait}write nothing to this session before; then follow the new answer "
                    "(the same session still live then: ask the user whether to wait longer or "
                    "take over)",
                ),
                plan_rules.cmd(
                    "session-resume session start --takeover",
                    f"{plan_rules.CONSENT}, after telling them session {holder} is live"
                    + _heartbeat_age(out["lease"])
                    + " and may be working now",
                ),
            ],
        )
    return lease


def _heartbeat_age(lease: dict[str, Any] | None) -> str:
    age = (lease or {}).get("age_seconds")
    return f" (its last heartbeat {age} s ago)" if age is not None else ""


def _own_session(lease: Lease, opts: Options) -> str | None:
    """The live session the caller is: the one it names, or an implicit lease (taken by
    writes naming no session) when it names none."""
    holder = (lease.sentinel or {}).get("session")
    if lease.state != "live" or not isinstance(holder, str):
        return None
    if opts.session == holder or (opts.session is None and is_implicit(lease.sentinel)):
        return holder
    return None


def _started_by(events: tuple[dict[str, Any], ...], key: str) -> str | None:
    """The session of the latest event of step ``key`` when it is the step's start with no
    checkpoint since (None otherwise)."""
    for ev in reversed(events):
        if ev.get("step") != key:
            continue
        if ev.get("event") == "step_start":
            who = ev.get("session")
            return who if isinstance(who, str) else None
        return None
    return None


def _gate_on_state(out: dict[str, Any], snap: Snapshot, lease: Lease, workflow: Workflow) -> bool:
    """Decide for a state file that cannot be used as it is (absent, corrupt, old, too new,
    invalid); False when the state is usable."""
    status = snap.state_status
    again = plan_rules.cmd(
        "session-resume resume DIR" + (f" --step {out['step']}" if out["step"] else ""),
        "after the command above succeeded",
    )
    if status == "absent" and not snap.backup_usable:
        out.update(
            action="fresh_start",
            reasons=["SR700"],
            commands=[plan_rules.cmd("session-resume init PROJECT"), again],
        )
        return True
    if status in ("corrupt", "absent"):  # `recover` restores a usable .bak, else recreates
        codes = [*snap.state_codes, "SR130"] if snap.backup_usable else snap.state_codes
        out.update(
            action="needs_recovery",
            reasons=list(codes) or ["SR120"],
            commands=[plan_rules.cmd("session-resume recover DIR"), again],
        )
        _with_orphan(out, snap, lease)
        return True
    if status == "needs_migration":
        out.update(
            action="migrate_first",
            reasons=["SR140"],
            commands=[plan_rules.cmd("session-resume migrate DIR"), again],
        )
        return True
    if status == "too_new":
        out.update(action="refuse_newer_version", reasons=["SR141"])
        return True
    if status != "ok" or snap.document is None:
        out.update(
            action="invalid_state",
            reasons=list(snap.state_codes) or ["SR209"],
            commands=[plan_rules.cmd(f"session-resume {snap.repair or 'validate'} DIR")]
            + ([again] if snap.repair else []),
        )
        return True
    return False


def _step_action(
    out: dict[str, Any],
    steps: dict[str, Any],
    order: list[str],
    key: str,
    wf: Workflow,
    *,
    orchestrator: bool,
    events: tuple[dict[str, Any], ...] = (),
    own: str | None = None,
) -> None:
    """The action for step ``key``; the commands of a working action are the plan's
    (:func:`decide`)."""
    st = steps[key]
    sdef = wf.step(key)
    out["step_name"] = st.get("name")
    if sdef is not None and sdef.budget is not None:
        out["startup_files"] = list(sdef.budget.startup_files)
    status = st.get("status")
    sub = st.get("sub_step")
    idx = order.index(key)
    behind = [k for k in order[:idx] if steps[k].get("status") not in ("complete", "skipped")]
    cmd = plan_rules.cmd
    if status == "complete":
        out.update(
            action="offer_rerun",
            reasons=["SR704"],
            commands=[cmd(f"session-resume start {key} --force", plan_rules.CONSENT)],
        )
        return
    if status == "skipped":
        nxt = next(
            (k for k in order[idx + 1 :] if steps[k].get("status") not in ("complete", "skipped")),
            None,
        )
        out.update(
            action="next_step",
            reasons=["SR705"],
            next_step=nxt,
            commands=[cmd(f"session-resume resume DIR --step {nxt}")] if nxt else [],
        )
        return
    if behind and not orchestrator:
        out.update(
            action="prerequisites_incomplete",
            reasons=["SR706"],
            incomplete=behind,
            commands=[
                cmd("session-resume resume DIR"),
                cmd(f"session-resume start {key} --force", plan_rules.CONSENT),
            ],
        )
        return
    if behind:
        out["warnings"].append("SR706")
    if status == "pending":
        out.update(action="start", reasons=["SR701"])
        return
    if sub is None and own is not None and _started_by(events, key) == own:
        # The live session asking started it and recorded nothing yet: go on, do not loop.
        out.update(action="continue_step", reasons=["SR713"])
        return
    if sub is None and started_at_gate(events, key) and not st.get("artifacts"):
        # Handed over at a gate (`transition`), no work recorded: a start, not a restart.
        out.update(action="start", reasons=["SR712"])
        return
    if (
        sub is None
        and sdef is not None
        and _worklog_checkpoint_after(events, key, sdef.checkpoint_ids, None) is not None
    ):
        # A `.bak` from before the step's first checkpoint was restored: the work the
        # worklog records may be on disk, so the step goes on (SR718 says how), no restart.
        out.update(action="continue_step", reasons=["SR718"])
        return
    if sub is None:
        out.update(action="restart_step", reasons=["SR702"])
        return
    out.update(
        action="resume_from_checkpoint",
        reasons=["SR703"],
        sub_step=sub,
        skip_files=list(st.get("context_files_used") or []),
    )
    if sdef is not None and sub in sdef.checkpoint_ids:
        ids = sdef.checkpoint_ids
        pos = ids.index(sub)
        out["next_checkpoint"] = ids[pos + 1] if pos + 1 < len(ids) else None


def _worklog_checkpoint_after(
    events: tuple[dict[str, Any], ...], key: str, ids: list[str], sub: Any
) -> str | None:
    """The latest checkpoint of step ``key`` (one of ``ids``, its workflow checkpoints) that
    the worklog's tail records after the step's latest `step_start` and later in ``ids`` than
    ``sub`` (any, when ``sub`` is not one of them); None when there is none (SR718)."""
    at = ids.index(sub) if sub in ids else -1
    later: str | None = None
    for e in events:
        if e.get("step") != key:
            continue
        if e.get("event") == "step_start":
            later = None  # a (re)start: what came before is another attempt's
        elif (
            e.get("event") == "checkpoint"
            and e.get("sub_step") in ids
            and ids.index(e["sub_step"]) > at
        ):
            later = e["sub_step"]
    return later


def _with_orphan(out: dict[str, Any], snap: Snapshot, lease: Any) -> dict[str, Any]:
    """SR512 and the orphan report; its step is the one the state shows in progress (none:
    null; the step the caller asked about is not where the orphan stopped)."""
    if not lease.orphaned:
        return out
    out["warnings"].append("SR512")
    doc = snap.document or {}
    steps = doc.get("steps", {}) if isinstance(doc.get("steps"), dict) else {}
    running = [
        k for k, s in steps.items() if isinstance(s, dict) and s.get("status") == "in_progress"
    ]
    where = running[0] if running else None
    st = steps.get(where, {}) if where else {}
    out["orphan"] = {
        "session": _str(lease.sentinel.get("session")),
        "owner": _str(lease.sentinel.get("owner")),
        "pid": _pid(lease.sentinel.get("pid")),
        "host": _str(lease.sentinel.get("host")),
        "started": _str(lease.sentinel.get("started")),
        "heartbeat": _str(lease.sentinel.get("heartbeat")),
        "reason": "owner_dead" if lease.state == "dead_owner" else "heartbeat_stale",
        "silent_seconds": round(lease.age_seconds or 0),
        "step": where,
        "sub_step": st.get("sub_step") if isinstance(st, dict) else None,
        "last_events": list(snap.last_events),
        "possibly_incomplete": possibly_incomplete(snap, st if isinstance(st, dict) else {}),
    }
    return out


def _str(value: Any) -> str | None:
    """A lease field as found in an untrusted file: a string (bounded) or None."""
    return value[:200] if isinstance(value, str) else None


def _pid(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def possibly_incomplete(snap: Snapshot, step: dict[str, Any]) -> list[dict[str, Any]]:
    """Artifacts of the interrupted step that are missing, or changed after its last
    checkpoint (the crash may have left them half-written)."""
    last_cp = None
    for ev in snap.last_events:
        if ev.get("event") in ("checkpoint", "step_start"):
            last_cp = parse_ts(ev.get("ts"))
    out = []
    for path in step.get("artifacts") or []:
        mtime = snap.artifacts.get(path)
        if mtime is None:
            out.append({"path": path, "why": "missing"})
        # Worklog times have second precision: a file written in the checkpoint's own
        # second was written before it (the write moments record a file, then checkpoint).
        elif last_cp is not None and mtime >= last_cp.timestamp() + 1:
            out.append({"path": path, "why": "modified after the last checkpoint"})
    return out
