"""Reading a file named by a path: a state file named on the command line, an import's
source. Never block on a FIFO, never follow a link out of the root, never read more than the
size limit (:func:`read_limited`).

A session's own files are read and written through the session directory held once per
command (:mod:`session_resume.storage.held`), never through this module's paths.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.limits import DEFAULT_MAX_SIZE
from session_resume.records import dataclass, field

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


@dataclass
class ReadResult:
    data: bytes | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)


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


def read_limited(
    path: str | os.PathLike[str],
    *,
    max_size: int = DEFAULT_MAX_SIZE,
    root: str | os.PathLike[str] | None = None,
) -> ReadResult:
    """Read ``path`` whole, or explain with a code why not. Never raises ``OSError``."""
    name = os.fspath(path)
    out = ReadResult()
    try:
        lst = os.lstat(name)
    except FileNotFoundError:
        out.diagnostics.append(diag("SR100", "no such file", file=name))
        return out
    except OSError as exc:
        out.diagnostics.append(diag("SR104", f"cannot stat: {exc.strerror}", file=name))
        return out
    if stat.S_ISLNK(lst.st_mode):
        target = Path(os.path.realpath(name))
        if not target.exists():
            out.diagnostics.append(
                diag("SR103", f"symbolic link to missing {os.readlink(name)!r}", file=name)
            )
            return out
        if root is not None and not is_within(target, Path(os.path.realpath(root))):
            out.diagnostics.append(
                diag(
                    "SR105",
                    f"symbolic link leads outside {os.fspath(root)!r} (to {str(target)!r})",
                    file=name,
                )
            )
            return out
    try:
        st = os.stat(name) if stat.S_ISLNK(lst.st_mode) else lst  # not a link: lstat is stat
    except OSError as exc:
        out.diagnostics.append(diag("SR104", f"cannot stat: {exc.strerror}", file=name))
        return out
    if stat.S_ISDIR(st.st_mode):
        out.diagnostics.append(diag("SR101", "this is a directory, not a state file", file=name))
        return out
    if not stat.S_ISREG(st.st_mode):
        out.diagnostics.append(
            diag("SR102", "not a regular file (FIFO, socket or device)", file=name)
        )
        return out
    if st.st_size > max_size:
        out.diagnostics.append(
            diag("SR112", f"the file is {st.st_size} bytes; the limit is {max_size}", file=name)
        )
        return out
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        out.diagnostics.append(diag("SR104", f"cannot open: {exc.strerror}", file=name))
        return out
    try:
        fst = os.fstat(fd)
        if not stat.S_ISREG(fst.st_mode):  # swapped between stat and open
            out.diagnostics.append(diag("SR102", "not a regular file", file=name))
            return out
        data = read_upto(fd, max_size + 1)
    except OSError as exc:
        out.diagnostics.append(diag("SR104", f"cannot read: {exc.strerror}", file=name))
        return out
    finally:
        os.close(fd)
    if len(data) > max_size:  # grew while we read it
        out.diagnostics.append(
            diag("SR112", f"the file is over the limit of {max_size} bytes", file=name)
        )
        return out
    out.data = data
    return out


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
        # lazy: msvcrt exists only on Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True
    # lazy: fcntl exists only on POSIX
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def unlock(fd: int) -> None:
    if os.name == "nt":  # pragma: no cover - exercised on Windows only
        # lazy: msvcrt exists only on Windows
        import msvcrt

        with contextlib.suppress(OSError):
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
        return
    # lazy: fcntl exists only on POSIX
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
