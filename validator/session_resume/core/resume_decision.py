"""The resume decision (docs/spec.md §10): a pure function of a session snapshot, a step key or
none, the time and options, returning what the agent should do, as JSON.

The snapshot (:class:`Snapshot`) is everything read from the session directory; building it
is the storage layer's job (:func:`session_resume.snapshot.take`). ``decide`` does no I/O.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from session_resume.core import briefing as briefing_rules
from session_resume.core.lease import DEFAULT_STALE_SECONDS, Lease, is_implicit, lease_state
from session_resume.core.outcomes import StateStatus
from session_resume.core.rules import ordered_step_keys
from session_resume.core.timeutil import format_ts, parse_ts
from session_resume.core.workflow import Workflow
from session_resume.core.write_moments import started_at_gate
from session_resume.records import dataclass, field

TYPE_CHECKING = False  # typing is imported for the type checker only (cold start)
if TYPE_CHECKING:
    from typing import Any

DECISION_VERSION = 1
ACTIONS = (
    "fresh_start",
    "needs_recovery",
    "migrate_first",
    "refuse_newer_version",
    "invalid_state",
    "start",
    "restart_step",
    "resume_from_checkpoint",
    "offer_rerun",
    "next_step",
    "prerequisites_incomplete",
    "session_active",
    "workflow_complete",
    "unknown_step",
)
OLD_STATE = timedelta(days=7)


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Options:
    session: str | None = None  # the caller's session id; its own lease is not "active"
    stale_seconds: int = DEFAULT_STALE_SECONDS
    takeover: bool = False


def decide(
    snap: Snapshot,
    step: str | None,
    now: datetime,
    workflow: Workflow,
    options: Options | None = None,
) -> dict[str, Any]:
    """The resume decision as a JSON-ready dict (schema: schema/decision/1.json), with its
    ``briefing`` (None when the state cannot be used as it is, or another session is live)."""
    out = _decide(snap, step, now, workflow, options or Options())
    usable = snap.document is not None and snap.state_status == "ok"
    if not usable or out["action"] == "session_active":
        out["briefing"] = None
        return out
    assert snap.document is not None
    key = out["step"]
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
    if out["briefing"]["optional"] and out["action"] in ("start", "restart_step") and key:
        out["commands"].append(f'session-resume skip {key} --reason "optional step not needed"')
    return out


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
    lease = _judge_lease(out, snap, now, opts)
    if out["action"] or _gate_on_state(out, snap, lease, workflow):
        return out
    assert snap.document is not None

    doc = snap.document
    steps: dict[str, Any] = doc.get("steps", {})
    updated = parse_ts(doc.get("updated"))
    if updated is not None and now - updated > OLD_STATE:
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
            return _with_orphan(out, snap, lease, workflow, None)
        out["step"] = target
        _step_action(
            out, steps, order, target, workflow, orchestrator=True, events=snap.last_events
        )
    else:
        if step not in steps:
            if workflow.free_steps:
                out.update(
                    action="start", reasons=["SR701"], commands=[f"session-resume start {step}"]
                )
                return _with_orphan(out, snap, lease, workflow, None)
            out.update(action="unknown_step", reasons=["SR711"])
            return out
        if running and step not in running:
            out["warnings"].append("SR709")
        _step_action(out, steps, order, step, workflow, orchestrator=False, events=snap.last_events)
    return _with_orphan(out, snap, lease, workflow, out["step"])


def _judge_lease(out: dict[str, Any], snap: Snapshot, now: datetime, opts: Options) -> Lease:
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
        # Another session is alive: the caller must not act on the state now.
        out.update(
            action="session_active",
            reasons=["SR511"],
            commands=["session-resume session start --takeover"],
        )
    return lease


def _gate_on_state(out: dict[str, Any], snap: Snapshot, lease: Lease, workflow: Workflow) -> bool:
    """Decide for a state file that cannot be used as it is (absent, corrupt, old, too new,
    invalid); False when the state is usable."""
    status = snap.state_status
    if status in ("corrupt", "absent") and snap.backup_usable:
        out.update(
            action="needs_recovery",
            reasons=[*snap.state_codes, "SR130"],
            commands=["session-resume recover DIR"],
        )
        _with_orphan(out, snap, lease, workflow, None)
        return True
    if status == "absent":
        out.update(
            action="fresh_start", reasons=["SR700"], commands=["session-resume init PROJECT"]
        )
        return True
    if status == "corrupt":
        out.update(
            action="needs_recovery",
            reasons=list(snap.state_codes) or ["SR120"],
            commands=["session-resume recover DIR"],
        )
        _with_orphan(out, snap, lease, workflow, None)
        return True
    if status == "needs_migration":
        out.update(
            action="migrate_first", reasons=["SR140"], commands=["session-resume migrate DIR"]
        )
        return True
    if status == "too_new":
        out.update(action="refuse_newer_version", reasons=["SR141"])
        return True
    if status != "ok" or snap.document is None:
        out.update(
            action="invalid_state",
            reasons=list(snap.state_codes) or ["SR209"],
            commands=[f"session-resume {snap.repair or 'validate'} DIR"],
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
) -> None:
    st = steps[key]
    sdef = wf.step(key)
    out["step_name"] = st.get("name")
    if sdef is not None and sdef.budget is not None:
        out["startup_files"] = list(sdef.budget.startup_files)
    status = st.get("status")
    sub = st.get("sub_step")
    idx = order.index(key)
    behind = [k for k in order[:idx] if steps[k].get("status") not in ("complete", "skipped")]
    if status == "complete":
        out.update(
            action="offer_rerun",
            reasons=["SR704"],
            commands=[f"session-resume start {key} --force"],
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
            commands=[f"session-resume resume DIR --step {nxt}"] if nxt else [],
        )
        return
    if behind and not orchestrator:
        out.update(
            action="prerequisites_incomplete",
            reasons=["SR706"],
            incomplete=behind,
            commands=[f"session-resume start {key} --force", "session-resume resume DIR"],
        )
        return
    if behind:
        out["warnings"].append("SR706")
    if status == "pending":
        out.update(action="start", reasons=["SR701"], commands=[f"session-resume start {key}"])
        return
    if sub is None and started_at_gate(events, key) and not st.get("artifacts"):
        # Handed over at a gate (`transition`), no work recorded: a start, not a restart.
        out.update(action="start", reasons=["SR712"], commands=[f"session-resume start {key}"])
        return
    if sub is None:
        out.update(
            action="restart_step", reasons=["SR702"], commands=[f"session-resume start {key}"]
        )
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
    # lazy: shell quoting only for a resume answer, not on the write path that imports this
    import shlex

    keep = "".join(
        f" --artifact {shlex.quote(p)}" for p in st.get("artifacts") or [] if isinstance(p, str)
    )
    out["commands"] = [
        f"session-resume checkpoint {key} {out['next_checkpoint']}{keep}"
        if out["next_checkpoint"]
        else f"session-resume complete {key}"
    ]


def _with_orphan(
    out: dict[str, Any], snap: Snapshot, lease: Any, wf: Workflow, key: str | None
) -> dict[str, Any]:
    if not lease.orphaned:
        return out
    out["warnings"].append("SR512")
    doc = snap.document or {}
    steps = doc.get("steps", {}) if isinstance(doc.get("steps"), dict) else {}
    running = [
        k for k, s in steps.items() if isinstance(s, dict) and s.get("status") == "in_progress"
    ]
    where = running[0] if running else key
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
