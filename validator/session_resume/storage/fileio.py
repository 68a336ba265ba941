"""The one file-I/O module every writer and reader uses.

Reading: never block on a FIFO, never follow a link out of the root, never read more than the
size limit (:func:`read_limited`). Writing: an exclusive temp file in the target's directory
(O_EXCL, O_NOFOLLOW), written with a short-write loop and fsynced (:func:`write_temp`),
``os.replace`` with the Windows retry (:func:`retry`), and the directory fsync
(:func:`fsync_dir`); :func:`replace_file` is that whole sequence, :func:`keep_as` the
link-or-copy that rotates a ``.bak``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.limits import DEFAULT_MAX_SIZE
from session_resume.records import dataclass, field

TYPE_CHECKING = False  # typing is imported for the type checker only (cold start)
if TYPE_CHECKING:
    from typing import Any, TypeVar

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
if TYPE_CHECKING:
    _T = TypeVar("_T")


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
        chunks = []
        remaining = max_size + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
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


# --- writing ---------------------------------------------------------------------------------


def retry(fn: Callable[..., _T], *args: Any) -> _T:
    """Windows refuses to replace a file another process has open; retry briefly."""
    for attempt in range(20 if os.name == "nt" else 1):
        try:
            return fn(*args)
        except PermissionError:
            if os.name != "nt" or attempt == 19:
                raise
            time.sleep(0.01 * (attempt + 1))
    raise AssertionError("unreachable")


def fsync_dir(d: Path) -> None:
    """Make a rename or a new entry in ``d`` durable (a no-op on Windows)."""
    if os.name == "nt":
        return
    fd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data``: a short write (a nearly full disk) continues where it stopped."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:
            raise OSError(errno.EIO, "a write made no progress")
        view = view[n:]


def write_temp(
    directory: str | os.PathLike[str], data: bytes, prefix: str, *, durable: bool = True
) -> str:
    """A new temp file ``<prefix><random>.tmp`` in ``directory`` (O_EXCL: never an existing
    file or link) holding ``data``, fsynced unless not ``durable``."""
    flags = (
        os.O_WRONLY
        | os.O_CREAT
        | os.O_EXCL
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_CLOEXEC", 0)
    )
    base = os.fspath(directory)  # strings, not Path objects: made on every write
    while True:
        tmp = os.path.join(base, f"{prefix}{os.urandom(6).hex()}{TMP_SUFFIX}")
        try:
            fd = os.open(tmp, flags, 0o644)
            break
        except FileExistsError:
            continue
    try:
        write_all(fd, data)
        if durable:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    return tmp


def replace_file(
    path: Path, data: bytes, *, prefix: str | None = None, durable: bool = True
) -> None:
    """Atomically replace ``path`` with ``data``: temp file, fsync, ``os.replace``, directory
    fsync. A reader sees the old file or the new one, never a part. Not ``durable``: the same
    without the two fsyncs, for a file whose content a power loss makes moot (the lease: it
    describes running processes, and a power loss ends them all; docs/spec.md §7)."""
    tmp = write_temp(
        path.parent, data, prefix if prefix is not None else f".{path.name}.", durable=durable
    )
    try:
        retry(os.replace, tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(path.parent)


def keep_as(src: Path, dst: Path, *, prefix: str) -> None:
    """Atomically make ``dst`` a copy of ``src`` (a hard link when possible), replacing dst.
    ``prefix`` names the staging file (a temp file of ``src``'s directory)."""
    with contextlib.suppress(OSError):
        a, b = os.lstat(src), os.lstat(dst)  # lstat: a .bak that is a link is not "the same"
        if (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino):
            # A kill between rotation and replace leaves .bak and the state as one inode;
            # rename() between two links of one file is a no-op that would strand staging.
            return
    parent = os.path.dirname(os.fspath(src))
    staging = os.path.join(parent, f"{prefix}{os.urandom(6).hex()}{TMP_SUFFIX}")
    try:
        os.link(src, staging, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in (
            errno.EPERM,
            errno.EXDEV,
            errno.ENOTSUP,
            errno.EMLINK,
            getattr(errno, "EOPNOTSUPP", errno.ENOTSUP),
        ):
            raise
        staging = write_temp(parent, src.read_bytes(), prefix)
    try:
        retry(os.replace, staging, dst)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staging)
        raise
    if os.path.lexists(staging):  # the same no-op rename, should dst change under us
        with contextlib.suppress(OSError):
            os.unlink(staging)


# --- the path policy and the lock ------------------------------------------------------------


def check_target(path: Path, root: Path | None, *, write: bool) -> Diagnostic | None:
    """The one path policy, applied before a session file is opened: a link is followed only
    when it stays inside ``root`` (never when there is no root to bound it, for writing), and
    a file to write must be a regular file or absent. None when the path may be used; else
    SR105 (a link out of the root), SR103 (a dangling link) or SR102 (not a regular file)."""
    name = os.fspath(path)
    try:
        lst = os.lstat(name)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return diag("SR104", f"cannot stat: {exc.strerror}", file=name)
    if stat.S_ISLNK(lst.st_mode):
        target = Path(os.path.realpath(name))
        if root is None or not is_within(target, Path(os.path.realpath(root))):
            return diag(
                "SR105",
                f"{path.name} is a symbolic link leading outside the session's root "
                f"(to {str(target)!r}); refusing to use it",
                file=name,
            )
        if not os.path.lexists(target) or not target.exists():
            return diag("SR103", f"{path.name} is a symbolic link to a missing file", file=name)
        try:
            lst = os.stat(name)
        except OSError as exc:
            return diag("SR104", f"cannot stat: {exc.strerror}", file=name)
    if write and not stat.S_ISREG(lst.st_mode):
        kind = "a directory" if stat.S_ISDIR(lst.st_mode) else "not a regular file"
        return diag("SR102", f"{path.name} is {kind}; refusing to write it", file=name)
    return None


class LockBusy(Exception):
    """Another process holds the lock past the timeout."""


def _try_lock(fd: int) -> bool:
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


def _unlock(fd: int) -> None:
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


@contextlib.contextmanager
def lock_file(path: Path, timeout: float) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` (``flock``; ``msvcrt.locking`` on Windows),
    held until the block ends. The file is opened without ``O_TRUNC`` and without following
    a link (``O_NOFOLLOW``), never chmod-ed, never written: a planted link or hard link
    cannot make the lock change another file. Raises OSError when ``path`` cannot be a lock
    file (a link, a directory, a FIFO: ELOOP/EISDIR/...), :class:`LockBusy` on timeout."""
    flags = (
        os.O_RDWR
        | os.O_CREAT
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_NONBLOCK", 0)
        | getattr(os, "O_CLOEXEC", 0)
    )
    fd = os.open(path, flags, 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        deadline = time.monotonic() + timeout
        delay = 0.001
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                raise LockBusy(os.fspath(path))
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        try:
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)
