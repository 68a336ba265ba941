"""Reading a file safely: never block on a FIFO, never follow a link out of the root, never
read more than the size limit. Storage layer: the only I/O the validator does on state files."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic

DEFAULT_MAX_SIZE = 8 * 1024 * 1024


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
        st = os.stat(name)
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
