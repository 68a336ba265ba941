"""The plan of a fresh start (docs/spec.md §10.2): no state yet, so `init` first, then the
workflow's first step as the start of the state `init` writes. Part of the resume decision
(:mod:`~session_resume.core.resume_decision`), pure."""

from __future__ import annotations

from session_resume.core import plan as plan_rules
from session_resume.core.rules import ordered_step_keys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from session_resume.core.workflow import Workflow

INIT = "session-resume init PROJECT"


def fresh_plan(out: dict[str, Any], session_rel: str | None, now: datetime, wf: Workflow) -> None:
    """A fresh start's plan (docs/spec.md §10.2): `init` creates the state and takes the
    lease, then the workflow's first step as a `start` of the state `init` writes (its start,
    its checkpoints, what completes it). The service adds `init`'s workflow and session.
    ``session_rel``: the session directory relative to the repository root (the snapshot's)."""
    keys = wf.step_keys
    if not keys:
        return
    # A session-start hook's plan of a session in progress imports no write moment
    # (tests/test_cold_imports.py).
    # lazy: the write moments only for a fresh start
    from session_resume.core.write_moments import init_state

    doc = init_state(wf, "fresh", now)
    key = ordered_step_keys(doc.get("steps", {}), wf)[0] if doc.get("steps") else keys[0]
    plan = plan_rules.build(doc, key, wf, action="start", sub=None, session_rel=session_rel)
    sdef = wf.step(key)
    out.update(step=key, step_name=sdef.name if sdef is not None else None, plan=plan)
    out["commands"] = [
        plan_rules.cmd(INIT),
        *plan_rules.commands(plan, "start", True),
    ]
    out["alternatives"] = plan_rules.alternatives(plan, "start")
