"""Archive a session's files into ``.archive/<UTC stamp>_<session>/`` and prune old archives.

Only the protocol's own files move (state, .bak, handoff, worklog, lease, kept corrupt files,
leftover temp files); artifacts stay. Nothing is ever deleted except archives beyond the
retention count.
"""

from __future__ import annotations

import os
import re
import shutil
from datetime import datetime
from pathlib import Path

from session_resume.core.codes import diag
from session_resume.core.lease import SENTINEL as SENTINEL_FILE
from session_resume.records import dataclass, field
from session_resume.storage import fileio, store, worklog
from session_resume.storage import lease_file as sentinel_mod

ARCHIVE_DIR = ".archive"
HANDOFF = "00-handoff.md"
_SESSION_FILES = (store.STATE, store.BAK, HANDOFF, worklog.WORKLOG, SENTINEL_FILE)
_NAME = re.compile(r"^[0-9]{8}T[0-9]{6}Z_[A-Za-z0-9._-]+\Z")


@dataclass
class ArchiveResult:
    archived_to: str | None = None
    moved: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)


def _label(session_dir: Path) -> str:
    sent, _ = sentinel_mod.read(session_dir)
    if sent and isinstance(sent.get("session"), str):
        label = sent["session"]
    else:
        tail = worklog.read_tail(session_dir / worklog.WORKLOG, 1)
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


def session_files(session_dir: Path, *, include_lease: bool = True) -> list[str]:
    names = []
    for n in sorted(os.listdir(session_dir)):
        if n == SENTINEL_FILE and not include_lease:
            continue
        if (
            n in _SESSION_FILES
            or n.startswith(store.STATE + ".corrupt-")
            or (n.startswith(store.TMP_PREFIX) and n.endswith(store.TMP_SUFFIX))
        ):
            names.append(n)
    return names


def archive_session(
    session_dir: str | os.PathLike[str],
    *,
    now: datetime,
    keep: int = 5,
    prune_only: bool = False,
    label: str | None = None,
    include_lease: bool = True,
    root: str | os.PathLike[str] | None = None,
) -> ArchiveResult:
    """Move the session's protocol files into a new archive folder (under the session lock),
    then keep only the newest ``keep`` archives. ``include_lease=False`` leaves the lease in
    place (``init --fresh`` continues the same session); ``label`` names the folder (default:
    the session id)."""
    d = Path(session_dir)
    out = ArchiveResult()
    s = store.Session(d, Path(root) if root is not None else None)
    s.check_paths()
    with store.locked(s):
        names = [] if prune_only else session_files(d, include_lease=include_lease)
        if names:
            base = d / ARCHIVE_DIR
            if os.path.islink(base) or (os.path.lexists(base) and not base.is_dir()):
                raise store.StoreError(
                    [
                        diag(
                            "SR105",
                            ".archive is not a plain directory; refusing to archive into it",
                            file=str(base),
                        )
                    ]
                )
            base.mkdir(exist_ok=True)
            name = re.sub(r"[^A-Za-z0-9._-]", "-", label)[:64] if label else _label(d)
            stamp = now.strftime("%Y%m%dT%H%M%SZ")
            target = base / f"{stamp}_{name or 'session'}"
            n = 1
            while os.path.lexists(target):
                n += 1
                target = base / f"{stamp}_{name or 'session'}-{n}"
            target.mkdir()
            for entry in names:
                os.replace(d / entry, target / entry)  # same file system: a rename, atomic
                out.moved.append(entry)
            fileio.fsync_dir(target)
            fileio.fsync_dir(d)
            out.archived_to = str(target)
        out.pruned = prune(d, keep)
    return out


def prune(session_dir: Path, keep: int) -> list[str]:
    base = session_dir / ARCHIVE_DIR
    if keep < 0 or not base.is_dir() or os.path.islink(base):
        return []
    archives = sorted(
        p.name for p in base.iterdir() if p.is_dir() and not p.is_symlink() and _NAME.match(p.name)
    )
    doomed = archives[: max(0, len(archives) - keep)]
    for name in doomed:
        shutil.rmtree(base / name)
    return doomed
