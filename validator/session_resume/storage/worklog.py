"""The append-only worklog ``00-worklog.jsonl`` (DESIGN §7): one JSON object per line.

Appends happen under the session lock, one ``write()`` per line, so ``seq`` is monotonic.
Readers tolerate a torn last line (a crash mid-append) and report garbage elsewhere with its
line number. The tail is read from the end of the file, never by scanning it whole.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic

WORKLOG = "00-worklog.jsonl"
EVENT_VERSION = 1
EVENTS = (
    "session_start",
    "session_end",
    "step_start",
    "checkpoint",
    "step_complete",
    "step_skip",
    "decision",
    "finding_add",
    "finding_resolve",
    "migrated",
    "recovered",
    "recreated",
    "heartbeat",
    "note",
    "takeover",
    "archived",
    "imported",
)
_TAIL_CHUNK = 64 * 1024
_RECORD_START = b'{"v":'  # every record this module writes starts so


@dataclass
class Tail:
    """The last events of a worklog, newest last."""

    events: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    last_seq: int = 0


def as_int(value: Any) -> int | None:
    """An integer in the JSON sense: 2 and 2.0 are both the integer 2 (JSON Schema agrees)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _parse_line(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def read_tail(path: str | os.PathLike[str], n: int = 10) -> Tail:
    """The last ``n`` parseable events, reading backwards from the end in chunks."""
    out = Tail()
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return out
    except OSError as exc:
        out.diagnostics.append(diag("SR501", f"cannot read the worklog: {exc.strerror}", file=name))
        return out
    try:
        return _tail_from(fd, name, n, out)
    except OSError as exc:
        out.diagnostics.append(diag("SR501", f"cannot read the worklog: {exc.strerror}", file=name))
        return out
    finally:
        os.close(fd)


def _tail_from(fd: int, name: str, n: int, out: Tail) -> Tail:
    size = os.fstat(fd).st_size
    buf = b""
    pos = size
    lines: list[bytes] = []
    # Read backwards until we hold n complete lines after the first (possibly partial) one.
    while pos > 0 and len(lines) <= n:
        step = min(_TAIL_CHUNK, pos)
        pos -= step
        buf = os.pread(fd, step, pos) + buf
        lines = buf.split(b"\n")
    torn = not buf.endswith(b"\n") and size > 0
    if buf.endswith(b"\n"):
        lines = lines[:-1]
    if pos > 0:
        lines = lines[1:]  # the first piece may start mid-line
    # line numbers only when we read the whole file (a tail read does not know them)
    first_line_no = 1 if pos == 0 else None
    parsed: list[dict[str, Any]] = []
    for i, raw in enumerate(lines):
        last = i == len(lines) - 1
        if not raw.strip():
            continue
        ev = _parse_line(raw)
        if ev is None:
            if (last and torn) or raw.startswith(_RECORD_START):
                out.diagnostics.append(
                    diag(
                        "SR502",
                        "the last worklog line is incomplete (a crash mid-append); it is ignored",
                        file=name,
                        line=(first_line_no + i) if first_line_no else None,
                    )
                )
            else:
                out.diagnostics.append(
                    diag(
                        "SR503",
                        "a worklog line is not a JSON object",
                        file=name,
                        line=(first_line_no + i) if first_line_no else None,
                    )
                )
            continue
        parsed.append(ev)
    out.events = parsed[-n:] if n else []
    seqs: list[int] = [v for v in (as_int(e.get("seq")) for e in parsed) if v is not None]
    out.last_seq = max(seqs, default=0)
    return out


def scan(path: str | os.PathLike[str]) -> list[Diagnostic]:
    """Check every line (for `validate`): garbage with its line number, seq order."""
    name = os.fspath(path)
    out: list[Diagnostic] = []
    try:
        # O_NONBLOCK: opening a FIFO for reading must not wait for a writer
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        fh = os.fdopen(fd, "rb")
    except FileNotFoundError:
        return out
    except OSError as exc:
        return [diag("SR501", f"cannot read the worklog: {exc.strerror}", file=name)]
    with fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return [diag("SR501", "the worklog is not a regular file", file=name)]
        last_seq = 0
        line_no = 0
        for raw in fh:
            line_no += 1
            if not raw.strip():
                continue
            ev = _parse_line(raw)
            if ev is None:
                if raw.startswith(_RECORD_START) and raw.endswith(b"\n"):
                    # An append cut short by a crash and terminated by the next append
                    # (which writes a newline first): a torn record, not foreign garbage.
                    out.append(
                        diag(
                            "SR502",
                            "an incomplete worklog line (an append cut short "
                            "by a crash); it is ignored",
                            file=name,
                            line=line_no,
                        )
                    )
                elif raw.endswith(b"\n"):
                    out.append(
                        diag(
                            "SR503", "a worklog line is not a JSON object", file=name, line=line_no
                        )
                    )
                else:
                    out.append(
                        diag(
                            "SR502",
                            "the last worklog line is incomplete (a crash "
                            "mid-append); it is ignored",
                            file=name,
                            line=line_no,
                        )
                    )
                continue
            seq = as_int(ev.get("seq"))
            if seq is not None:
                if seq <= last_seq:
                    out.append(
                        diag(
                            "SR504",
                            f"seq {seq} does not increase (previous {last_seq})",
                            file=name,
                            line=line_no,
                        )
                    )
                last_seq = max(last_seq, seq)
    return out


def append(
    session_dir: str | os.PathLike[str],
    event: str,
    *,
    ts: str,
    session: str = "",
    step: str | None = None,
    sub_step: str | None = None,
    detail: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Append one event. The caller holds the session lock."""
    if event not in EVENTS:
        raise ValueError(f"unknown worklog event {event!r}")
    path = Path(session_dir) / WORKLOG
    tail = read_tail(path, 1)
    if tail.diagnostics and any(d.code == "SR501" for d in tail.diagnostics):
        # Without the last seq the new record would restart at 1 (a duplicate): refuse.
        raise OSError(f"cannot read the worklog's tail: {tail.diagnostics[0].message}")
    record: dict[str, Any] = {
        "v": EVENT_VERSION,
        "ts": ts,
        "seq": tail.last_seq + 1,
        "session": session,
        "event": event,
    }
    if step is not None:
        record["step"] = step
    if sub_step is not None:
        record["sub_step"] = sub_step
    if detail:
        record["detail"] = detail
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line  # terminate a torn last line; its bytes are kept
        view = memoryview(line)
        while view:  # one write per record; a short write (a nearly full disk) continues
            written = os.write(fd, view)
            if written <= 0:
                raise OSError("the worklog write made no progress")
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)
    return record
