"""One held directory: every file operation on a session goes through one directory descriptor.

:meth:`HeldDir.at` walks from the repository root to the session directory, one component at a
time, each opened relative to the previous descriptor with ``O_NOFOLLOW | O_DIRECTORY``; a
component that is a symbolic link is followed only when its real path is inside the root (and the
directory then opened is checked to be that one, by device and inode). From then on every open,
create, rename, link, unlink, mkdir, stat and fsync is relative to that descriptor (``dir_fd=``,
``src_dir_fd=``/``dst_dir_fd=``) with a plain name: a name that is not a single component (``/``,
``..``, ``.``, NUL, empty) is refused (SR106) before the system is asked. So a link planted on any
parent after the walk cannot redirect a later operation, and no operation can reach a file outside
the directory held.

Files written in place (the worklog, the lock) are refused when hard-linked (SR107: the other name
may be outside the repository). Files replaced (state, ``.bak``, lease, handoff) are written to an
``O_EXCL`` temp file and renamed over the name, which replaces a planted link or hard link rather
than writing through it.

Usage: ``with HeldDir.at(session_dir, root) as h: h.read_limited(STATE)``, then ``h.write_temp``,
``h.replace(tmp, STATE)``, ``h.fsync()``. Errors are :class:`StoreError` with coded diagnostics; a
raw ``OSError`` escapes only from the write primitives (``write_temp``, ``replace``, ...), for the
caller to code as its own failure.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from collections.abc import Iterator
from contextvars import ContextVar

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic, DiagnosticsError
from session_resume.core.limits import DEFAULT_MAX_SIZE
from session_resume.records import field, record, replace
from session_resume.storage.fileio import (
    LockBusy,
    read_upto,
    try_lock,
    unlock,
    within,
    write_all,
)

__all__ = [
    "HeldDir",
    "LockBusy",
    "StoreError",
    "holding",
    "plain_name",
    "read_path",
    "using",
    "within",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass

TMP_SUFFIX = ".tmp"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_DIR_FLAGS = os.O_RDONLY | _DIRECTORY | _CLOEXEC
READ_FLAGS = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC
# Link errors of an O_NOFOLLOW open: ELOOP (Linux, macOS), EMLINK (FreeBSD), ENOTDIR (a link
# opened with O_DIRECTORY on some systems); the caller looks at the entry to tell them apart.
_LINK_ERRNOS = (errno.ELOOP, errno.EMLINK, errno.ENOTDIR)
# Errors of link() that mean "this file system cannot": copy instead.
_NO_LINK = (
    errno.EPERM,
    errno.EXDEV,
    errno.ENOTSUP,
    errno.EMLINK,
    getattr(errno, "EOPNOTSUPP", errno.ENOTSUP),
)
NO_LINK = _NO_LINK


class StoreError(DiagnosticsError):
    """An operation was refused; ``diagnostics`` say why (nothing was written)."""


@record
class ReadResult:
    data: bytes | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)


def plain_name(name: str) -> Diagnostic | None:
    """None when ``name`` is one plain path component; else SR106."""
    if (
        not isinstance(name, str)
        or name in ("", ".", "..")
        or "/" in name
        or "\0" in name
        or (os.altsep is not None and os.altsep in name)
        or (os.sep != "/" and os.sep in name)
    ):
        return diag(
            "SR106",
            f"{name!r} is not a plain file name inside the session directory; refusing it",
            file=str(name),
        )
    return None


def _check(name: str) -> None:
    problem = plain_name(name)
    if problem is not None:
        raise StoreError([problem])


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


class HeldDir:
    """An open directory descriptor and the names inside it. ``path``: for messages only (and
    for resolving a link this directory holds); ``root_real``: the bound a link may lead to
    (None: no link is followed)."""

    def __init__(self, fd: int, path: str, root: _Root | str | None) -> None:
        self.fd = fd
        self.path = path
        self._root = _Root(root) if isinstance(root, str) else root

    @property
    def root_real(self) -> str | None:
        """The root's real path, resolved the first time a link needs it (a walk that meets
        no link never resolves it)."""
        return self._root.real() if self._root is not None else None

    # --- opening ---------------------------------------------------------------------------

    @classmethod
    def at(
        cls,
        path: str | os.PathLike[str],
        root: str | os.PathLike[str] | None = None,
        *,
        create: bool = False,
    ) -> HeldDir:
        """Hold the directory ``path``. Below ``root`` (when ``path`` is lexically there) each
        component is opened from the root's descriptor without following a link (a link is
        followed only to a real path inside the root); with ``create``, a missing component is
        made by ``mkdir`` relative to its parent's descriptor, never at a link's target. A
        directory outside the root (or without one) was named explicitly: its parent is opened
        as named and only its last component is held without following a link. Raises
        :class:`StoreError`: SR105 (a link leading outside, or any link without a root),
        SR100 (missing), SR102 (not a directory), SR104 (another OS error)."""
        name = os.path.abspath(os.fspath(path))
        bound = _Root(os.path.abspath(os.fspath(root))) if root is not None else None
        start, parts = _start_of(name, bound)
        try:
            fd = os.open(start, _DIR_FLAGS)
        except FileNotFoundError:
            if not create or bound is not None:
                raise StoreError([diag("SR100", "no such directory", file=start)]) from None
            os.makedirs(start, exist_ok=True)  # no root: the caller named every parent
            fd = os.open(start, _DIR_FLAGS)
        except OSError as exc:
            raise StoreError(_dir_diag(start, exc)) from None
        h = cls(fd, start, bound)
        try:
            for part in parts:
                nxt = h.sub(part, create=create)
                os.close(h.fd)
                h = nxt
        except BaseException:
            os.close(h.fd)
            raise
        return h

    def sub(self, name: str, *, create: bool = False) -> HeldDir:
        """Hold the directory ``name`` inside this one (made if missing and ``create``)."""
        _check(name)
        display = os.path.join(self.path, name)
        for _ in range(3):  # a concurrent mkdir/rmdir: look again
            try:
                fd = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=self.fd)
                return HeldDir(fd, display, self._root)
            except FileNotFoundError:
                if not create:
                    raise StoreError([diag("SR100", "no such directory", file=display)]) from None
                try:
                    os.mkdir(name, 0o755, dir_fd=self.fd)
                except FileExistsError:
                    continue
                except OSError as exc:
                    raise StoreError(
                        [
                            diag(
                                "SR164",
                                f"cannot create the directory: {exc.strerror}",
                                file=display,
                            )
                        ]
                    ) from None
            except OSError as exc:
                if exc.errno not in _LINK_ERRNOS:
                    raise StoreError(_dir_diag(display, exc)) from None
                return self._follow_dir(name, display)
        raise StoreError([diag("SR104", "the directory keeps changing", file=display)])

    def descend(self, parts: list[str] | tuple[str, ...], *, create: bool = False) -> HeldDir:
        """A new hold of the directory ``parts`` below this one (each component held as by
        :meth:`sub`; none: this directory again). The caller closes it."""
        h = HeldDir(os.dup(self.fd), self.path, self._root)
        try:
            for part in parts:
                nxt = h.sub(part, create=create)
                h.close()
                h = nxt
        except BaseException:
            h.close()
            raise
        return h

    def _follow_dir(self, name: str, display: str) -> HeldDir:
        """``name`` did not open as a directory without following: a link (followed only to
        a directory whose real path is inside the root) or not a directory at all."""
        try:
            lst = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except OSError as exc:
            raise StoreError(_dir_diag(display, exc)) from None
        if not stat.S_ISLNK(lst.st_mode):
            raise StoreError(
                [diag("SR102", "this is not a directory; refusing to use it", file=display)]
            )
        real, problem = self._link_target(name, display)
        if problem is not None:
            raise StoreError([problem])
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=self.fd)  # follows the link just judged
        except OSError as exc:
            raise StoreError(_dir_diag(display, exc)) from None
        try:
            if not _same_file(os.fstat(fd), os.stat(real)):  # swapped after it was judged
                raise StoreError(
                    [diag("SR105", "the link changed while it was opened", file=display)]
                )
        except BaseException:
            os.close(fd)
            raise
        return HeldDir(fd, real, self._root)

    def _link_target(self, name: str, display: str) -> tuple[str, Diagnostic | None]:
        """The real path of the link ``name`` and None, or a diagnostic: SR105 (no root to
        bound it, or it leads outside), SR103 (dangling)."""
        real = os.path.realpath(os.path.join(self.path, name))
        if self.root_real is None or not within(real, self.root_real):
            return real, diag(
                "SR105",
                f"{name} is a symbolic link leading outside the session's root "
                f"(to {real!r}); refusing to use it",
                file=display,
            )
        if not os.path.exists(real):
            return real, diag("SR103", f"{name} is a symbolic link to a missing file", file=display)
        return real, None

    # --- life cycle ------------------------------------------------------------------------

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> HeldDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def name(self, name: str) -> str:
        """The display path of ``name`` (messages only; never opened)."""
        return os.path.join(self.path, name)

    # --- looking ---------------------------------------------------------------------------

    def stat(self, name: str) -> os.stat_result | None:
        """``lstat`` of ``name`` (a link is not followed); None when there is nothing."""
        _check(name)
        try:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def exists(self, name: str) -> bool:
        """Something (even a link) has this name."""
        try:
            return self.stat(name) is not None
        except OSError:
            return True

    def is_regular(self, name: str) -> bool:
        """A regular file that is not a link."""
        try:
            st = self.stat(name)
        except OSError:
            return False
        return st is not None and stat.S_ISREG(st.st_mode)

    def listdir(self) -> list[str]:
        return os.listdir(self.fd)

    # --- reading ---------------------------------------------------------------------------

    def open(self, name: str, flags: int, mode: int = 0o644) -> int:
        """``os.open`` of the plain ``name`` relative to this directory, never following a
        link (``O_NOFOLLOW``) and never inherited (``O_CLOEXEC``)."""
        _check(name)
        return os.open(name, flags | _NOFOLLOW | _CLOEXEC, mode, dir_fd=self.fd)

    def read_limited(self, name: str, *, max_size: int = DEFAULT_MAX_SIZE) -> ReadResult:
        """Read ``name`` whole, or explain with a code why not; never raises ``OSError``.
        A link is followed only to a file whose real path is inside the root (SR105, SR103);
        a FIFO never blocks (SR102); over ``max_size`` is SR112."""
        out = ReadResult()
        display = self.name(name)
        problem = plain_name(name)
        if problem is not None:
            out.diagnostics.append(problem)
            return out
        try:
            fd = os.open(name, READ_FLAGS, dir_fd=self.fd)
        except FileNotFoundError:
            out.diagnostics.append(diag("SR100", "no such file", file=display))
            return out
        except OSError as exc:
            linked = self._reopen_link(name, display, exc, out)
            if linked is None:
                return out
            fd = linked
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                out.diagnostics.append(
                    diag("SR101", "this is a directory, not a state file", file=display)
                )
                return out
            if not stat.S_ISREG(st.st_mode):
                out.diagnostics.append(
                    diag("SR102", "not a regular file (FIFO, socket or device)", file=display)
                )
                return out
            if st.st_size > max_size:
                out.diagnostics.append(
                    diag(
                        "SR112",
                        f"the file is {st.st_size} bytes; the limit is {max_size}",
                        file=display,
                    )
                )
                return out
            data = read_upto(fd, max_size + 1)
        except OSError as exc:
            out.diagnostics.append(diag("SR104", f"cannot read: {exc.strerror}", file=display))
            return out
        finally:
            os.close(fd)
        if len(data) > max_size:  # grew while we read it
            out.diagnostics.append(
                diag("SR112", f"the file is over the limit of {max_size} bytes", file=display)
            )
            return out
        out.data = data
        return out

    def _reopen_link(self, name: str, display: str, exc: OSError, out: ReadResult) -> int | None:
        """After an O_NOFOLLOW open failed: a link inside the root is opened (and checked to
        be the file judged); anything else is a diagnostic in ``out`` and None."""
        try:
            lst = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except OSError:
            lst = None
        if lst is None or not stat.S_ISLNK(lst.st_mode):
            if exc.errno == errno.EISDIR or (lst is not None and stat.S_ISDIR(lst.st_mode)):
                out.diagnostics.append(
                    diag("SR101", "this is a directory, not a state file", file=display)
                )
            else:
                out.diagnostics.append(diag("SR104", f"cannot open: {exc.strerror}", file=display))
            return None
        real, problem = self._link_target(name, display)
        if problem is not None:
            out.diagnostics.append(problem)
            return None
        try:
            fd = os.open(name, READ_FLAGS & ~_NOFOLLOW, dir_fd=self.fd)
        except OSError as exc2:
            out.diagnostics.append(diag("SR104", f"cannot open: {exc2.strerror}", file=display))
            return None
        try:
            same = _same_file(os.fstat(fd), os.stat(real))
        except OSError:
            same = False
        if not same:
            os.close(fd)
            out.diagnostics.append(
                diag("SR105", "the link changed while it was opened", file=display)
            )
            return None
        return fd

    # --- writing ---------------------------------------------------------------------------

    def write_temp(self, data: bytes, prefix: str, *, durable: bool = True) -> str:
        """A new temp file ``<prefix><random>.tmp`` (O_EXCL: never an existing file or link)
        holding ``data``, fsynced unless not ``durable``; returns its name."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
        while True:
            tmp = f"{prefix}{os.urandom(6).hex()}{TMP_SUFFIX}"
            try:
                fd = self.open(tmp, flags, 0o644)
                break
            except FileExistsError:
                continue
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            self.discard(tmp)
            raise
        os.close(fd)
        return tmp

    def replace(self, src: str, dst: str, *, into: HeldDir | None = None) -> None:
        """Rename ``src`` over ``dst`` (in ``into``, default this directory): atomic, and a
        link at ``dst`` is replaced, never followed. Retried briefly on Windows."""
        _check(src)
        _check(dst)
        target = into if into is not None else self
        for attempt in range(20 if os.name == "nt" else 1):
            try:
                os.replace(src, dst, src_dir_fd=self.fd, dst_dir_fd=target.fd)
                return
            except PermissionError:
                if os.name != "nt" or attempt == 19:
                    raise
                time.sleep(0.01 * (attempt + 1))

    def replace_file(
        self, name: str, data: bytes, *, prefix: str | None = None, durable: bool = True
    ) -> None:
        """Atomically replace ``name`` with ``data``: temp file, fsync, rename, directory
        fsync (the two fsyncs skipped when not ``durable``)."""
        tmp = self.write_temp(data, prefix if prefix is not None else f".{name}.", durable=durable)
        try:
            self.replace(tmp, name)
        except BaseException:
            self.discard(tmp)
            raise
        if durable:
            self.fsync()

    def keep_as(self, src: str, dst: str, *, prefix: str) -> None:
        """Atomically make ``dst`` a copy of ``src`` (a hard link when possible), replacing
        ``dst``; ``prefix`` names the staging file."""
        with contextlib.suppress(OSError):
            a, b = self.stat(src), self.stat(dst)
            if a is not None and b is not None and _same_file(a, b):
                # A kill between rotation and replace leaves .bak and the state as one inode;
                # rename() between two links of one file is a no-op that would strand staging.
                return
        staging = f"{prefix}{os.urandom(6).hex()}{TMP_SUFFIX}"
        _check(src)
        try:
            os.link(src, staging, src_dir_fd=self.fd, dst_dir_fd=self.fd, follow_symlinks=False)
        except OSError as exc:
            if exc.errno not in _NO_LINK:
                raise
            res = self.read_limited(src, max_size=1 << 62)
            if res.data is None:
                raise OSError(errno.EIO, "; ".join(d.message for d in res.diagnostics)) from None
            staging = self.write_temp(res.data, prefix)
        try:
            self.replace(staging, dst)
        except BaseException:
            self.discard(staging)
            raise
        if self.exists(staging):  # the same no-op rename, should dst change under us
            self.discard(staging)

    def unlink(self, name: str) -> None:
        _check(name)
        os.unlink(name, dir_fd=self.fd)

    def discard(self, name: str) -> None:
        """Unlink ``name`` if it is there; never raises ``OSError``."""
        with contextlib.suppress(OSError):
            self.unlink(name)

    def mkdir(self, name: str, mode: int = 0o755) -> None:
        _check(name)
        os.mkdir(name, mode, dir_fd=self.fd)

    def rmdir(self, name: str) -> None:
        _check(name)
        os.rmdir(name, dir_fd=self.fd)

    def rmtree(self, name: str) -> None:
        """Remove the directory ``name`` and everything below it, never following a link
        (``shutil.rmtree`` on descriptors); refuses where that guarantee is missing."""
        _check(name)
        # lazy: only pruning an archive removes a tree
        import shutil

        if not shutil.rmtree.avoids_symlink_attacks:  # pragma: no cover - no such platform here
            raise OSError(errno.ENOTSUP, "no link-safe directory removal on this platform")
        shutil.rmtree(name, dir_fd=self.fd)

    def fsync(self) -> None:
        """Make the entries of this directory durable (a no-op on Windows)."""
        if os.name != "nt":
            os.fsync(self.fd)

    # --- in place --------------------------------------------------------------------------

    def single_link(self, fd: int, name: str) -> os.stat_result:
        """The ``fstat`` of ``fd``, a file to be written in place: refuse (SR102) anything
        but a regular file, and (SR107) a file with another name (a hard link: the other
        name may be outside the repository)."""
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise StoreError(
                [
                    diag(
                        "SR102",
                        f"{name} is not a regular file; refusing to use it",
                        file=self.name(name),
                    )
                ]
            )
        if st.st_nlink > 1:
            raise StoreError(
                [
                    diag(
                        "SR107",
                        f"{name} has {st.st_nlink} names (a hard link); it is written in "
                        "place, so the other name's file would change too: refusing it",
                        file=self.name(name),
                    )
                ]
            )
        return st

    @contextlib.contextmanager
    def lock(self, name: str, timeout: float) -> Iterator[None]:
        """An exclusive advisory lock on ``name`` (``flock``; ``msvcrt.locking`` on Windows),
        held until the block ends: opened without ``O_TRUNC``, never written. Raises
        ``OSError`` when it cannot be opened as a lock file (a link, even inside the root:
        ELOOP), :class:`StoreError` (SR102, SR107) when it is not a regular file with one
        name, :class:`LockBusy` on timeout."""
        fd = self.open(name, os.O_RDWR | os.O_CREAT | _NONBLOCK)
        try:
            self.single_link(fd, name)
        except BaseException:
            os.close(fd)
            raise
        try:
            deadline = time.monotonic() + timeout
            delay = 0.001
            while not try_lock(fd):
                if time.monotonic() >= deadline:
                    raise LockBusy(self.name(name))
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
            try:
                yield
            finally:
                unlock(fd)
        finally:
            os.close(fd)


class _Root:
    """The root a held directory is bound by: its absolute path, and its real path resolved
    once, when first needed."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._real: str | None = None

    def real(self) -> str:
        if self._real is None:
            self._real = os.path.realpath(self.path)
        return self._real


def _start_of(name: str, bound: _Root | None) -> tuple[str, list[str]]:
    """Where the walk starts (opened as named) and the components held from there."""
    if bound is not None:
        # named below the root as given, or through its real path (resolved only then)
        base = bound.path if within(name, bound.path) else bound.real()
        if within(name, base):
            rest = name[len(base) :].strip(os.sep)
            return base, rest.split(os.sep) if rest else []
    parent, last = os.path.split(name)
    return (parent, [last]) if last else (name, [])


def _dir_diag(display: str, exc: OSError) -> list[Diagnostic]:
    if exc.errno == errno.ENOTDIR:
        return [diag("SR102", "this is not a directory; refusing to use it", file=display)]
    return [diag("SR104", f"cannot open the directory: {exc.strerror or exc}", file=display)]


# --- the directory held by the command -------------------------------------------------------

# The directories held by the enclosing :func:`holding` blocks, innermost last (a command holds
# one session at a time): a writer called inside one with the same directory uses that
# descriptor instead of walking again. A context variable: each thread and each async task
# sees only its own.
_CURRENT: ContextVar[tuple[tuple[str, HeldDir], ...]] = ContextVar("held_dirs", default=())


@contextlib.contextmanager
def holding(h: HeldDir, path: str | os.PathLike[str]) -> Iterator[HeldDir]:
    """Make ``h`` (held for ``path``) the one :func:`using` returns inside this block."""
    token = _CURRENT.set((*_CURRENT.get(), (os.path.abspath(os.fspath(path)), h)))
    try:
        yield h
    finally:
        _CURRENT.reset(token)


@contextlib.contextmanager
def using(
    path: str | os.PathLike[str],
    root: str | os.PathLike[str] | None = None,
    *,
    create: bool = False,
) -> Iterator[HeldDir]:
    """The directory ``path`` held: the command's own when one is held for it (by
    :func:`holding`), else a new one (closed at the end of the block)."""
    key = os.path.abspath(os.fspath(path))
    for held_path, h in reversed(_CURRENT.get()):
        if held_path == key and h.fd >= 0:
            yield h
            return
    with HeldDir.at(path, root, create=create) as h:
        yield h


# --- a file named by a path -------------------------------------------------------------------


def read_path(
    path: str | os.PathLike[str],
    *,
    max_size: int = DEFAULT_MAX_SIZE,
    root: str | os.PathLike[str] | None = None,
) -> ReadResult:
    """Read the file ``path`` (a state file named on a command line, an import's source, a
    configuration file) as :meth:`HeldDir.read_limited` reads a name: its directory held
    (walked from ``root`` without following a link out of it; a link to the file followed
    only inside ``root``). Without a root the operator named the file: a link to it is
    resolved once, as named (SR103 when it dangles), and the file read inside its real
    directory. Never raises ``OSError``; diagnostics name ``path`` as given."""
    name = os.fspath(path)
    out = ReadResult()
    if root is None:
        real = os.path.realpath(name)
        if os.path.islink(name) and not os.path.lexists(real):
            out.diagnostics.append(
                diag("SR103", f"symbolic link to missing {os.readlink(name)!r}", file=name)
            )
            return out
        parent, base = os.path.split(real)
        bound: str | os.PathLike[str] = parent
    else:
        parent, base = os.path.split(os.path.abspath(name))
        bound = root
    try:
        with HeldDir.at(parent, bound) as h:
            res = h.read_limited(base, max_size=max_size)
            shown = h.name(base)
    except StoreError as exc:
        for d in exc.diagnostics:
            missing = d.code == "SR100"
            out.diagnostics.append(diag("SR100", "no such file", file=name) if missing else d)
        return out
    out.data = res.data
    out.diagnostics = [d if d.file != shown else replace(d, file=name) for d in res.diagnostics]
    return out
