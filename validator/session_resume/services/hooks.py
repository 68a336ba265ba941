"""What the agent host's hooks decide (docs/spec.md §13): which
session a hook is about (ordered without reading a state), the reason a denied tool call is
given (the guard itself is ``hook_guard``), whether a written file is not recorded yet,
whether work is unrecorded at a stop, and the compaction note.

Every function here reads only, except :func:`record_compaction` (one ``note`` event appended
to the worklog under the session lock). None raises for bad input: a hook that cannot decide
allows (the front end, ``cli/commands/hook.py``, prints nothing). Imports are kept to what the
cheap events need; the resume plan is built by the front end through ``services.resume``.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

from session_resume.records import record
from session_resume.rendering.escape import prose, shell_word
from session_resume.storage.config import ConfigError, load_config

# lazy imports: a hook imports only what its event needs (the host waits)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

STATE = "00-session-state.json"
BAK = STATE + ".bak"
WORKLOG = "00-worklog.jsonl"
LEASE = "00-session.active"
# The protocol files and what each one is (the guard refuses more: services/hook_guard.py).
PROTECTED = {
    STATE: "state",
    BAK: "bak",
    WORKLOG: "worklog",
    LEASE: "lease",
    STATE + ".lock": "lock",
    "00-handoff.md": "handoff",
}
# Names in a session directory that are the protocol's own, never an artifact.
_OWN_PREFIXES = ("00-session", "00-worklog", "00-handoff", ".00-session", ".archive")
MAX_SESSIONS = 200  # session directories looked at under the session root
MAX_WALK = 2000  # files looked at under one session directory at a stop
MAX_STATE = 8 * 1024 * 1024  # a state larger than the readers' limit is not read here
ORDER_TAIL = 16 * 1024  # bytes of one worklog's end read to order the sessions
ORDER_BUDGET = 256 * 1024  # bytes read to order all the sessions of a repository
MAX_PATHS = 100_000  # path strings taken from one tool input (the input is at most 4 MiB)
_MAX_DEPTH = 6  # levels of a tool input searched for paths

# Keys of a tool input that name a file (Claude Code, VS Code, Copilot tools).
_PATH_KEYS = frozenset(
    {
        "file_path",
        "filePath",
        "path",
        "paths",
        "files",
        "file",
        "filename",
        "fileName",
        "target",
        "target_file",
        "targetFile",
        "destination",
        "dest",
        "source",
        "src",
        "old_path",
        "new_path",
        "oldPath",
        "newPath",
        "notebook_path",
        "uri",
    }
)
_PATCH_KEYS = frozenset({"input", "patch", "diff"})
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)
_WRITE_WORDS = (
    "write",
    "edit",
    "create",
    "replace",
    "insert",
    "delete",
    "remove",
    "rename",
    "move",
    "patch",
    "notebook",
    "update",
    "save",
)
_SHELL_WORDS = ("bash", "shell", "powershell", "terminal", "command", "exec")
_READ_COMMANDS = frozenset({"view", "read", "open", "show", "list"})


@record(frozen=True)
class Sessions:
    """The repository a hook runs in and its session directories, the one with a step in
    progress first (then the most recently written)."""

    root: Path
    cwd: Path
    dirs: tuple[Path, ...]
    workflow: str | None = None  # the project configuration's workflow
    # no session yet, and one could be started here: a git repository whose session root is
    # absent or a directory inside it (a fresh start, docs/spec.md §10.2)
    fresh: bool = False


def find_sessions(
    cwd: str | os.PathLike[str], *, order: bool = True, fallback: bool = False
) -> Sessions | None:
    """The sessions of the repository holding ``cwd`` (its configured session root's
    directories that hold a state or a ``.bak``); None when ``cwd`` is not a directory or the
    configuration cannot be read. With ``order`` the one with a step in progress comes first,
    then the most recently written: no state is read for that, only the last
    :data:`ORDER_TAIL` bytes of the worklogs of the most recently written sessions, at most
    :data:`ORDER_BUDGET` bytes in all (:func:`step_open`). With ``fallback``, a configuration
    that cannot be read is taken as the default one in the repository found lexically (the
    check that puts back protocol files still runs where a changed configuration hid them)."""
    try:
        here = Path(os.path.abspath(cwd))
        if not here.is_dir():
            return None
        cfg = load_config(here)
    except ConfigError:
        # lazy: a hook looks for the repository itself only when its configuration is broken
        from session_resume.storage.config import Config
        from session_resume.storage.hook_probe import repo_of

        top = repo_of(os.fspath(here)) if fallback else None
        if top is None:
            return None
        cfg = Config(root=Path(top))
    except (OSError, ValueError):
        return None
    base = cfg.root / cfg.session_root
    if not _within(os.path.realpath(base), os.path.realpath(cfg.root)):
        return Sessions(cfg.root, here, (), cfg.workflow)  # a session root linked elsewhere
    found: list[tuple[float, Path]] = []
    try:
        with os.scandir(base) as it:
            for n, entry in enumerate(it):
                if n >= MAX_SESSIONS:
                    break
                if entry.is_symlink() or not entry.is_dir(follow_symlinks=False):
                    continue
                d = Path(entry.path)
                state = d / STATE
                if not (os.path.lexists(state) or os.path.lexists(d / BAK)):
                    continue
                found.append((-_mtime(state), d))
    except FileNotFoundError:
        found = []  # no session root yet
    except OSError:
        return Sessions(cfg.root, here, (), cfg.workflow)
    found.sort()
    dirs = [d for _, d in found]
    if order:
        budget = ORDER_BUDGET
        open_first: list[Path] = []
        for d in dirs:
            if budget < ORDER_TAIL:
                break
            budget -= ORDER_TAIL
            if step_open(d) is True:
                open_first.append(d)
        dirs = open_first + [d for d in dirs if d not in open_first]
    fresh = not dirs and os.path.lexists(cfg.root / ".git")
    return Sessions(cfg.root, here, tuple(dirs), cfg.workflow, fresh)


# The worklog events after which a step is (or may be) open, and those that close it.
_OPENS = frozenset({"step_start", "checkpoint", "imported", "recovered", "migrated"})
_CLOSES = frozenset({"step_complete", "step_skip", "archived", "recreated"})


def step_open(session_dir: Path) -> bool | None:
    """Whether the session's worklog says a step is open: its last event that opens or
    closes a step (in the last :data:`ORDER_TAIL` bytes) opens one; None when the tail holds
    no such event (no worklog, as in a session another tool wrote: only the state can say).
    Bounded: neither the state nor the whole worklog is read."""
    # lazy: a hook imports the storage probe only once it orders sessions
    from session_resume.storage.hook_probe import tail

    data = tail(os.fspath(session_dir), WORKLOG, ORDER_TAIL)
    for line in reversed(data.split(b"\n")):
        try:
            ev = json.loads(line)
        except (ValueError, RecursionError):
            continue
        name = ev.get("event") if isinstance(ev, dict) else None
        if name in _OPENS:
            return True
        if name in _CLOSES:
            return False
    return None


def _size(path: Path) -> int:
    st = _lstat(path)
    return st.st_size if st is not None else 0


def _mtime(path: Path) -> float:
    st = _lstat(path)
    return st.st_mtime if st is not None else 0.0


def _lstat(path: Path) -> os.stat_result | None:
    """``lstat`` of a session file by plain name inside its directory held."""
    # lazy: a hook imports the held directory only once it looks at a session file
    from session_resume.storage.held import HeldDir, StoreError

    try:
        with HeldDir.at(path.parent, path.parent) as h:
            return h.stat(path.name)
    except (StoreError, OSError):
        return None


def _read_object(session_dir: Path, name: str, limit: int) -> dict[str, Any] | None:
    """The JSON object in the session file ``name``, read by plain name inside the session
    directory held (storage.held: never through a link, never waiting on a FIFO); None when
    it cannot be read, is larger than ``limit`` or is not a JSON object."""
    # lazy: a hook imports the held directory only once it reads a session file
    from session_resume.storage.held import HeldDir, StoreError

    try:
        with HeldDir.at(session_dir, session_dir) as h:
            fd = h.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (StoreError, OSError):
        return None
    try:
        if not _regular(fd):
            return None
        data = os.read(fd, limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > limit:
        return None
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def read_state(session_dir: Path) -> dict[str, Any] | None:
    """The state document as JSON, read without following a link and without the checks a
    write makes (a hook only needs the step in progress); None when unreadable."""
    return _read_object(session_dir, STATE, MAX_STATE)


def _regular(fd: int) -> bool:
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        return False


def in_progress(doc: dict[str, Any] | None) -> tuple[str, dict[str, Any]] | None:
    """The step in progress of a state document (its key and its entry), or None."""
    steps = (doc or {}).get("steps")
    if not isinstance(steps, dict):
        return None
    for key, step in steps.items():
        if isinstance(step, dict) and step.get("status") == "in_progress":
            return str(key), step
    return None


def lease_of(session_dir: Path) -> dict[str, Any] | None:
    """The lease file's JSON (session, heartbeat, implicit), or None; a lease whose session
    is no session id is unreadable (docs/spec.md §7): None, its text never shown."""
    # lazy: the session id's form, only once a hook reads a lease
    from session_resume.core.lease import is_session_id

    doc = _read_object(session_dir, LEASE, 64 * 1024)
    return doc if doc is not None and is_session_id(doc.get("session")) else None


# --- paths a tool names ----------------------------------------------------------------------


def is_shell_tool(tool_name: str) -> bool:
    name = tool_name.lower()
    return any(w in name for w in _SHELL_WORDS)


def is_write_tool(tool_name: str, tool_input: Any) -> bool:
    """Whether a file tool of this name writes, edits, moves or deletes what it names. A tool
    whose input says it only views (``command: view``) does not."""
    name = tool_name.lower().replace("_", "").replace("-", "")
    if isinstance(tool_input, dict):
        cmd = tool_input.get("command")
        if isinstance(cmd, str) and cmd.lower() in _READ_COMMANDS:
            return False
    return any(w in name for w in _WRITE_WORDS)


def tool_paths(tool_input: Any) -> list[str]:
    """The file paths a tool input names: the values of its path keys (strings or lists of
    them, at any depth up to a few levels) and the files an apply-patch text names."""
    out: list[str] = []

    def walk(value: Any, key: str | None, depth: int) -> None:
        if depth > _MAX_DEPTH or len(out) >= MAX_PATHS:
            return
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k if isinstance(k, str) else None, depth + 1)
        elif isinstance(value, list):
            for v in value[:MAX_PATHS]:
                walk(v, key, depth + 1)
        elif isinstance(value, str) and key is not None:
            if key in _PATH_KEYS and 0 < len(value) <= 4096:
                out.append(value)
            elif key in _PATCH_KEYS:
                for m in _PATCH_FILE.finditer(value):
                    out.append((m.group(1) or m.group(2)).strip())

    walk(tool_input, None, 0)
    return out[:MAX_PATHS]


def _absolute(path: str, cwd: Path) -> str | None:
    if path.startswith("file://"):
        path = path[len("file://") :]
    if "\x00" in path:
        return None
    return os.path.normpath(path if os.path.isabs(path) else os.path.join(cwd, path))


def _within(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


def shown_path(path: Path, sessions: Sessions | Path) -> str:
    """``path`` as the agent should type it: relative to its working directory when inside
    it, else absolute; quoted for a shell, nothing raw (rendering.escape.shell_word)."""
    p = os.path.abspath(path)
    cwd = os.path.abspath(sessions.cwd if isinstance(sessions, Sessions) else sessions)
    rel = os.path.relpath(p, cwd) if _within(p, cwd) else p
    return shell_word(rel)


def deny_reason(kind: str, where: Path, cwd: Path, *, shown: str | None = None) -> str:
    """Why a tool call is denied and which command makes the change instead. ``where``: the
    session directory (the directory holding the file); ``shown``: the file or directory
    named."""
    d = shown_path(where, cwd)
    what = shown_path(Path(shown), cwd) if shown else d
    name = {v: k for k, v in PROTECTED.items()}.get(kind, what)
    head = f"session-resume: {name} is written only by session-resume, never by hand. "
    if kind == "state":
        return head + (
            f"Ask what to record with `session-resume resume {d}`, then record it with its "
            f"write: `session-resume checkpoint STEP CHECKPOINT --session-dir {d}`, "
            f"`session-resume start|complete|skip STEP --session-dir {d}` or `session-resume "
            f"decide KEY VALUE --session-dir {d}` (MCP tools `checkpoint`, `start`, `complete`, "
            "`skip`, `decide`); a damaged state is repaired with "
            f"`session-resume recover {d}` (MCP `recover`)."
        )
    if kind == "bak":
        return head + (
            "It is the previous state, kept by every write; to restore it run "
            f"`session-resume recover {d}` (MCP tool `recover`)."
        )
    if kind == "worklog":
        return head + (
            "It is append-only: every write moment appends its event, so record the work "
            f"itself (`session-resume checkpoint STEP CHECKPOINT --session-dir {d}`, MCP tool "
            f"`checkpoint`; `session-resume resume {d}` says which write is next)."
        )
    if kind == "lock":
        return head + (
            "It is the session's lock, taken and released by each write; leave it alone (a "
            f"write waiting for it says so). `session-resume resume {d}` says which write is next."
        )
    if kind == "handoff":
        return head + (
            f"It is rendered from the state: record the change with a write (`session-resume "
            f"resume {d}` says which), then run `session-resume render handoff {d}` (MCP tool "
            "`render_handoff`)."
        )
    if kind == "record":
        return (
            f"session-resume: {what} is session-resume's record of its own last writes, used "
            "to put back a protocol file changed by anything else; leave it alone. "
            f"`session-resume resume {d}` says which write is next."
        )
    if kind == "config":
        return (
            f"session-resume: {what} is session-resume's configuration; it is the user's to "
            "change, not an agent's. Ask the user to make the change."
        )
    if kind == "tree":
        return (
            f"session-resume: {what} holds a session's protocol files (state, worklog, lease), "
            "which only session-resume writes. To retire a session run `session-resume archive "
            "SESSION_DIR` (MCP tool `archive`); remove other files by their own names."
        )
    lease = lease_of(where)
    held = lease is not None and not lease.get("implicit") and isinstance(lease.get("session"), str)
    named = f" --session {shell_word(lease['session'])}" if held and lease else ""
    return head + (
        f"It is the session's lease: take it with `session-resume session start --session-dir "
        f"{d}`, release it with `session-resume session end --session-dir {d}{named}` (MCP "
        "tools `session_start`, `session_end`)."
    )


# --- written files not recorded yet ------------------------------------------------------------


def _own_file(rel_parts: tuple[str, ...]) -> bool:
    return any(p.startswith(_OWN_PREFIXES) for p in rel_parts[:1]) or rel_parts[-1].endswith(
        (".tmp", ".lock")
    )


def _session_of(path: str, sessions: Sessions) -> tuple[Path, str] | None:
    """(session directory, repository-relative POSIX path) when ``path`` is a file under
    one of the sessions' directories that is not a protocol file."""
    p = _absolute(path, sessions.cwd)
    if p is None:
        return None
    for d in sessions.dirs:
        top = os.path.abspath(d)
        if _within(p, top) and p != top:
            parts = Path(os.path.relpath(p, top)).parts
            if _own_file(parts):
                return None
            return d, Path(os.path.relpath(p, os.path.abspath(sessions.root))).as_posix()
    return None


@record(frozen=True)
class StepPlace:
    """Where the step in progress of one session stands: its key, the next checkpoint (None
    when every checkpoint is recorded) and the artifacts it lists."""

    session_dir: Path
    step: str
    next_checkpoint: str | None
    artifacts: frozenset[str]
    session: str | None  # the explicit lease's session id, to name in commands


def step_place(session_dir: Path, sessions: Sessions) -> StepPlace | None:
    doc = read_state(session_dir)
    current = in_progress(doc)
    if current is None or doc is None:
        return None
    key, step = current
    arts = step.get("artifacts")
    listed = frozenset(a for a in arts if isinstance(a, str)) if isinstance(arts, list) else ()
    lease = lease_of(session_dir)
    session = None
    if lease is not None and not lease.get("implicit"):
        session = lease["session"]
    return StepPlace(
        session_dir,
        key,
        _next_checkpoint(doc, key, step, sessions.workflow),
        frozenset(listed),
        session,
    )


def _next_checkpoint(
    doc: dict[str, Any], key: str, step: dict[str, Any], configured: str | None
) -> str | None:
    # lazy: the workflow is loaded only when a hook has something to say about a step
    from session_resume.core.workflow import WorkflowError, load_workflow, state_workflow_spec

    try:
        wf = load_workflow(state_workflow_spec(doc.get("workflow"), configured))
    except (WorkflowError, OSError, ValueError):
        return None
    stepdef = next((s for s in wf.steps if s.key == key), None)
    if stepdef is None:
        return None
    ids = stepdef.checkpoint_ids
    sub = step.get("sub_step")
    if sub in ids:
        later = ids[ids.index(sub) + 1 :]
        return later[0] if later else None
    return ids[0] if ids else None


def _listed(rel: str, place: StepPlace) -> bool:
    """Whether the step lists ``rel`` (repository-relative, or a bare name as v2 states have)."""
    return rel in place.artifacts or Path(rel).name in place.artifacts


def record_command(place: StepPlace, sessions: Sessions, artifacts: list[str]) -> str:
    """The write that records ``artifacts`` for the step in progress, as a command line
    (every value a shell word that prints nothing raw)."""
    d = shown_path(place.session_dir, sessions)
    tail = f" --session-dir {d}"
    if place.session:
        tail += f" --session {shell_word(place.session)}"
    arts = "".join(f" --artifact {shell_word(a)}" for a in artifacts)
    step = shell_word(place.step)
    if place.next_checkpoint is None:
        return f"session-resume complete {step}{tail}"
    return f"session-resume checkpoint {step} {shell_word(place.next_checkpoint)}{arts}{tail}"


def unlisted_written(sessions: Sessions, tool_name: str, tool_input: Any) -> str | None:
    """After a file tool wrote files under a session directory that the step in progress does
    not list yet: the text naming the checkpoint write that records them; else None."""
    if not is_write_tool(tool_name, tool_input):
        return None
    by_dir: dict[Path, list[str]] = {}
    for path in tool_paths(tool_input):
        hit = _session_of(path, sessions)
        if hit is not None and os.path.isfile(os.path.join(sessions.root, hit[1])):
            by_dir.setdefault(hit[0], []).append(hit[1])
    for d, rels in by_dir.items():
        place = step_place(d, sessions)
        if place is None:
            continue
        new = [r for r in dict.fromkeys(rels) if not _listed(r, place)]
        if not new:
            continue
        files = ", ".join(prose(r) for r in new)
        step, checkpoint = prose(place.step), prose(place.next_checkpoint)
        if place.next_checkpoint is None:
            return (
                f"session-resume: {files} is not recorded in step {step} yet and every "
                f"checkpoint is; when the step is done record it with "
                f"`{record_command(place, sessions, new)}`."
            )
        return (
            f"session-resume: {files} is not recorded in step {step} yet. When the work "
            f"of checkpoint {checkpoint} is done, record it: "
            f"`{record_command(place, sessions, new)}`."
        )
    return None


# --- work not recorded at a stop ---------------------------------------------------------------


def last_recorded_write(session_dir: Path) -> float | None:
    """When the session's last write moment happened: the later of the state file's
    modification time (every write moment replaces it) and the time of the worklog's last
    event that is not a note or a heartbeat (which record no work)."""
    # lazy: the worklog reader is needed only at a stop
    from session_resume.core.timeutil import parse_ts
    from session_resume.storage.worklog import read_tail

    times = [_mtime(session_dir / STATE)]
    try:
        tail = read_tail(session_dir / WORKLOG, 20)
    except (OSError, ValueError):
        tail = None
    for ev in reversed(tail.events if tail is not None else []):
        if isinstance(ev, dict) and ev.get("event") not in ("note", "heartbeat"):
            ts = parse_ts(ev.get("ts"))
            if ts is not None:
                times.append(ts.timestamp())
            break
    best = max(times)
    return best or None


def changed_since(session_dir: Path, since: float) -> list[str]:
    """Files under ``session_dir`` (not the protocol's own, not through a link) modified after
    ``since``, as paths relative to it; at most :data:`MAX_WALK` files are looked at."""
    out: list[str] = []
    seen = 0
    top = os.fspath(session_dir)
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        rel_dir = os.path.relpath(dirpath, top)
        if rel_dir == ".":
            dirnames[:] = [n for n in dirnames if not n.startswith(_OWN_PREFIXES)]
        dirnames.sort()
        for name in sorted(filenames):
            seen += 1
            if seen > MAX_WALK:
                return out
            rel = name if rel_dir == "." else os.path.join(rel_dir, name)
            if _own_file(Path(rel).parts):
                continue
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if st.st_mtime > since:
                out.append(Path(rel).as_posix())
    return out


def unrecorded_work(sessions: Sessions) -> str | None:
    """At a stop: when a session's step is in progress and files under its directory changed
    after its last recorded write, the reason naming the write to make; else None."""
    budget = ORDER_BUDGET
    for d in sessions.dirs:
        # bounded: a state is read only where the worklog's end says a step is open (or says
        # nothing of it) and a file changed after the last write
        if budget < ORDER_TAIL:
            break
        budget -= ORDER_TAIL
        if step_open(d) is False:
            continue
        since = last_recorded_write(d)
        changed = changed_since(d, since) if since is not None else []
        place = step_place(d, sessions) if changed else None
        if place is None:
            continue
        root = os.path.abspath(sessions.root)
        rels = [Path(os.path.relpath(os.path.join(d, c), root)).as_posix() for c in changed]
        new = [r for r in rels if not _listed(r, place)][:10]
        shown = ", ".join(prose(r) for r in rels[:10])
        shown += f" and {len(rels) - 10} more" if len(rels) > 10 else ""
        cmd = record_command(place, sessions, new)
        done = record_command(
            StepPlace(d, place.step, None, place.artifacts, place.session), sessions, []
        )
        return (
            f"session-resume: work under {shown_path(d, sessions)} is not recorded: {shown} "
            f"changed after the session's last write (step {prose(place.step)} is in progress). "
            f"Before you end the turn, record it: `{cmd}` once the work of that checkpoint is "
            f"done, or `{done}` when the step is finished (`session-resume transition` at a "
            "gate). If the work is not at a checkpoint yet, say so and end the turn: you are "
            "asked once."
        )
    return None


# --- the compaction note -------------------------------------------------------------------


def record_compaction(
    sessions: Sessions, *, now: datetime, trigger: str, host: str, host_session: str
) -> dict[str, Any] | None:
    """Append a ``note`` event (the context was compacted, and how) to the worklog of the
    session in progress, under the session lock (with hook_restore's, the only writes hooks
    make). None when there is no session or the note could not be written (a hook never
    fails the host)."""
    # lazy: only this hook writes
    from session_resume.core.timeutil import format_ts
    from session_resume.storage import store, worklog

    for d in sessions.dirs[:1]:
        if not step_open(d) and not os.path.lexists(d / WORKLOG):
            return None
        lease = lease_of(d)
        detail = {
            "note": "context_compacted",
            "trigger": trigger[:40],
            "host": host,
        }
        if host_session:
            detail["host_session"] = host_session[:200]
        try:
            with store.locked(store.Session(d, sessions.root), timeout=2.0):
                return worklog.append(
                    d,
                    "note",
                    ts=format_ts(now),
                    session=lease["session"] if lease else "",
                    detail=detail,
                )
        except (store.StoreError, OSError, ValueError):
            return None
    return None
