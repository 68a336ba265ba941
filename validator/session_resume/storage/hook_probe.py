"""What the host hooks look at on disk (docs/spec.md §13): the repository a path is in, whether
a directory holds protocol files, a link's target, a bounded glob, and the bounded tail of a
worklog that orders the sessions. Reads only; every look is bounded (entries, levels, bytes)
and none follows a link to a directory or waits on a FIFO.
"""

from __future__ import annotations

import fnmatch
import os
import stat

from session_resume.storage.held import HeldDir, StoreError

# lazy imports: only a command with a pattern in it expands one (the host waits)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

CONFIG_FILE = ".session-resume.yaml"
MAX_LEVELS = 128  # parents looked at for a repository
MAX_ENTRIES = 20_000  # entries looked at under one directory a command removes
MAX_DEPTH = 8  # levels looked at under it
MAX_GLOB = 1000  # paths a pattern expands to
MAX_PYPROJECT = 1024 * 1024


def lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (OSError, ValueError):
        return None


def is_dir(path: str) -> bool:
    """A directory (a link to one counts: a command writes into its target)."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def real(path: str) -> str | None:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return None


def repo_of(path: str) -> str | None:
    """The repository holding the absolute ``path``, found lexically (its own directory
    first, then each parent, before any link is followed): the first directory with a
    ``.git`` or a ``.session-resume.yaml``; None outside any."""
    d = os.path.dirname(path) if not is_dir(path) else path
    for _ in range(MAX_LEVELS):
        try:
            if os.path.lexists(os.path.join(d, ".git")) or os.path.lexists(
                os.path.join(d, CONFIG_FILE)
            ):
                return d
        except (OSError, ValueError):
            return None
        up = os.path.dirname(d)
        if up == d:
            return None
        d = up
    return None


def holds(top: str, names: frozenset[str]) -> bool:
    """Whether the directory ``top`` (or any directory below it, not through a link, within
    :data:`MAX_DEPTH` levels and :data:`MAX_ENTRIES` entries) holds a file named in
    ``names``."""
    seen = 0
    todo = [(top, 0)]
    while todo:
        d, depth = todo.pop()
        try:
            with os.scandir(d) as it:
                for entry in it:
                    seen += 1
                    if seen > MAX_ENTRIES:
                        return False
                    if entry.name in names:
                        return True
                    if depth < MAX_DEPTH and entry.is_dir(follow_symlinks=False):
                        todo.append((entry.path, depth + 1))
        except (OSError, ValueError):
            continue
    return False


def expand(pattern: str) -> list[str]:
    """The existing paths a shell pattern names (at most :data:`MAX_GLOB`)."""
    # lazy: only a command with a pattern in it expands one
    import glob
    import itertools

    try:
        return list(itertools.islice(glob.iglob(pattern), MAX_GLOB))
    except (OSError, ValueError, RecursionError):
        return []


def matches_any(pattern: str, names: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(n, pattern) for n in names)


def configures(pyproject: str) -> bool:
    """Whether the ``pyproject.toml`` at this path holds the ``[tool.session-resume]``
    table (a plain text search of its first MiB, never through a link)."""
    try:
        fd = os.open(pyproject, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except (OSError, ValueError):
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        data = os.read(fd, MAX_PYPROJECT)
    except OSError:
        return False
    finally:
        os.close(fd)
    return b"session-resume" in data


def tail(session_dir: str, name: str, size: int) -> bytes:
    """At most the last ``size`` bytes of the session file ``name`` (read by plain name in
    the session directory held: never through a link, never from a FIFO); empty when it
    cannot be read."""
    try:
        with HeldDir.at(session_dir, session_dir) as h:
            fd = h.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (StoreError, OSError):
        return b""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return b""
        start = max(0, st.st_size - size)
        return os.pread(fd, size, start)
    except OSError:
        return b""
    finally:
        os.close(fd)
