"""Whether the artifacts a state lists exist, and their modification times (storage layer).

Artifact paths are repository-relative; a bare file name is looked up in the session
directory too (the upstream convention). A path may not resolve out of the root: an artifact
that is a link out of it, or under a directory that is one, counts as missing.

Every lookup is an ``fstatat`` relative to a held directory (:mod:`.held`): the root is opened
once, each directory on an artifact's path is held once (walked without following a link out
of the root) and kept for the next artifact in it, so the cost is one system call per
artifact plus one open per directory, linear in the number of artifacts (issue 25, finding
21: it was two ``realpath`` and a ``stat`` per artifact, each ``realpath`` one ``lstat`` per
component, the root's own included).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from session_resume.storage.held import HeldDir, StoreError, within

# Open directory descriptors kept between lookups; past this many, all are closed and the
# walk starts again (a state listing artifacts in thousands of directories stays under any
# descriptor limit; each lookup still costs at most one open per component).
MAX_OPEN_DIRS = 256


class ArtifactLookup:
    """Look up artifact paths under ``root`` (and bare names in ``session_dir``). A context
    manager: the descriptors it holds are closed at the end."""

    def __init__(self, root: str | os.PathLike[str], session_dir: str | os.PathLike[str]):
        self.root = os.path.abspath(os.fspath(root))
        self.session_dir = os.path.abspath(os.fspath(session_dir))
        self._dirs: dict[tuple[str, ...], HeldDir | None] = {}
        self._top: HeldDir | None = None
        self._session: HeldDir | None = None
        self._opened = False

    def __enter__(self) -> ArtifactLookup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for h in self._dirs.values():
            if h is not None:
                h.close()
        self._dirs.clear()
        for h in (self._top, self._session):
            if h is not None:
                h.close()
        self._top = self._session = None

    def _open(self) -> None:
        if self._opened:
            return
        self._opened = True
        try:
            self._top = HeldDir.at(self.root, self.root)
        except StoreError:
            return
        if within(self.session_dir, self.root) or within(
            os.path.realpath(self.session_dir), self._top.root_real or self.root
        ):
            try:
                self._session = HeldDir.at(self.session_dir, self.root)
            except StoreError:
                self._session = None

    def _dir(self, parts: tuple[str, ...]) -> HeldDir | None:
        """The directory ``parts`` below the root, held (None: missing, not a directory, or
        a link out of the root)."""
        if not parts:
            return self._top
        if parts in self._dirs:
            return self._dirs[parts]
        if len(self._dirs) >= MAX_OPEN_DIRS:
            for h in self._dirs.values():
                if h is not None:
                    h.close()
            self._dirs.clear()
        parent = self._dir(parts[:-1])
        h = None
        if parent is not None:
            try:
                h = parent.sub(parts[-1])
            except (StoreError, OSError):
                h = None
        self._dirs[parts] = h
        return h

    def mtime(self, rel: str) -> float | None:
        """The modification time of the artifact ``rel`` (None: it is not there). ``rel`` must
        have passed :func:`session_resume.core.rules.path_problem` (relative, no ``..``)."""
        self._open()
        if self._top is None:
            return None
        parts = tuple(p for p in rel.split("/") if p not in ("", "."))
        if not parts or any(p == ".." or "\0" in p for p in parts):
            return None
        found = _mtime_in(self._dir(parts[:-1]), parts[-1])
        if found is None and len(parts) == 1 and "/" not in rel and self._session is not None:
            found = _mtime_in(self._session, parts[0])
        return found

    def exists(self, rel: str) -> bool:
        return self.mtime(rel) is not None


def _mtime_in(h: HeldDir | None, name: str) -> float | None:
    if h is None:
        return None
    try:
        st = h.stat(name)
    except (OSError, StoreError, ValueError):  # over NAME_MAX, a NUL: simply not there
        return None
    if st is None:
        return None
    if not stat.S_ISLNK(st.st_mode):
        return st.st_mtime
    real = os.path.realpath(os.path.join(h.path, name))  # a link: only inside the root
    if h.root_real is None or not within(real, h.root_real):
        return None
    try:
        return os.stat(real).st_mtime
    except OSError:
        return None


def artifact_mtimes(
    root: str | os.PathLike[str] | Path, session_dir: str | os.PathLike[str] | Path, rels: list[str]
) -> dict[str, float | None]:
    """:meth:`ArtifactLookup.mtime` of each of ``rels``."""
    with ArtifactLookup(root, session_dir) as look:
        return {rel: look.mtime(rel) for rel in rels}
