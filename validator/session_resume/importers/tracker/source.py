"""The parsed session-tracker ``.session`` directory (:class:`TrackerSource`), its worklog
lines, and the tracker's vocabularies (pure)."""

from __future__ import annotations

import re

from session_resume.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SOURCE = "session-tracker"
FORMAT_VERSION = "2.1"
STATE_FILE = "state.json"
TODO_FILE = "todo.json"
WORKLOG_FILE = "worklog.jsonl"
SENTINEL_FILE = "SESSION_ACTIVE"
MONITOR_FILE = "monitor.pid"
# v2.1 hard-codes its project root; paths recorded on another machine start with it.
DEFAULT_PROJECT_ROOT = "/home/z/my-project"
MAX_WORKLOG = 256 * 1024 * 1024
DECIMAL = re.compile(r"^[0-9]+\Z")
TEMP = re.compile(r"^\.st_.*\.tmp\Z")

STATUS_MAP = {
    "completed": "complete",
    "in_progress": "in_progress",
    "pending": "pending",
    "skipped": "skipped",
}
# tracker action -> worklog event (sync_update depends on its new status)
EVENT_MAP = {
    "init": "session_start",
    "step_start": "step_start",
    "step_done": "step_complete",
    "session_done": "session_end",
    "ping": "heartbeat",
}


@record
class WorklogLine:
    """One line of ``worklog.jsonl``: its object, or None when it is not a JSON object."""

    line: int
    value: dict[str, Any] | None
    raw: str
    torn: bool = False
    salvaged: bool = False  # an event recovered from the end of a garbled line


@record
class TrackerSource:
    """The parsed contents of a ``.session`` directory.

    ``project_root``: the tracker's project root as found locally (absolute POSIX path);
    relative inventory keys are taken relative to it. ``repo_prefix``: where that root lies
    inside the target repository ("" for the repository root itself, None if outside).
    """

    dir: str
    state: dict[str, Any]
    todo: list[dict[str, Any]]
    worklog: list[WorklogLine] = field(default_factory=list)
    sentinel: str | None = None
    temp_files: list[str] = field(default_factory=list)
    project_root: str = DEFAULT_PROJECT_ROOT
    repo_prefix: str | None = ""
    monitor: dict[str, Any] | None = None


def ident_of(value: Any) -> str | None:
    """A todo item's id as text (an integer or a non-blank string), or None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | str):
        text = str(value).strip()
        return text or None
    return None


def action_of(ln: WorklogLine) -> str | None:
    """The ``action`` of a worklog line, or None."""
    a = (ln.value or {}).get("action")
    return a if isinstance(a, str) else None
