"""What the 3.0 repair pass shares: the version, the closed sets, time values."""

from __future__ import annotations

import functools
import re
from datetime import datetime

from session_resume.core.timeutil import format_ts, parse_ts
from session_resume.core.workflow import BUILTINS, WorkflowError, load_workflow

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

VERSION = "3.0"  # the version whose known defects this pass repairs

DOTTED_KEY = re.compile(r"^([0-9]+)\.([0-9]+)\Z")
STEP_KEY = re.compile(r"^[0-9]+(_[0-9]+)?\Z")
DECISION_ID = re.compile(r"^D[0-9]{3,}\Z")
COMPLEXITY = {"low": "simple", "medium": "standard", "high": "complex"}
RESOLVED = {"resolved", "closed", "done", "fixed", "wontfix", "won't fix"}
STATUSES = {"pending", "in_progress", "complete", "skipped"}
STEP_FIELDS = (
    "name",
    "agent",
    "status",
    "sub_step",
    "started",
    "completed",
    "artifacts",
    "context_files_used",
)
STEP_OPTIONAL = ("attempts", "telemetry", "skip_reason")


def ts_value(value: Any) -> tuple[str | None, bool]:
    """(normalised timestamp or None, whether the input was usable)."""
    if value is None or value == "":
        return None, True
    if not isinstance(value, str):
        return None, False
    if parse_ts(value):
        return value, True
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None, False
    if dt.tzinfo is None:
        return None, False
    return format_ts(dt), True


@functools.cache
def legacy_top_level_keys() -> frozenset[str]:
    """Top-level keys of old states that some built-in workflow keeps in ``decisions``."""
    out: set[str] = set()
    for name in BUILTINS:
        try:
            out |= {d.key for d in load_workflow(name).decisions if d.legacy_top_level}
        except WorkflowError:
            continue
    return frozenset(out)
