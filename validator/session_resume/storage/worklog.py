"""The append-only worklog ``00-worklog.jsonl`` (docs/spec.md §6): one JSON object per line.

Appends happen under the session lock, one ``write()`` per line, so ``seq`` is monotonic.
Readers tolerate a torn last line (a crash mid-append) and report garbage elsewhere with its
line number. The tail is read from the end of the file, never by scanning it whole.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Iterator, Sequence

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.limits import DEFAULT_MAX_SIZE
from session_resume.records import field, record
from session_resume.storage import fileio
from session_resume.storage import held as held_mod
from session_resume.storage.held import HeldDir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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
    "gate_approved",
    "finding_add",
    "finding_resolve",
    "review_audit",
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
_SEQ_CHUNK = 4 * 1024  # the first read of an append's backward walk: a few records
MAX_LINE = DEFAULT_MAX_SIZE  # a record longer than this is never parsed (nor held in memory)
_RECORD_START = b'{"v":'  # every record this module writes starts so
# One compact encoder for every record (json.dumps with options builds one per call).
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
# A worklog that is a link is never followed (the appender refuses it too), so no file
# outside reaches the output; a FIFO in its place never blocks the reader.
_READ_FLAGS = fileio.READ_NOFOLLOW


@record
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


def read_tail(path: str | os.PathLike[str], n: int = 10, *, held: HeldDir | None = None) -> Tail:
    """The last ``n`` parseable events, reading backwards from the end in chunks. ``held``:
    the session directory held (the worklog is opened by name inside it; ``path`` names it
    in messages)."""
    out = Tail()
    name = os.fspath(path)
    try:
        fd = _open_read(name, held)
    except FileNotFoundError:
        return out
    except OSError as exc:
        out.diagnostics.append(diag("SR501", f"cannot read the worklog: {exc.strerror}", file=name))
        return out
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            out.diagnostics.append(diag("SR501", "the worklog is not a regular file", file=name))
            return out
        return _tail_from(fd, name, n, out)
    except OSError as exc:
        out.diagnostics.append(diag("SR501", f"cannot read the worklog: {exc.strerror}", file=name))
        return out
    finally:
        os.close(fd)


def _open_read(name: str, held: HeldDir | None) -> int:
    """The worklog opened for reading, never through a link nor blocking on a FIFO: by plain
    name inside ``held``, else inside its directory ``name`` names, held now (the command's
    own when it holds that directory). Raises ``OSError`` (``FileNotFoundError`` when there
    is no worklog or no directory)."""
    if held is not None:
        return held.open(WORKLOG, _READ_FLAGS)
    parent, base = os.path.split(name)
    parent = parent or os.curdir
    try:
        with held_mod.using(parent, parent) as h:
            return h.open(base, _READ_FLAGS)
    except held_mod.StoreError as exc:
        why = "; ".join(d.message for d in exc.diagnostics)
        if all(d.code == "SR100" for d in exc.diagnostics):
            raise FileNotFoundError(errno.ENOENT, why, name) from None
        raise OSError(errno.EIO, why, name) from None


def _last_lines(fd: int, size: int, want: int) -> tuple[list[bytes | None], bool]:
    """The last ``want`` lines (oldest first; the piece after a final newline included),
    reading backwards in chunks: each byte is read once, so the cost is linear in what is
    read, and a line longer than :data:`MAX_LINE` is never held (None stands for it).
    The flag says whether the first line returned is the file's first line."""
    lines: list[bytes | None] = []  # newest first
    cur: list[bytes] = []  # the line being assembled, its chunks newest first
    cur_len = 0
    pos = size
    while pos > 0 and len(lines) < want:
        step = min(_TAIL_CHUNK, pos)
        pos -= step
        parts = os.pread(fd, step, pos).split(b"\n")
        for k in range(len(parts) - 1, -1, -1):
            piece = parts[k]
            cur_len += len(piece)
            if cur_len <= MAX_LINE:
                cur.append(piece)
            else:
                cur = []  # over the limit: never held, never parsed
            if k == 0:
                break  # the line continues in the previous chunk
            lines.append(b"".join(reversed(cur)) if cur_len <= MAX_LINE else None)
            cur, cur_len = [], 0
            if len(lines) >= want:
                break
    whole = pos == 0 and len(lines) < want
    if whole:
        lines.append(b"".join(reversed(cur)) if cur_len <= MAX_LINE else None)
    lines.reverse()
    return lines, whole


def _tail_from(fd: int, name: str, n: int, out: Tail) -> Tail:
    size = os.fstat(fd).st_size
    ends_with_newline = size > 0 and os.pread(fd, 1, size - 1) == b"\n"
    # n complete lines, the (possibly torn) last one and the empty piece after a final newline
    lines, whole = _last_lines(fd, size, n + 2)
    if ends_with_newline:
        lines = lines[:-1]
    torn = size > 0 and not ends_with_newline
    # line numbers only when we read the whole file (a tail read does not know them)
    first_line_no = 1 if whole else None
    parsed: list[dict[str, Any]] = []
    for i, raw in enumerate(lines):
        last = i == len(lines) - 1
        line = (first_line_no + i) if first_line_no else None
        if raw is None:
            out.diagnostics.append(
                diag(
                    "SR503", f"a worklog line is longer than {MAX_LINE} bytes", file=name, line=line
                )
            )
            continue
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
                        line=line,
                    )
                )
            else:
                out.diagnostics.append(
                    diag("SR503", "a worklog line is not a JSON object", file=name, line=line)
                )
            continue
        parsed.append(ev)
    out.events = parsed[-n:] if n else []
    seqs: list[int] = [v for v in (as_int(e.get("seq")) for e in parsed) if v is not None]
    out.last_seq = max(seqs, default=0)
    return out


def session_ended(path: str | os.PathLike[str], session: Any, n: int) -> bool:
    """Whether the last ``n`` events (those :func:`read_tail` returns) end ``session``
    (:func:`ended_in`): the same answer, without parsing a line that cannot hold a
    ``session_end``. Its name is in a line either as the bytes ``session_end`` or through a
    JSON escape (a backslash); the tail is parsed only when one of its lines has either."""
    try:
        fd = _open_read(os.fspath(path), None)
    except OSError:
        return False  # absent or unreadable: read_tail has no events either
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return False
        if not _tail_has(fd, st.st_size, n + 2, (b"session_end", b"\\")):
            return False
    except OSError:
        return False
    finally:
        os.close(fd)
    return ended_in(read_tail(path, n).events, session)


def ended_in(events: Sequence[dict[str, Any]], session: Any) -> bool:
    """Whether ``events`` (a worklog tail) hold a ``session_end`` of ``session`` after its
    latest ``session_start``: one taking the same id again after its end makes it live again
    (docs/spec.md §7)."""
    for e in reversed(events):
        if e.get("session") == session and e.get("event") in ("session_end", "session_start"):
            return bool(e.get("event") == "session_end")
    return False


def _tail_has(fd: int, size: int, want: int, needles: tuple[bytes, ...]) -> bool:
    """Whether the last ``want`` lines (the pieces :func:`_last_lines` returns) hold any of
    ``needles``: the bytes after the ``want``-th newline from the end, searched chunk by chunk
    from the end (C searches: no line is assembled; a needle cut by a chunk boundary is
    found in the overlap kept from the chunk after it)."""
    overlap = max(len(n) for n in needles) - 1
    pos, newlines, after = size, 0, b""
    while pos > 0:
        step = min(_TAIL_CHUNK, pos)
        pos -= step
        chunk = os.pread(fd, step, pos)
        window = chunk + after
        found = any(n in window for n in needles)
        if not found and pos == 0:
            return False  # the whole file, tail and all: not there
        count = chunk.count(b"\n")  # lines counted only when it matters (a slow C loop)
        if newlines + count >= want:  # the tail starts in this chunk
            if not found:
                return False  # the tail is a part of this window: not there either
            cut = len(chunk)  # found, maybe before the tail's start: cut there, line by line
            for _ in range(want - newlines):
                cut = chunk.rfind(b"\n", 0, cut)
            return any(n in window[cut + 1 :] for n in needles)
        if found:
            return True  # the whole window is in the tail
        newlines += count
        after = window[:overlap]  # the start of what follows, for a needle cut by the boundary
    return False


def scan(path: str | os.PathLike[str], *, held: HeldDir | None = None) -> list[Diagnostic]:
    """Check every line (for `validate`): garbage with its line number, seq order. ``held``:
    the session directory held (the worklog is opened by name inside it; ``path`` names it in
    messages)."""
    name = os.fspath(path)
    out: list[Diagnostic] = []
    try:
        # O_NONBLOCK: opening a FIFO for reading must not wait for a writer
        fd = _open_read(name, held)
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
        while raw := fh.readline(MAX_LINE + 1):
            line_no += 1
            if len(raw) > MAX_LINE:  # never held whole: skip to the end of the line
                while (more := fh.readline(1 << 20)) and not more.endswith(b"\n"):
                    pass
                out.append(
                    diag(
                        "SR503",
                        f"a worklog line is longer than {MAX_LINE} bytes",
                        file=name,
                        line=line_no,
                    )
                )
                continue
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


# O_RDWR: the next seq is read from the descriptor that appends (one open per append);
# O_NOFOLLOW: never through a link; O_NONBLOCK: a FIFO in the worklog's place never blocks.
_APPEND_FLAGS = (
    os.O_RDWR
    | os.O_APPEND
    | os.O_CREAT
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def newest_seq(fd: int, size: int) -> int:
    """The ``seq`` of the newest record that has one (0: none), the number an append
    continues (docs/spec.md §6).

    Appends happen under the session lock, each record one more than the one before, so the
    newest record holds the largest ``seq``: only it needs reading, walking back over a torn
    last line, blank lines and garbage. The walk reads backwards from the end, 4 KiB first
    and doubling up to 64 KiB a read, so an append costs what its last record costs, not
    what the file or a fixed window holds (issue 19: the append re-parsed a 64 KiB tail;
    issue 18: a record longer than that window restarted seq at 1). Nothing is cached
    between appends: another process may have appended, or crashed mid-line, since; the
    file's end is the one source of truth, read under the lock. A file that already
    decreases (SR504, not written so) continues from its newest record."""
    for raw in _lines_backwards(fd, size):
        if raw is None or not raw.strip():
            continue
        ev = _parse_line(raw)
        seq = as_int(ev.get("seq")) if ev is not None else None
        if seq is not None:
            return seq
    return 0


def _lines_backwards(fd: int, size: int) -> Iterator[bytes | None]:
    """The file's lines, newest first (the piece after the last newline first: ``b""`` when
    the file ends with one). A line longer than :data:`MAX_LINE` is never held (None)."""
    cur: list[bytes] = []  # the line being assembled, its chunks newest first
    cur_len = 0
    pos = size
    chunk = _SEQ_CHUNK
    while pos > 0:
        step = min(chunk, pos)
        pos -= step
        parts = os.pread(fd, step, pos).split(b"\n")
        for k in range(len(parts) - 1, -1, -1):
            cur_len += len(parts[k])
            if cur_len <= MAX_LINE:
                cur.append(parts[k])
            else:
                cur = []  # over the limit: never held, never parsed
            if k == 0 and pos > 0:
                break  # the line continues in the previous chunk
            yield b"".join(reversed(cur)) if cur_len <= MAX_LINE else None
            cur, cur_len = [], 0
        chunk = min(chunk * 2, _TAIL_CHUNK)


@record(frozen=True)
class NewEvent:
    """An event to append; ``seq`` (and ``v``) are the worklog's to assign."""

    event: str
    ts: str
    session: str = ""
    step: str | None = None
    sub_step: str | None = None
    detail: dict[str, Any] | None = None


def append(
    session_dir: str | os.PathLike[str] | HeldDir,
    event: str,
    *,
    ts: str,
    session: str = "",
    step: str | None = None,
    sub_step: str | None = None,
    detail: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Append one event. The caller holds the session lock."""
    return append_many(session_dir, [NewEvent(event, ts, session, step, sub_step, detail)])[0]


def append_many(
    session_dir: str | os.PathLike[str] | HeldDir, events: Sequence[NewEvent]
) -> list[dict[str, Any]]:
    """Append ``events`` in order (the next ``seq`` numbers), one ``write()`` per record and
    one fsync for all. A torn last line is terminated first (its bytes are kept). Refuses
    (OSError) a worklog that is a link or not a regular file, or whose end cannot be read:
    the new records would restart ``seq`` at 1, or that has another name (a hard link: the
    other file would grow too). The caller holds the session lock; ``session_dir`` is the
    held directory (or a path, held now: the command's own when it holds one)."""
    for ev in events:
        if ev.event not in EVENTS:
            raise ValueError(f"unknown worklog event {ev.event!r}")
    if not events:
        return []
    if not isinstance(session_dir, HeldDir):
        with held_mod.using(session_dir, session_dir) as h:  # as named, unless held
            return append_many(h, events)
    h = session_dir
    path = h.name(WORKLOG)
    fd = h.open(WORKLOG, _APPEND_FLAGS, 0o644)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # a FIFO or device: never written
            raise OSError(errno.EINVAL, "the worklog is not a regular file", path)
        if st.st_nlink > 1:  # written in place: the other name's file would grow too
            raise OSError(
                errno.EMLINK, f"the worklog has {st.st_nlink} names (a hard link; SR107)", path
            )
        size = st.st_size
        last_seq = newest_seq(fd, size)
        records = [_record(ev, last_seq + n) for n, ev in enumerate(events, start=1)]
        lines = [_ENCODER.encode(r).encode("utf-8") + b"\n" for r in records]
        if size and os.pread(fd, 1, size - 1) != b"\n":
            lines[0] = b"\n" + lines[0]  # terminate a torn last line; its bytes are kept
        for line in lines:
            fileio.write_all(fd, line)  # one write per record; short writes continue
        os.fsync(fd)
    finally:
        os.close(fd)
    return records


def _record(ev: NewEvent, seq: int) -> dict[str, Any]:
    record: dict[str, Any] = {
        "v": EVENT_VERSION,
        "ts": ev.ts,
        "seq": seq,
        "session": ev.session,
        "event": ev.event,
    }
    if ev.step is not None:
        record["step"] = ev.step
    if ev.sub_step is not None:
        record["sub_step"] = ev.sub_step
    if ev.detail:
        record["detail"] = ev.detail
    return record
