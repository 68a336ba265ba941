"""Read everything the resume decision needs from a session directory (storage layer)."""

from __future__ import annotations

import contextlib
import os
from datetime import UTC, datetime
from pathlib import Path

from session_resume.core.resume_decision import Snapshot
from session_resume.core.rules import path_problem
from session_resume.storage import held as held_mod
from session_resume.storage import lease_file as sentinel_mod
from session_resume.storage import store, worklog
from session_resume.storage.artifacts import ArtifactLookup
from session_resume.storage.held import HeldDir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TAIL_EVENTS = 200  # enough to find the session's end; read from the end of the file


def temp_files(session_dir: Path | HeldDir) -> tuple[str, ...]:
    try:
        names = (
            session_dir.listdir() if isinstance(session_dir, HeldDir) else os.listdir(session_dir)
        )
    except OSError:
        return ()
    return tuple(
        sorted(n for n in names if n.startswith(store.TMP_PREFIX) and n.endswith(store.TMP_SUFFIX))
    )


def take(
    session_dir: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    last_events: int = 10,
) -> Snapshot:
    """Everything the resume decision needs, read relative to the session directory held
    once (walked from ``root``): the state, ``.bak``, lease, worklog tail and temp files."""
    d = Path(session_dir)
    try:
        h: HeldDir | None = HeldDir.at(d, root)
    except store.StoreError:
        h = None  # missing or refused: each reader below says so in its own terms
    try:
        with held_mod.holding(h, d) if h is not None else contextlib.nullcontext():
            return _take(d, root, last_events, h)
    finally:
        if h is not None:
            h.close()


def _take(
    d: Path, root: str | os.PathLike[str] | None, last_events: int, h: HeldDir | None
) -> Snapshot:
    loaded = store.load(d, root=root)
    sent, _ = sentinel_mod.read(h if h is not None else d)
    tail = worklog.read_tail(d / worklog.WORKLOG, TAIL_EVENTS, held=h)
    ended = False
    if sent is not None:
        sid = sent.get("session")
        ended = worklog.ended_in(tail.events, sid)
    artifacts: dict[str, float | None] = {}
    doc = loaded.document if loaded.status == "ok" else None
    backup = _backup_document(d, root) if doc is None and loaded.backup_usable else None
    base = Path(root) if root is not None else Path.cwd()
    listed = doc if doc is not None else backup
    if listed is not None:
        with ArtifactLookup(base, d) as look:  # one fstatat per artifact (storage.artifacts)
            for st in listed.get("steps", {}).values():
                if isinstance(st, dict):  # every step's: the briefing says which exist
                    for p in st.get("artifacts") or []:
                        # Untrusted paths: an absolute or ../ path must not make resume reveal
                        # whether a file outside the repository exists (it counts as missing).
                        safe = isinstance(p, str) and path_problem(p) is None
                        artifacts[p] = look.mtime(p) if safe else None
    return Snapshot(
        state_status=loaded.status,
        document=doc,
        state_codes=tuple(dict.fromkeys(x.code for x in loaded.diagnostics)),
        backup_usable=loaded.backup_usable,
        sentinel=sent,
        session_ended=ended,
        owner_alive=sentinel_mod.owner_alive(sent),
        last_events=tuple(tail.events[-last_events:]),
        artifacts=artifacts,
        temp_files=temp_files(h if h is not None else d),
        session_rel=_relative(base, d),
        backup_document=backup,
        repair=_repair(loaded, d),
    )


def _backup_document(d: Path, root: str | os.PathLike[str] | None) -> dict[str, Any] | None:
    """The valid ``.bak`` beside a corrupt or missing state (for the crash report)."""
    s = store.session_of(d, root)
    try:
        with held_mod.using(s.dir, s.root) as h:
            res = h.read_limited(store.BAK)
    except store.StoreError:
        return None
    if res.data is None:
        return None
    loaded = store.classify(res.data, file=str(s.bak))
    return loaded.document if loaded.status == "ok" else None


def session_files(session_dir: str | os.PathLike[str], names: tuple[str, ...]) -> dict[str, bool]:
    """Whether each of ``names`` (plain paths relative to the session directory, e.g. a
    workflow's startup inputs) is a file there; an unsafe name counts as absent."""
    d = Path(session_dir)
    real_dir = os.path.realpath(d)
    out: dict[str, bool] = {}
    for name in names:
        if path_problem(name) is not None:
            out[name] = False
            continue
        real = os.path.realpath(d / name)
        out[name] = os.path.commonpath([real, real_dir]) == real_dir and os.path.isfile(real)
    return out


def _relative(root: Path, session_dir: Path) -> str | None:
    """The session directory relative to the repository root (None: outside it)."""
    try:
        rel = os.path.relpath(os.path.abspath(session_dir), os.path.abspath(root))
    except ValueError:  # another drive (Windows)
        return None
    return None if rel.startswith("..") else Path(rel).as_posix()


def _repair(loaded: store.Loaded, d: Path) -> str | None:
    """``migrate`` when it turns this invalid 3.0 state into a valid one (docs/spec.md §9.5)."""

    if loaded.status != "invalid" or not isinstance(loaded.document, dict):
        return None
    # the plan of a valid state (a session-start hook's) never compiles the chain's modules
    # lazy: the migration chain only for an invalid state
    from session_resume.core.migration import repair_command

    return repair_command(loaded.document, now=datetime.now(UTC), project_hint=d.resolve().name)
