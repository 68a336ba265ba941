"""The briefing of the resume decision (docs/spec.md §10): everything a fresh agent needs from
the state, so that it never opens the raw JSON, and which files to read now (``load``, within
the step's budget: partial deliverables first, then startup inputs) or not (``skip``, each with
its reason). Pure: the file facts come in the :class:`~session_resume.core.resume_decision.
Snapshot`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from session_resume.core.workflow import Deliverable, StepDef, Workflow
from session_resume.core.write_checks import one_form

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LOG_ENTRIES = 5  # the last decision_log entries shown
EVENTS = 5  # the last worklog events shown
# Startup inputs the briefing replaces: a fresh agent reads the briefing instead.
STATE_FILES = ("00-session-state.json", "00-handoff.md")

# The actions that work on a step now: its files to read are listed.
WORKING = ("start", "restart_step", "resume_from_checkpoint", "continue_step")
WHY_PARTIAL = "partial deliverable of this step: continue it"
WHY_INPUT = "startup input of this step (workflow budget)"
SKIP_STATE = "the briefing carries it"
SKIP_MISSING = "listed but not on disk"
SKIP_OVER = (
    "over the step's budget of {n} startup files (the files above come first); open it only "
    "if they leave a question it answers"
)


def _as(value: Any, kind: type) -> Any:
    """``value`` when it has the JSON type ``kind``, else an empty one."""
    return value if isinstance(value, kind) else kind()


def _cp(sdef: StepDef | None, cid: str | None) -> dict[str, Any] | None:
    if cid is None:
        return None
    after = next((c.after for c in sdef.checkpoints if c.id == cid), None) if sdef else None
    return {"id": cid, "after": after}


def session_path(session_rel: str | None, name: str) -> str:
    return f"{session_rel}/{name}" if session_rel not in (None, "", ".") else name


def build(
    doc: Mapping[str, Any],
    key: str | None,
    wf: Workflow,
    *,
    action: str,
    exists: Mapping[str, bool],
    events: Sequence[Mapping[str, Any]],
    session_rel: str | None = None,
) -> dict[str, Any]:
    """The briefing for step ``key`` (None: no step) of the usable state ``doc``.

    ``exists``: whether a path exists, for the step's artifacts (repository-relative) and
    its startup inputs (relative to the session directory). ``session_rel``: the session
    directory relative to the repository root, so that every path given is repository-
    relative."""
    steps = doc.get("steps") if isinstance(doc.get("steps"), dict) else {}
    st = steps.get(key) if key is not None and isinstance(steps, dict) else None
    st = st if isinstance(st, dict) else {}
    sdef = wf.step(key) if key is not None else None
    log = _as(doc.get("decision_log"), list)
    audit = _as(doc.get("review_audit"), dict)
    decisions = _as(doc.get("decisions"), dict)
    findings = _as(doc.get("open_findings"), list)

    # each in its one form (repository-relative: a bare name of an old state is in the
    # session directory), so that every path given can be opened as printed
    artifacts = [
        {"path": one_form(p, session_rel), "exists": bool(exists.get(p))}
        for p in st.get("artifacts") or []
        if isinstance(p, str)
    ]
    sub = st.get("sub_step") if isinstance(st.get("sub_step"), str) else None
    ids = sdef.checkpoint_ids if sdef is not None else ()
    fresh = ("start", "restart_step", "offer_rerun", "continue_step")
    if action in fresh:
        sub = None
    if sub is None:  # a complete step (offer_rerun) has no next checkpoint: nothing is next
        nxt = ids[0] if ids and action in fresh and action != "offer_rerun" else None
    else:
        pos = ids.index(sub) if sub in ids else None
        nxt = ids[pos + 1] if pos is not None and pos + 1 < len(ids) else None

    load, skip = _load_and_skip(st, sdef, artifacts, exists, session_rel, action, sub)
    return {
        "step": key,
        "optional": bool(sdef.optional) if sdef is not None else False,
        "decisions": dict(decisions),
        "open_findings": list(findings),
        "decision_log": [e for e in log if isinstance(e, dict)][-LOG_ENTRIES:],
        "review_audit": audit.get(f"step_{key}") if key is not None else None,
        "review_audited": bool(sdef.review_audited) if sdef is not None else False,
        "artifacts": artifacts,
        "last_checkpoint": _cp(sdef, sub),
        "next_checkpoint": _cp(sdef, nxt),
        "last_events": [dict(e) for e in events][-EVENTS:],
        "load": load,
        "skip": skip,
    }


def _load_and_skip(
    st: Mapping[str, Any],
    sdef: StepDef | None,
    artifacts: list[dict[str, Any]],
    exists: Mapping[str, bool],
    session_rel: str | None,
    action: str,
    sub: str | None = None,
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """``load``: the step's existing artifacts and deliverables (while it is in progress),
    then its startup inputs, at most the budget's ``max_startup_files`` (the briefing takes
    the state file's place); ``skip``: the rest, each with why."""
    load: list[dict[str, str]] = []
    skip: list[dict[str, str]] = []
    working = action in WORKING
    if working and st.get("status") == "in_progress":
        # A draft on disk is read and continued, recorded with `--artifact` or not: a
        # fresh agent that never saw it would write the step's deliverable over it.
        for a in artifacts:
            if a["exists"]:
                load.append({"path": a["path"], "why": WHY_PARTIAL})
            else:
                skip.append({"path": a["path"], "reason": SKIP_MISSING})
        if sdef is not None:
            _due_deliverables(sdef, sub, exists, session_rel, load, skip)
            _drafts(sdef, exists, session_rel, load)
    if sdef is None or sdef.budget is None or not working:
        return load, skip
    budget = sdef.budget
    capacity = budget.max_startup_files
    for name in budget.startup_files:
        path = session_path(session_rel, name)
        if name in STATE_FILES:
            # the briefing replaces it: it never counts against the budget (a new chat has
            # loaded nothing, so the whole budget is for the files below)
            skip.append({"path": path, "reason": SKIP_STATE})
            continue
        if not exists.get(name):
            skip.append({"path": path, "reason": SKIP_MISSING})
            continue
        if len(load) >= max(capacity, 0):
            skip.append({"path": path, "reason": SKIP_OVER.format(n=capacity)})
            continue
        load.append({"path": path, "why": WHY_INPUT})
    return load, skip


def _due_deliverables(
    sdef: StepDef,
    sub: str | None,
    exists: Mapping[str, bool],
    session_rel: str | None,
    load: list[dict[str, str]],
    skip: list[dict[str, str]],
) -> None:
    """The workflow's deliverables of the step that its recorded checkpoint says exist and that
    its artifacts do not list: a partial deliverable like a recorded one (first in ``load``,
    after the recorded ones), or skipped as not on disk (docs/spec.md §10.1)."""
    listed = {e["path"] for e in load} | {e["path"] for e in skip}
    for d in sdef.deliverables_due(sub):
        path = session_path(session_rel, d.file)
        if path in listed:
            continue
        if exists.get(d.file):
            load.append({"path": path, "why": WHY_PARTIAL})
        else:
            skip.append({"path": path, "reason": SKIP_MISSING})


def _drafts(
    sdef: StepDef,
    exists: Mapping[str, bool],
    session_rel: str | None,
    load: list[dict[str, str]],
) -> None:
    """The step's other deliverables already on disk (written before the checkpoint the
    workflow names for them): drafts, read and continued like a recorded one."""
    listed = {e["path"] for e in load}
    for d in sdef.deliverables:
        path = session_path(session_rel, d.file)
        if path not in listed and exists.get(d.file):
            load.append({"path": path, "why": WHY_PARTIAL})
            listed.add(path)


def briefing_paths(doc: Mapping[str, Any], key: str | None, wf: Workflow) -> tuple[str, ...]:
    """The startup inputs (session-directory-relative) whose existence the briefing needs."""
    sdef = wf.step(key) if key is not None else None
    if sdef is None or sdef.budget is None:
        return ()
    return tuple(f for f in sdef.budget.startup_files if f not in STATE_FILES)


def lost(
    session_rel: str | None, files: Mapping[str, bool], due: Sequence[Deliverable]
) -> list[str]:
    """The repository-relative paths of the deliverables in ``due`` not on disk (``files``:
    whether each session-directory-relative name is a file there)."""
    return [session_path(session_rel, d.file) for d in due if not files.get(d.file)]


def deliverable_files(wf: Workflow) -> tuple[str, ...]:
    """Every step's deliverables (session-directory-relative): whose existence resume needs."""
    return tuple(d.file for s in wf.steps for d in s.deliverables)
