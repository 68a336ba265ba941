"""Archive a session's files into ``.archive/<UTC stamp>_<session>/`` and prune old archives.

Only the protocol's own files move (state, .bak, handoff, worklog, lease, kept corrupt files,
leftover temp files); artifacts stay. Nothing is ever deleted except archives beyond the
retention count, and never the archive the same command has just made, a folder whose name
this module does not make, or one stamped later than the command's own time.

Every operation is relative to the session directory held once
(:class:`~session_resume.storage.held.HeldDir`): the walk from the root refuses a parent that
is a link out of it, ``.archive`` and each archive folder are held without following a link,
the moves are renames between two held descriptors, and pruning removes a folder through
descriptors (never following a link inside it). The moves are all or nothing: a move that
fails puts the files already moved back, so a refused command leaves the session as it was.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from session_resume.core.codes import diag
from session_resume.core.lease import SENTINEL as SENTINEL_FILE
from session_resume.records import field, record
from session_resume.storage import lease_file as sentinel_mod
from session_resume.storage import store, worklog
from session_resume.storage.held import HeldDir, StoreError

ARCHIVE_DIR = ".archive"
HANDOFF = "00-handoff.md"
_SESSION_FILES = (store.STATE, store.BAK, HANDOFF, worklog.WORKLOG, SENTINEL_FILE)
_NAME = re.compile(r"^([0-9]{8}T[0-9]{6}Z)_[A-Za-z0-9._-]+\Z")
_STAMP = "%Y%m%dT%H%M%SZ"


@record
class ArchiveResult:
    archived_to: str | None = None
    moved: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    folder: str | None = None  # the folder made in .archive (its name)
    made_archive_dir: bool = False  # .archive itself was made by this command


def _label(h: HeldDir, session_dir: Path) -> str:
    sent, _ = sentinel_mod.read(h)
    if sent and isinstance(sent.get("session"), str):
        label = sent["session"]
    else:
        tail = worklog.read_tail(session_dir / worklog.WORKLOG, 1, held=h)
        label = next(
            (
                e["session"]
                for e in reversed(tail.events)
                if isinstance(e.get("session"), str) and e["session"]
            ),
            "",
        )
    label = label or session_dir.resolve().name
    return re.sub(r"[^A-Za-z0-9._-]", "-", label)[:64] or "session"


def _is_session_file(n: str, include_lease: bool) -> bool:
    if n == SENTINEL_FILE and not include_lease:
        return False
    return (
        n in _SESSION_FILES
        or n.startswith(store.STATE + ".corrupt-")
        or store.PRE_MIGRATION.match(n) is not None
        or (n.startswith(store.TMP_PREFIX) and n.endswith(store.TMP_SUFFIX))
    )


def session_files(session_dir: Path | HeldDir, *, include_lease: bool = True) -> list[str]:
    names = session_dir.listdir() if isinstance(session_dir, HeldDir) else os.listdir(session_dir)
    return [n for n in sorted(names) if _is_session_file(n, include_lease)]


def archive_session(
    session_dir: str | os.PathLike[str],
    *,
    now: datetime,
    keep: int = 5,
    prune_only: bool = False,
    label: str | None = None,
    include_lease: bool = True,
    root: str | os.PathLike[str] | None = None,
    extra: Sequence[str] = (),
    prune: bool = True,
) -> ArchiveResult:
    """Move the session's protocol files into a new archive folder (under the session lock),
    then keep only the newest ``keep`` archives (the new one counts, and is never pruned).
    ``include_lease=False`` leaves the lease in place (``init --fresh`` continues the same
    session); ``label`` names the folder (default: the session id). ``extra``: other files
    (paths relative to the session directory, ``/``-separated) moved along when present, at
    the same place below the folder. Every move is checked first (each source reachable
    without a link out of the root); then all move, or none (a failure moves back what was
    moved). ``prune=False`` leaves pruning to the caller (:func:`prune`), once the command
    cannot be undone any more (:func:`put_back`)."""
    d = Path(session_dir)
    out = ArchiveResult()
    s = store.Session(d, Path(root) if root is not None else None)
    with store.locked(s) as h:
        names = [] if prune_only else session_files(h, include_lease=include_lease)
        names += [rel for rel in extra if rel not in names and _present(h, rel)]
        made = None
        if names:
            out.made_archive_dir = h.stat(ARCHIVE_DIR) is None
            with _hold_archive_dir(h, create=True) as base:
                name = re.sub(r"[^A-Za-z0-9._-]", "-", label)[:64] if label else _label(h, d)
                made = _make_folder(base, f"{now.strftime(_STAMP)}_{name or 'session'}")
                with base.sub(made) as target:
                    _move_all(h, target, names, base, made, out.made_archive_dir)
                    target.fsync()
                base.fsync()
                h.fsync()
            out.moved = names
            out.folder = made
            out.archived_to = str(d / ARCHIVE_DIR / made)
        if prune:
            out.pruned = _prune_held(h, keep, now=now, made=made)
    return out


def prune(
    session_dir: str | os.PathLike[str],
    *,
    keep: int,
    now: datetime,
    made: str | None,
    root: str | os.PathLike[str] | None = None,
) -> list[str]:
    """Prune the archives beyond ``keep`` (never ``made``), under the session lock."""
    s = store.Session(Path(session_dir), Path(root) if root is not None else None)
    with store.locked(s) as h:
        return _prune_held(h, keep, now=now, made=made)


def put_back(h: HeldDir, res: ArchiveResult) -> list[str]:
    """Undo :func:`archive_session` in the held session directory (the caller holds the
    lock, and has removed whatever now takes the moved names): every file moved back, the
    folder removed, and ``.archive`` when the command made it. Returns the names that could
    not be moved back (they stay in the folder, which then stays too)."""
    if res.folder is None:
        return []
    with _hold_archive_dir(h, create=False) as base, base.sub(res.folder) as target:
        failed = _return(h, target, res.moved)
    if not failed:
        _remove_folder(h, res.folder, res.made_archive_dir)
    h.fsync()
    return failed


@contextlib.contextmanager
def _hold_archive_dir(h: HeldDir, *, create: bool):  # type: ignore[no-untyped-def]
    st = h.stat(ARCHIVE_DIR)
    if st is not None and not stat.S_ISDIR(st.st_mode):
        raise StoreError(
            [
                diag(
                    "SR105" if stat.S_ISLNK(st.st_mode) else "SR102",
                    ".archive is not a plain directory; refusing to archive into it",
                    file=h.name(ARCHIVE_DIR),
                )
            ]
        )
    with h.sub(ARCHIVE_DIR, create=create) as base:
        yield base


def _make_folder(base: HeldDir, stem: str) -> str:
    name, n = stem, 1
    while True:
        try:
            base.mkdir(name)
            return name
        except FileExistsError:
            n += 1
            name = f"{stem}-{n}"


def _present(h: HeldDir, rel: str) -> bool:
    """The file ``rel`` is there; a directory on its way that is a link out of the root (or
    no directory) is a refusal, before anything is moved."""
    *dirs, name = rel.split("/")
    try:
        with h.descend(dirs) as parent:
            return parent.stat(name) is not None
    except StoreError as exc:
        if all(x.code == "SR100" for x in exc.diagnostics):
            return False
        raise


def _move(src: HeldDir, dst: HeldDir, rel: str, *, create: bool) -> None:
    """Rename ``rel`` (a plain name, or a ``/``-separated path) from ``src`` to the same
    place in ``dst`` (its directories made there when ``create``)."""
    *dirs, name = rel.split("/")
    if not dirs:
        src.replace(name, name, into=dst)  # same file system: a rename, atomic
        return
    with src.descend(dirs) as a, dst.descend(dirs, create=create) as b:
        a.replace(name, name, into=b)


def _return(h: HeldDir, target: HeldDir, moved: list[str]) -> list[str]:
    """Move ``moved`` back from ``target``, newest first; the names that could not be."""
    failed = []
    for entry in reversed(moved):
        try:
            _move(target, h, entry, create=False)
        except (OSError, StoreError):
            failed.append(entry)
    return failed


def _remove_folder(h: HeldDir, made: str, made_archive_dir: bool) -> None:
    """Remove the (emptied) folder ``made``, and ``.archive`` when the command made it."""
    with contextlib.suppress(OSError, StoreError), _hold_archive_dir(h, create=False) as base:
        base.rmtree(made)  # empty directories only: every file was moved back
        base.fsync()
    if made_archive_dir:
        with contextlib.suppress(OSError, StoreError):
            h.rmdir(ARCHIVE_DIR)


def _move_all(
    h: HeldDir, target: HeldDir, names: list[str], base: HeldDir, made: str, made_dir: bool
) -> None:
    """Rename every name into ``target``, or none: on a failure the files already moved go
    back, the folder is removed (and ``.archive`` when the command made it), and the refusal
    says nothing was archived."""
    moved: list[str] = []
    entry = names[0]
    try:
        for entry in names:
            _move(h, target, entry, create=True)
            moved.append(entry)
    except (OSError, StoreError) as exc:
        back_failed = _return(h, target, moved)
        if not back_failed:
            _remove_folder(h, made, made_dir)
        where = (
            "the session is as it was"
            if not back_failed
            else f"{', '.join(back_failed)} could not be moved back from .archive/{made}"
        )
        why = (
            f"{exc.strerror or exc}"
            if isinstance(exc, OSError)
            else "; ".join(f"{x.code} {x.message}" for x in exc.diagnostics)
        )
        raise StoreError(
            [
                diag(
                    "SR164",
                    f"{getattr(exc, 'filename', None) or entry} could not be archived: {why}; "
                    f"nothing was archived ({where})",
                    file=h.name(entry),
                )
            ]
        ) from None


def _prune_held(h: HeldDir, keep: int, *, now: datetime | None, made: str | None) -> list[str]:
    """Delete the oldest archives beyond ``keep``: only folders named as this module names
    them (a stamp, ``_``, a label), stamped no later than ``now``, plain directories (not
    links), and never ``made`` (the folder this command has just made, which counts as one
    of the ``keep``)."""
    if keep < 0:
        return []
    st = h.stat(ARCHIVE_DIR)
    if st is None or not stat.S_ISDIR(st.st_mode):
        return []
    latest = now.strftime(_STAMP) if now is not None else None
    with h.sub(ARCHIVE_DIR) as base:
        candidates = []
        for n in base.listdir():
            m = _NAME.match(n)
            if m is None or n == made or (latest is not None and m.group(1) > latest):
                continue
            try:
                lst = base.stat(n)
            except OSError:
                continue
            if lst is not None and stat.S_ISDIR(lst.st_mode):
                candidates.append(n)
        candidates.sort()
        room = keep - (1 if made is not None else 0)
        doomed = candidates[: max(0, len(candidates) - max(room, 0))]
        for name in doomed:
            base.rmtree(name)
        if doomed:
            base.fsync()
    return doomed
