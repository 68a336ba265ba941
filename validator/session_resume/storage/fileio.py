"""The primitives under the held directory (:mod:`session_resume.storage.held`): the bounded
read loop, the advisory lock, the full write, path containment.

Every file is read through :mod:`session_resume.storage.held`: a session's files by plain
name inside the session directory held once per command, a file named by a path
(:func:`~session_resume.storage.held.read_path`) inside its directory held the same way.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

# lazy imports: fcntl exists only on POSIX, msvcrt only on Windows

TMP_SUFFIX = ".tmp"
# Opening a session file that must be the file itself for reading: O_NOFOLLOW, a link in its
# place is never followed (ELOOP); O_NONBLOCK, a FIFO in its place never waits for a writer.
# The caller fstats the descriptor for a regular file.
READ_NOFOLLOW = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def is_within(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def within(path: str, root: str) -> bool:
    """:func:`is_within` of two absolute, normalised path strings (what ``realpath`` and
    ``abspath`` return), without building ``Path`` objects: the write path checks a few per
    save."""
    path, root = os.path.normcase(path), os.path.normcase(root)
    if path == root:
        return True
    return path.startswith(root if root.endswith(os.sep) else root + os.sep)


def read_upto(fd: int, limit: int) -> bytes:
    """At most ``limit`` bytes of ``fd`` from where it stands, in chunks of 1 MiB (one byte
    past a size limit tells a file that grew while it was read)."""
    chunks = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


class LockBusy(Exception):
    """Another process holds the lock past the timeout."""


def try_lock(fd: int) -> bool:
    """Take the exclusive advisory lock of ``fd`` without waiting (``flock``;
    ``msvcrt.locking`` on Windows); False when another holder has it."""
    if os.name == "nt":  # pragma: no cover - exercised on Windows only
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def unlock(fd: int) -> None:
    if os.name == "nt":  # pragma: no cover - exercised on Windows only
        import msvcrt

        with contextlib.suppress(OSError):
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
        return
    import fcntl

    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_UN)


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data``: a short write (a nearly full disk) continues where it stopped."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:
            raise OSError(errno.EIO, "a write made no progress")
        view = view[n:]
