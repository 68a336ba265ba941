"""IMPLEMENTATION's tasks (``execution.json``): the executor's recovery checks, scenarios 1
and 2 of the skill, on a copy (pure)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.timeutil import format_ts
from session_resume.importers.dotagent.source import (
    RUNNING,
    TASK_DONE,
    DotagentSource,
    task_output,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def reconcile(
    src: DotagentSource,
    execution: dict[str, Any],
    now_ts: str,
    file: str,
    notes: list[Diagnostic],
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The executor's recovery checks (scenarios 1 and 2) on a copy of execution.json."""
    new = copy.deepcopy(execution)
    changes: list[dict[str, Any]] = []
    tasks = new.get("tasks")
    for i, task in enumerate(tasks if isinstance(tasks, list) else []):
        if not isinstance(task, dict):
            continue
        ident = task.get("id", f"#{i}")
        out = task_output(task, src.dir)
        facts = src.fact(out)
        status = task.get("status")
        if status in RUNNING:
            value = facts.value if facts.json_ok else None
            reported = value.get("status") if isinstance(value, dict) else None
            if facts.mtime is not None and isinstance(reported, str) and reported:
                task["status"] = reported
                if reported in TASK_DONE and not task.get("completed_at") and facts.mtime:
                    task["completed_at"] = mtime_ts(facts.mtime, now_ts)
                changes.append(
                    {"task": ident, "scenario": 2, "from": status, "to": reported, "output": out}
                )
                notes.append(
                    diag(
                        "SR820",
                        f"task {ident} was {status} but its output {out} exists and reports "
                        f"{reported!r}: the task is {reported!r} now (the skill's recovery "
                        "scenario 2)",
                        file=file,
                        pointer=f"/tasks/{i}/status",
                    )
                )
                continue
            prev = task.get("attempts")
            attempts = (prev if isinstance(prev, int) and not isinstance(prev, bool) else 0) + 1
            task.update(status="pending", attempts=attempts)
            why = (
                "no output"
                if facts.mtime is None
                else "an output that is not a readable result (a write cut short)"
            )
            changes.append(
                {
                    "task": ident,
                    "scenario": 1,
                    "from": status,
                    "to": "pending",
                    "attempts": attempts,
                    "output": out,
                }
            )
            notes.append(
                diag(
                    "SR819",
                    f"task {ident} was {status} with {why}: it is pending again, attempt "
                    f"{attempts} (the skill's recovery scenario 1)"
                    + ("; that is over the retry limit of 3" if attempts > 3 else ""),
                    file=file,
                    pointer=f"/tasks/{i}",
                )
            )
        elif status in TASK_DONE and facts.mtime is None:
            notes.append(
                diag(
                    "SR816",
                    f"task {ident} is {status} but its output {out} does not exist",
                    file=file,
                    pointer=f"/tasks/{i}",
                )
            )
    return new, changes


def mtime_ts(mtime: float, cap: str) -> str:
    """A file's modification time as a timestamp, never later than ``cap``."""
    return min(format_ts(datetime.fromtimestamp(mtime, UTC)), cap)
