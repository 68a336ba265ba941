"""Todo items → steps (pure): a step key per item, the item's status mapped (SR808 for one
outside the tracker's four), times and attempts from the worklog, and at most one step in
progress (SR809)."""

from __future__ import annotations

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.rules import step_number
from session_resume.core.workflow import pending_step
from session_resume.importers.common import latest
from session_resume.importers.tracker.history import History
from session_resume.importers.tracker.source import (
    DECIMAL,
    SOURCE,
    STATUS_MAP,
    TrackerSource,
    ident_of,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def step_keys(todo: list[dict[str, Any]], file: str, notes: list[Diagnostic]) -> list[str]:
    """A step key per todo item: its decimal id, else (or when taken) the next free key."""
    keys: list[str | None] = []
    used: set[str] = set()
    for item in todo:
        ident = ident_of(item.get("id"))
        key = str(int(ident)) if ident is not None and DECIMAL.match(ident) else None
        if key is not None and key in used:
            key = None
        if key is not None:
            used.add(key)
        keys.append(key)
    nxt = max((step_number(k) for k in used), default=0) + 1
    out = []
    for item, key in zip(todo, keys, strict=True):
        if key is None:
            key = str(nxt)
            nxt += 1
            notes.append(
                diag(
                    "SR810",
                    f"todo item id {item.get('id')!r} cannot be a step key or is used twice; "
                    f"it is step {key} (the mapping is kept in x-todo-ids)",
                    file=file,
                )
            )
        out.append(key)
    return out


def _pick_running(
    running: list[str],
    current_id: Any,
    id_key: dict[str, str],
    hist: History,
    todo: list[dict[str, Any]],
    keys: list[str],
) -> str:
    """Which of several in-progress items stays in progress: the tracker's current step, else
    the one started last, else the first in todo order (what the tracker's resume names)."""
    cur = id_key.get(ident_of(current_id) or "")
    if cur in running:
        return cur
    key_id = {k: ident_of(item.get("id")) for item, k in zip(todo, keys, strict=True)}
    started = [(max(hist.starts.get(key_id[k] or "", [""])), k) for k in running]
    best = max(started, key=lambda x: x[0])
    return best[1] if best[0] else running[0]


def keys_by_id(todo: list[dict[str, Any]], keys: list[str]) -> dict[str, str]:
    """Todo id → step key (the first item with an id keeps it)."""
    id_key: dict[str, str] = {}
    for item, key in zip(todo, keys, strict=True):
        ident = ident_of(item.get("id"))
        if ident is not None and ident not in id_key:
            id_key[ident] = key
    return id_key


def todo_steps(
    src: TrackerSource,
    keys: list[str],
    hist: History,
    *,
    done_fallback: str,
    start_fallback: str,
    file: str,
    notes: list[Diagnostic],
) -> tuple[dict[str, Any], list[str], list[str]]:
    """(steps by key, findings, keys of the steps in progress). ``done_fallback``: when a
    complete item has no completion in the worklog; ``start_fallback``: when an item in
    progress has no start."""
    steps: dict[str, Any] = {}
    findings: list[str] = []
    running: list[str] = []
    for item, key in zip(src.todo, keys, strict=True):
        content = item.get("content")
        name = content if isinstance(content, str) else ("" if content is None else str(content))
        step = pending_step(name)
        ident = ident_of(item.get("id"))
        legacy: dict[str, Any] = {"source": SOURCE, "todo": item}
        raw_status = item.get("status")
        status = STATUS_MAP.get(raw_status) if isinstance(raw_status, str) else None
        if status is None:
            legacy["status"] = {"original": raw_status, "code": "SR808"}
            notes.append(
                diag(
                    "SR808",
                    f"todo item {ident or key} has status {raw_status!r}, outside "
                    "session-tracker's pending/in_progress/completed/skipped; step "
                    f"{key} is pending and the original is kept under x-legacy",
                    file=file,
                )
            )
            if raw_status == "blocked":
                findings.append(f"step {key} ({name}) was blocked in session-tracker")
            status = "pending"
        if status == "in_progress":
            running.append(key)
        step["status"] = status
        _step_times(step, ident, hist, src.state, done_fallback, start_fallback)
        step["x-legacy"] = legacy
        steps[key] = step
    return steps, findings, running


def _step_times(
    step: dict[str, Any],
    ident: str | None,
    hist: History,
    state: dict[str, Any],
    done_fallback: str,
    start_fallback: str,
) -> None:
    """``started``, ``completed``, ``attempts`` and ``skip_reason`` of a step by its status."""
    status = step["status"]
    starts = hist.starts.get(ident or "", [])
    if status == "complete":
        done = latest(*hist.dones.get(ident or "", []), hist.synced(ident, "completed"))
        step["completed"] = done or done_fallback
        step["started"] = max((s for s in starts if s <= step["completed"]), default=None)
    elif status == "in_progress":
        step["started"] = (
            (starts[-1] if starts else None) or hist.synced(ident, "in_progress") or start_fallback
        )
        step["attempts"] = max(1, len(starts))
    elif status == "skipped":
        step["skip_reason"] = (
            "pending when session-tracker's `done` ended the session"
            if state.get("status") == "completed"
            else "skipped in session-tracker"
        )
    if starts and status == "complete":
        step["attempts"] = len(starts)


def one_in_progress(
    src: TrackerSource,
    steps: dict[str, Any],
    running: list[str],
    keys: list[str],
    id_key: dict[str, str],
    hist: History,
    *,
    file: str,
    notes: list[Diagnostic],
) -> None:
    """Several steps in progress: keep one (:func:`_pick_running`), make the others pending
    with the original kept under the step's x-legacy (SR809)."""
    if len(running) <= 1:
        return
    current_id = src.state.get("current_step_id")
    keep = _pick_running(running, current_id, id_key, hist, src.todo, keys)
    for key in running:
        if key == keep:
            continue
        st = steps[key]
        st["x-legacy"]["demoted"] = {
            "status": "in_progress",
            "started": st["started"],
            "attempts": st.get("attempts"),
            "code": "SR809",
        }
        st.update(status="pending", started=None)
        st.pop("attempts", None)
    notes.append(
        diag(
            "SR809",
            f"todo items of steps {', '.join(running)} are all in_progress; step {keep} "
            "stays in progress ("
            + (
                "the tracker's current_step_id"
                if id_key.get(ident_of(current_id) or "") == keep
                else "started last"
            )
            + "), the others are pending with the original kept under x-legacy",
            file=file,
        )
    )
