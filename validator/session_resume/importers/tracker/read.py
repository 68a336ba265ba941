"""Reading a session-tracker ``.session`` directory (I/O). Nothing in it is written, renamed
or locked."""

from __future__ import annotations

import os
from pathlib import Path

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.jsonread import parse_json_bytes
from session_resume.importers.common import ImportRefused
from session_resume.importers.tracker.source import (
    MAX_WORKLOG,
    MONITOR_FILE,
    SENTINEL_FILE,
    STATE_FILE,
    TEMP,
    TODO_FILE,
    WORKLOG_FILE,
    TrackerSource,
    WorklogLine,
)
from session_resume.storage.held import read_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _read_json(path: Path, what: str, *, required: bool) -> Any:
    if not os.path.lexists(path):
        if not required:
            return None
        raise ImportRefused(
            [
                diag(
                    "SR800",
                    f"no {what} here: this is not a session-tracker session directory",
                    file=str(path),
                )
            ],
            exit_code=2,
        )
    res = read_path(path, root=path.parent)  # never a link out of the source
    if res.data is None:
        raise ImportRefused(
            [
                diag("SR801", f"cannot read {what}: {d.message}", file=str(path))
                for d in res.diagnostics
            ]
        )
    parsed = parse_json_bytes(res.data, file=str(path), require_object=False)
    if parsed.corrupt:
        raise ImportRefused(
            [
                diag(
                    "SR801",
                    f"{what} does not parse ({d.code}: {d.message}); session-tracker would "
                    "silently treat it as empty. Repair it first",
                    file=str(path),
                    line=d.line,
                    column=d.column,
                )
                for d in parsed.diagnostics
                if d.code != "SR113"
            ]
        )
    return parsed.value


def read_worklog(path: Path) -> list[WorklogLine]:
    if not os.path.lexists(path):
        return []
    res = read_path(path, max_size=MAX_WORKLOG, root=path.parent)
    if res.data is None:
        raise ImportRefused(
            [
                diag("SR801", f"cannot read the worklog: {d.message}", file=str(path))
                for d in res.diagnostics
            ]
        )
    data = res.data
    out = []
    unparsed = 0
    pieces = data.split(b"\n")
    torn_last = not data.endswith(b"\n")
    for i, raw in enumerate(pieces):
        if not raw.strip():
            continue
        text = raw.decode("utf-8", errors="replace")
        parsed = parse_json_bytes(raw, require_object=True)
        value = parsed.value if not parsed.corrupt and isinstance(parsed.value, dict) else None
        if value is None:
            unparsed += 1
            if unparsed > MAX_UNPARSED_LINES:
                raise ImportRefused([_not_a_tracker_worklog(path, i + 1)])
        out.append(WorklogLine(i + 1, value, text, torn=torn_last and i == len(pieces) - 1))
    return out


# A real tracker worklog has at most a torn last line; each unparsed line becomes a note
# event, so a file of them would turn 1 MB of input into half a million events (issue 18).
MAX_UNPARSED_LINES = 1000


def _not_a_tracker_worklog(path: Path, line: int) -> Diagnostic:
    return diag(
        "SR822",
        f"more than {MAX_UNPARSED_LINES:,} lines are not JSON objects (line {line:,} is one "
        "more): not a session-tracker worklog; nothing was written",
        file=str(path),
        line=line,
    )


def read_source(
    src_dir: str | os.PathLike[str],
    *,
    repo_root: Path,
    project_root: str | os.PathLike[str] | None = None,
) -> TrackerSource:
    """Read a ``.session`` directory. Nothing in it is written, renamed or locked."""
    d = Path(os.path.abspath(src_dir))
    if not d.is_dir():
        raise ImportRefused([diag("SR800", "no such directory", file=str(d))], exit_code=2)
    state = _read_json(d / STATE_FILE, "state.json", required=True)
    if not isinstance(state, dict):
        raise ImportRefused(
            [diag("SR801", "state.json is not a JSON object", file=str(d / STATE_FILE))]
        )
    todo = _read_json(d / TODO_FILE, "todo.json", required=False)
    if todo is None:
        todo = []
    if not isinstance(todo, list) or not all(isinstance(x, dict) for x in todo):
        raise ImportRefused(
            [
                diag(
                    "SR801",
                    "todo.json is not a JSON array of objects",
                    file=str(d / TODO_FILE),
                )
            ]
        )
    sentinel = None
    if os.path.isfile(d / SENTINEL_FILE):  # at most 64 KiB, never read whole, no link out
        sres = read_path(d / SENTINEL_FILE, max_size=65536, root=d)
        if sres.data is not None:
            sentinel = sres.data.decode("utf-8", errors="replace")
    monitor = None
    if os.path.isfile(d / MONITOR_FILE):
        mres = read_path(d / MONITOR_FILE, max_size=65536, root=d)
        if mres.data is not None:
            mp = parse_json_bytes(mres.data)
            monitor = mp.value if isinstance(mp.value, dict) and not mp.corrupt else None
    root = Path(os.path.abspath(project_root)) if project_root else d.parent
    real_repo = Path(os.path.abspath(repo_root))
    try:
        prefix: str | None = root.relative_to(real_repo).as_posix()
        prefix = "" if prefix == "." else prefix
    except ValueError:
        prefix = None
    return TrackerSource(
        dir=str(d),
        state=state,
        todo=todo,
        worklog=read_worklog(d / WORKLOG_FILE),
        sentinel=sentinel,
        temp_files=sorted(n for n in os.listdir(d) if TEMP.match(n)),
        project_root=root.as_posix(),
        repo_prefix=prefix,
        monitor=monitor,
    )
