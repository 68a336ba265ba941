"""Reading, writing and removing the lease file ``00-session.active``, and probing its owner pid.

The file's content and what it means are :mod:`session_resume.core.lease`'s (pure).
"""

from __future__ import annotations

import errno
import json
import os
import stat

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.jsonread import parse_json_bytes
from session_resume.core.lease import SENTINEL, hostname, is_session_id
from session_resume.core.timeutil import parse_ts
from session_resume.storage import fileio
from session_resume.storage import held as held_mod
from session_resume.storage.held import HeldDir, StoreError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_MAX_BYTES = 64 * 1024
PID_MAX = 2**31 - 1  # a C int: os.kill() raises OverflowError beyond it
TMP_PREFIX = "." + SENTINEL + "."


# --- I/O -----------------------------------------------------------------------------------


def _not_regular(path: str) -> list[Diagnostic]:
    return [diag("SR510", "the sentinel is not a regular file", file=path)]


def read(
    session_dir: str | os.PathLike[str] | HeldDir,
    root: str | os.PathLike[str] | None = None,
) -> tuple[dict[str, Any] | None, list[Diagnostic]]:
    """The lease as found: None when there is no file; an object, possibly without a usable
    ``heartbeat`` (``{}`` when it is not a JSON object at all), which :func:`lease_state`
    then judges ``unreadable`` (SR510) rather than mistaking it for no lease.
    ``session_dir``: the held directory, or a path (the command's own held directory, else
    held now: walked from ``root``, or, without one, opened as named)."""
    if not isinstance(session_dir, HeldDir):
        try:
            with held_mod.using(session_dir, root if root is not None else session_dir) as h:
                return read(h)
        except StoreError as exc:
            if all(d.code == "SR100" for d in exc.diagnostics):
                return None, []  # no directory: no lease
            path = os.path.join(os.fspath(session_dir), SENTINEL)
            why = "; ".join(d.message for d in exc.diagnostics)
            return {}, [diag("SR510", f"cannot read the sentinel: {why}", file=path)]
    h = session_dir
    path = h.name(SENTINEL)
    if not hasattr(os, "O_NOFOLLOW") and os.path.islink(path):  # Windows: ask first
        return {}, _not_regular(path)
    try:
        # One open that never follows a link (ELOOP) nor blocks on a FIFO, then fstat: no
        # gap between a check of the path and the read for another file to take its place.
        fd = h.open(SENTINEL, fileio.READ_NOFOLLOW)
    except FileNotFoundError:
        return None, []
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return {}, _not_regular(path)
        return {}, [diag("SR510", f"cannot read the sentinel: {exc.strerror}", file=path)]
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return {}, _not_regular(path)
        data = os.read(fd, _MAX_BYTES + 1)
    except OSError as exc:
        return {}, [diag("SR510", f"cannot read the sentinel: {exc.strerror}", file=path)]
    finally:
        os.close(fd)
    if len(data) > _MAX_BYTES:
        return {}, [diag("SR510", "the sentinel is larger than 64 KiB", file=path)]
    value = parse_json_bytes(data, file=path).value
    if value is None:
        return {}, [diag("SR510", "the sentinel is not a JSON object", file=path)]
    pid = value.get("pid")
    if pid is not None and (
        not isinstance(pid, int) or isinstance(pid, bool) or not 0 < pid <= PID_MAX
    ):
        return {}, [
            diag("SR510", f"the sentinel's pid is not a process id (1..{PID_MAX})", file=path)
        ]
    if isinstance(value.get("session"), str) and not is_session_id(value["session"]):
        # text that is no session id (a newline, a `$(...)`) is never judged, shown or quoted
        return {}, [
            diag(
                "SR510",
                "the sentinel's session is not a session id ([A-Za-z0-9._:@-], at most 128)",
                file=path,
            )
        ]
    if not isinstance(value.get("session"), str) or parse_ts(value.get("heartbeat")) is None:
        return value, [
            diag("SR510", "the sentinel is not a valid lease (session, heartbeat)", file=path)
        ]
    return value, []


def write(session_dir: str | os.PathLike[str] | HeldDir, sentinel: dict[str, Any]) -> None:
    """Atomic replace (temp file + rename), never following a link. Not fsynced: a power loss
    ends every process the lease speaks for, and what it leaves (the previous heartbeat, or
    an unreadable sentinel: SR510, a warning) says no more than the truth (docs/spec.md §7);
    a write moment's fsyncs are the state's and the worklog's."""
    data = (json.dumps(sentinel, indent=2) + "\n").encode()
    if not isinstance(session_dir, HeldDir):
        with held_mod.using(session_dir, session_dir) as h:
            return write(h, sentinel)
    path = session_dir.name(SENTINEL)
    try:
        session_dir.replace_file(SENTINEL, data, prefix=TMP_PREFIX, durable=False)
    except OSError as exc:  # disk full, read-only directory: coded, never a raw OSError
        raise StoreError(
            [
                diag(
                    "SR515",
                    f"the lease could not be written: {exc.strerror or exc}",
                    file=str(path),
                )
            ]
        ) from None


def remove(session_dir: str | os.PathLike[str] | HeldDir) -> bool:
    if not isinstance(session_dir, HeldDir):
        with held_mod.using(session_dir, session_dir) as h:
            return remove(h)
    try:
        session_dir.unlink(SENTINEL)
        return True
    except FileNotFoundError:
        return False


def owner_alive(sentinel: dict[str, Any] | None) -> bool | None:
    """Whether the sentinel's owner pid runs here; None when unknowable (no pid, other host)."""
    if not sentinel:
        return None
    pid = sentinel.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or not 0 < pid <= PID_MAX:
        return None
    if sentinel.get("host") != hostname():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except (OSError, OverflowError):
        return None
    return True
