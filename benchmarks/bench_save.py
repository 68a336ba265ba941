"""save-vs-bare-io: store.save() with its worklog event, in process, against the same durable
I/O done bare (exclusive temp + fsync, .bak link, replace, directory fsync, worklog line +
fsync) and against SQLite (WAL, synchronous=FULL) committing the same document and a log row;
a fourth contender times only the checks save() makes."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import sys
import types
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runner import EXAMPLE, BenchAbort, Prepared, Run, Target, benchmark, fmt_s
from states import STATE_FILE

_SAVE_NOW = datetime(2026, 11, 20, 15, 0, tzinfo=UTC)  # after the example's `updated`
_SAVE, _CHECKS = "store.save()", "save()'s checks only"
_CALLS = "save()'s system calls, bare"
_BARE, _SQLITE = "bare durable I/O", "SQLite WAL synchronous=FULL"
_SESSION = "5e55b1d0c0ffee42"
_COUNTED = ("fsync", "replace", "rename", "link")


def _fsync_dir(d: Path) -> None:
    fd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def counting_os() -> Iterator[dict[str, int]]:
    """Count the fsync, replace, rename and link calls of the package's modules: every loaded
    ``session_resume.*`` module whose ``os`` is the os module gets a proxy that counts them
    (``store``, ``fileio``, ``worklog`` ...); restored on exit. Calls through a name imported
    with ``from os import ...`` are not seen."""
    counts = dict.fromkeys(_COUNTED, 0)

    def counted(name: str) -> Callable[..., Any]:
        real = getattr(os, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return real(*args, **kwargs)

        return call

    class _OS(types.ModuleType):
        def __getattr__(self, name: str) -> Any:
            return getattr(os, name)

    proxy = _OS("os")
    for name in _COUNTED:
        setattr(proxy, name, counted(name))
    patched = [
        m
        for n, m in list(sys.modules.items())
        if n.startswith("session_resume.") and getattr(m, "os", None) is os
    ]
    for m in patched:
        m.os = proxy  # type: ignore[attr-defined]
    try:
        yield counts
    finally:
        for m in patched:
            m.os = os  # type: ignore[attr-defined]


def _breakdown(med: dict[str, float], info: dict[str, Any]) -> list[str]:
    save, bare = med[_SAVE], med[_BARE]
    lines = [
        f"per save() (counted over {info['counted']} calls): "
        + ", ".join(f"{info['per_save'][k]:g} {k}" for k in _COUNTED)
        + "; the bare durable I/O: "
        + ", ".join(f"{info['per_bare'][k]:g} {k}" for k in _COUNTED),
    ]
    if _CHECKS in med:
        checks = med[_CHECKS]
        lines.append(
            f"save()'s median {fmt_s(save)}: its checks (read the current file, serialize, "
            f"strict parse + full validation of the new document) "
            f"{fmt_s(checks)} = {checks / save:.0%}; the rest ~{fmt_s(save - checks)} = "
            f"{(save - checks) / bare:.2f}x the bare durable I/O"
        )
    if _CALLS in med:
        calls = med[_CALLS]
        lines.append(
            f"save()'s own system calls with no work between them: {fmt_s(calls)} = "
            f"{calls / bare:.2f}x the bare durable I/O (the floor of its lock, path checks, "
            f"read of the current file and worklog tail); the rest of save(), "
            f"~{fmt_s(save - calls)} = {(save - calls) / bare:.2f}x, is Python's work"
        )
    if _CALLS in med and _CHECKS in med:
        # What the durability contract costs before any other work: every document written
        # is validated, and save() makes these system calls. The goal must fit above it.
        least = med[_CALLS] + med[_CHECKS]
        lines.append(
            f"save()'s system calls plus its checks, nothing else: {fmt_s(least)} = "
            f"{least / bare:.2f}x the bare durable I/O (the read of the current file is in "
            f"both): no save() that validates what it writes and makes these calls is faster"
        )
    if _SQLITE in med:
        lines.append(f"store.save() / SQLite: {save / med[_SQLITE]:.2f}x")
    calls = info.get("syscalls")
    if isinstance(calls, dict):
        lines.append(
            f"system calls per save() (strace -c -f, {_STRACE_SAVES} saves minus none): "
            f"{calls['total']:.0f}, {calls['stat family']:.0f} of them stat/lstat/readlink; "
            f"before the held directory (81bf5d0, the same count): {_SYSCALLS_BEFORE['total']}, "
            f"{_SYSCALLS_BEFORE['stat family']} stat/lstat/readlink"
        )
    elif calls is not None:
        lines.append(f"system calls per save() not counted: {calls}")
    lines.append(f"state file written: {info['bytes']:,} bytes; worklog line {info['line']} bytes")
    return lines


def _session(tmpdir: Path, name: str) -> tuple[dict[str, Any], Path]:
    """The bundled example state (without its source-tree ``$schema``) and a copy of its
    session directory, minus the state file, under ``tmpdir/name``."""
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    doc.pop("$schema", None)  # its relative path points into the source tree
    sdir = tmpdir / name / "agent-output" / doc["project"]
    sdir.mkdir(parents=True)
    for f in EXAMPLE.parent.iterdir():
        if f.name != STATE_FILE:
            shutil.copyfile(f, sdir / f.name)
    return doc, sdir


def _check_saves(save: Callable[[], None], sdir: Path, root: Path) -> tuple[bytes, bytes]:
    """Data check: two saves (the second rotates a valid .bak), the file loads as ok and
    validates clean, the worklog has two events. Returns the state's and the last worklog
    line's bytes."""
    from session_resume import ValidateOptions, validate_document
    from session_resume.storage import store, worklog

    save()
    save()
    loaded = store.load(sdir, root=root)
    if loaded.status != "ok" or loaded.revision != 2 or not (sdir / store.BAK).is_file():
        raise BenchAbort(
            f"store.save() did not leave a valid state (status {loaded.status}, "
            f"revision {loaded.revision}): " + "; ".join(d.message for d in loaded.diagnostics)
        )
    lines = (sdir / worklog.WORKLOG).read_bytes().splitlines(keepends=True)
    if len(lines) != 2 or json.loads(lines[-1])["seq"] != 2:
        raise BenchAbort(f"save(event=...) did not append two worklog events: {lines}")
    data = (sdir / STATE_FILE).read_bytes()
    report = validate_document(data, file=STATE_FILE, options=ValidateOptions(now=_SAVE_NOW))
    if report.diagnostics:
        raise BenchAbort(
            "the saved state is not clean: "
            + "; ".join(f"{d.code} {d.message}" for d in report.diagnostics)
        )
    return data, lines[-1]


def _bare_io(bare_dir: Path, data: bytes, line: bytes) -> Callable[[], None]:
    """What save() must do to the disk, done bare: the temp file (O_EXCL) written and fsynced,
    the current state hard-linked to a staging name and renamed over .bak, the temp renamed
    over the state, the directory fsynced, one worklog line appended and fsynced."""
    state = bare_dir / STATE_FILE
    bak = bare_dir / f"{STATE_FILE}.bak"
    tmp = bare_dir / f".{STATE_FILE}.bench.tmp"
    staging = bare_dir / f".{STATE_FILE}.bench.bak.tmp"
    log = bare_dir / "00-worklog.jsonl"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    log_flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)

    def bare() -> None:
        fd = os.open(tmp, flags, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.link(state, staging)
        os.replace(staging, bak)
        os.replace(tmp, state)
        _fsync_dir(bare_dir)
        fd = os.open(log, log_flags, 0o644)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    state.write_bytes(data)  # a state to keep as .bak from the first call on
    return bare


def _sqlite(path: Path, data: bytes, line: bytes) -> Callable[[], None]:
    """SQLite in WAL mode with synchronous=FULL: one transaction updates the document (TEXT)
    and its revision and inserts a log row; the commit is durable."""
    con = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    if con.execute("PRAGMA journal_mode=WAL").fetchone()[0] != "wal":
        raise BenchAbort("SQLite did not switch to WAL mode")
    con.execute("PRAGMA synchronous=FULL")
    con.execute("CREATE TABLE state (id INTEGER PRIMARY KEY, revision INTEGER, doc TEXT)")
    con.execute("CREATE TABLE log (seq INTEGER PRIMARY KEY, line TEXT)")
    con.execute("INSERT INTO state VALUES (1, 0, '{}')")
    text, log_line = data.decode("utf-8"), line.decode("utf-8").rstrip("\n")

    def commit() -> None:
        con.execute("BEGIN IMMEDIATE")
        con.execute("UPDATE state SET doc = ?, revision = revision + 1 WHERE id = 1", (text,))
        con.execute("INSERT INTO log (line) VALUES (?)", (log_line,))
        con.execute("COMMIT")

    commit()
    if con.execute("SELECT doc FROM state").fetchone()[0] != text:
        raise BenchAbort("SQLite did not store the document")
    return commit


# The bare durable I/O's calls, by construction (see _bare_io).
_BARE_CALLS = {"fsync": 3, "replace": 2, "rename": 0, "link": 1}


def _count(save: Callable[[], None], n: int) -> dict[str, Any]:
    """fsync/replace/rename/link calls per save(), counted in the package's modules."""
    with counting_os() as counts:
        for _ in range(n):
            save()
    return {"counted": n, "per_save": {k: v / n for k, v in counts.items()}}


def _checks(doc: dict[str, Any], wf: Any, sdir: Path, root: Path) -> Callable[[], None]:
    """What save() does besides locking and writing, in the order it does it (store.py): the
    current file is read and classified (parse + 3.0 schema, unless it holds the bytes save()
    wrote last: then only its revision is looked up), the document is stamped and serialized
    once, and those bytes are parsed by the strict reader and fully validated
    (check_writable: schema, semantic and workflow rules); that value is the caller's copy."""
    from session_resume.storage import store

    session = store.Session(sdir, root)

    def checks() -> None:
        current = store.read_state(session, parse=False)
        new = {**doc, "updated": "2026-11-20T15:00:00Z", "revision": current.revision + 1}
        data = store.serialize(new)
        store.check_writable(new, wf, _SAVE_NOW, str(sdir / STATE_FILE), data=data)

    return checks


def _calls_bare(calls_dir: Path, data: bytes, line: bytes) -> Callable[[], None]:
    """The system calls one save() with its event makes, in its order (store.save through the
    held directory, storage/held.py, and worklog: the walk from the root, the path policy's
    fstatat of each session file, lock, read of the current file, temp file, .bak rotation,
    replace, directory fsync, worklog tail read and append), written out with no work between
    them: what save() would cost if Python cost nothing. Kept in step with save() by hand; the
    setup checks it leaves the files save() leaves."""
    root = str(calls_dir.parent.parent)
    state, bak = STATE_FILE, f"{STATE_FILE}.bak"
    lock, log = f"{state}.lock", "00-worklog.jsonl"
    others = (state, bak, lock, "00-session.active", log, "00-handoff.md")
    nofollow, cloexec = getattr(os, "O_NOFOLLOW", 0), getattr(os, "O_CLOEXEC", 0)
    nonblock, directory = getattr(os, "O_NONBLOCK", 0), getattr(os, "O_DIRECTORY", 0)
    dflags = os.O_RDONLY | directory | cloexec
    below = [calls_dir.parent.name, calls_dir.name]

    def lstat(p: str, d: int) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.stat(p, dir_fd=d, follow_symlinks=False)

    def calls() -> None:
        import fcntl

        d = os.open(root, dflags)  # HeldDir.at (the root's real path: only if a link needs it)
        for part in below:  # each component relative to its parent, never following a link
            nxt = os.open(part, dflags | nofollow, dir_fd=d)
            os.close(d)
            d = nxt
        for p in others:  # the path policy of every file a write opens (check_write_paths)
            lstat(p, d)
        lfd = os.open(lock, os.O_RDWR | os.O_CREAT | nofollow | nonblock | cloexec, 0o644, dir_fd=d)
        os.fstat(lfd)
        fcntl.flock(lfd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fd = os.open(state, os.O_RDONLY | nofollow | nonblock | cloexec, dir_fd=d)  # read_state
        os.fstat(fd)
        while os.read(fd, 1 << 20):
            pass
        os.close(fd)
        tmp = f".{STATE_FILE}.{os.urandom(6).hex()}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | nofollow | cloexec
        fd = os.open(tmp, flags, 0o644, dir_fd=d)
        os.write(fd, data)
        os.fsync(fd)
        os.close(fd)
        lstat(state, d)  # a regular file to rotate
        lstat(state, d)  # keep_as: not already the .bak's inode
        lstat(bak, d)
        staging = f".{STATE_FILE}.{os.urandom(6).hex()}.tmp"
        os.link(state, staging, src_dir_fd=d, dst_dir_fd=d, follow_symlinks=False)
        os.replace(staging, bak, src_dir_fd=d, dst_dir_fd=d)
        lstat(staging, d)
        os.replace(tmp, state, src_dir_fd=d, dst_dir_fd=d)
        os.fsync(d)  # the held directory's own descriptor
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | nofollow | cloexec
        fd = os.open(log, flags, 0o644, dir_fd=d)
        size = os.fstat(fd).st_size
        if size:
            os.pread(fd, min(size, 4096), max(0, size - 4096))  # the newest record's seq
            os.pread(fd, 1, size - 1)  # a torn last line?
        os.write(fd, line)
        os.fsync(fd)
        os.close(fd)
        fcntl.flock(lfd, fcntl.LOCK_UN)
        os.close(lfd)
        os.close(d)

    (calls_dir / STATE_FILE).write_bytes(data)
    (calls_dir / f"{STATE_FILE}.bak").write_bytes(data)
    return calls


# System calls per save() (strace -c -f: N saves minus none, over N) on the parent commit of
# the held directory (81bf5d0, issue 25), measured with _syscalls_per_save on that checkout's
# package: its path checks resolved the session directory and every session file by path.
_SYSCALLS_BEFORE = {"total": 47, "stat family": 21}
_STRACE_SAVES = 40
_STRACE_CHILD = """
import json, sys
from datetime import datetime, timezone
from session_resume import load_workflow
from session_resume.storage import store
d, root, n, doc = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
wf = load_workflow(doc["workflow"])
now = datetime(2026, 11, 20, 15, 0, tzinfo=timezone.utc)
def save():
    store.save(d, doc, now=now, workflow=wf, root=root, event="checkpoint", event_step="2",
               event_sub_step="phase_2_waf", session_id="5e55b1d0c0ffee42")
for _ in range(3 + n):
    save()
"""
_STAT_FAMILY = ("stat", "lstat", "fstat", "newfstatat", "fstatat64", "statx", "readlink")


def _strace_totals(out: str) -> dict[str, int]:
    """The call counts of an ``strace -c`` summary: per system call, and the total."""
    counts: dict[str, int] = {}
    for row in out.splitlines():
        cols = row.split()
        if len(cols) >= 5 and cols[0].replace(".", "").isdigit() and cols[-1] != "total":
            counts[cols[-1]] = int(cols[3])
    return counts


def _syscalls_per_save(
    tmpdir: Path, doc: dict[str, Any], *, pythonpath: str | None = None
) -> dict[str, float] | str:
    """The system calls one save() with its event makes, counted by ``strace -c -f`` in a
    child process: a run of N saves minus a run of none (after the same three warm-up saves),
    over N; or why it could not be counted. ``pythonpath``: another checkout's package."""
    import subprocess

    if shutil.which("strace") is None:
        return "strace is not installed"
    runs = []
    for n in (0, _STRACE_SAVES):
        d = tmpdir / f"strace-{n}" / "agent-output" / doc["project"]
        d.mkdir(parents=True)
        env = {**os.environ, **({"PYTHONPATH": pythonpath} if pythonpath else {})}
        out = tmpdir / f"strace-{n}.txt"
        argv = [sys.executable, "-c", _STRACE_CHILD, str(d), str(d.parent.parent), str(n)]
        proc = subprocess.run(
            ["strace", "-c", "-f", "-o", str(out), *argv, json.dumps(doc)],
            capture_output=True,
            text=True,
            check=False,
            env=env,
        )
        if proc.returncode != 0:
            return f"strace could not run the saves: {(proc.stderr or proc.stdout)[-300:]}"
        runs.append(_strace_totals(out.read_text()))
    none, many = runs
    per = {k: (many.get(k, 0) - none.get(k, 0)) / _STRACE_SAVES for k in many}
    return {
        "total": sum(per.values()),
        "stat family": sum(v for k, v in per.items() if k in _STAT_FAMILY),
        **{k: v for k, v in sorted(per.items()) if v},
    }


@benchmark(
    "save-vs-bare-io",
    description="in process, repeated on one session directory: store.save() of the bundled "
    "example state (apex, step 2 in progress) with its worklog event (a checkpoint), vs the "
    "same durable I/O done bare (O_EXCL temp + write + fsync, .bak hard link to a staging "
    "name + os.replace, os.replace of the state, directory fsync, one worklog line append + "
    "fsync), vs SQLite (WAL, synchronous=FULL) committing the same document and a log row in "
    "one transaction; a fourth contender times only the checks save() makes (no lock, no "
    "write), and a fifth only the system calls save() makes, written out bare",
    contenders=(_SAVE, _BARE, _SQLITE, _CHECKS, _CALLS),
    anchor=_BARE,
    targets=(Target(_SAVE, 1.5), Target(_SAVE, None, against=_SQLITE)),
    runs=300,
    quick_runs=60,
    warmup=5,
    derive=_breakdown,
)
def save_vs_bare_io(tmpdir: Path) -> Prepared:
    from session_resume import load_workflow
    from session_resume.storage import store

    doc, sdir = _session(tmpdir, "repo")
    root = tmpdir / "repo"
    wf = load_workflow(doc["workflow"])

    # As a writer command calls it (services/writes.py): a Workflow object, the repository
    # root, and the write moment's worklog event.
    def save() -> None:
        store.save(
            sdir,
            doc,
            now=_SAVE_NOW,
            workflow=wf,
            root=root,
            event="checkpoint",
            event_step="2",
            event_sub_step="phase_2_waf",
            session_id=_SESSION,
        )

    data, line = _check_saves(save, sdir, root)
    bare_dir = tmpdir / "bare"
    bare_dir.mkdir()
    bare = _bare_io(bare_dir, data, line)
    bare()
    if (bare_dir / STATE_FILE).read_bytes() != data:
        raise BenchAbort("the bare write did not write the bytes save() wrote")
    sqlite = _sqlite(tmpdir / "state.sqlite", data, line)
    checks = _checks(doc, wf, sdir, root)
    checks()
    calls_dir = tmpdir / "calls" / "agent-output" / doc["project"]
    calls_dir.mkdir(parents=True)
    calls = _calls_bare(calls_dir, data, line)
    calls()
    if (calls_dir / STATE_FILE).read_bytes() != data or (
        calls_dir / "00-worklog.jsonl"
    ).read_bytes() != line:
        raise BenchAbort("the replayed system calls did not leave what save() leaves")
    info = {
        "bytes": len(data),
        "line": len(line),
        **_count(save, 5),
        "per_bare": _BARE_CALLS,
        "syscalls": _syscalls_per_save(tmpdir, doc),
    }
    return Prepared(
        {
            _SAVE: Run(
                save,
                "store.save(dir, doc, now=..., workflow=apex, root=..., event='checkpoint', ...)",
            ),
            _BARE: Run(
                bare,
                "os.open(O_CREAT|O_EXCL) + write + fsync + close; os.link(state, staging) + "
                "os.replace(staging, .bak); os.replace(tmp, state); fsync(dir); "
                "open(worklog, O_APPEND) + write(line) + fsync",
            ),
            _SQLITE: Run(
                sqlite,
                "BEGIN IMMEDIATE; UPDATE state SET doc=?, revision=revision+1; INSERT INTO log; "
                f"COMMIT (sqlite {sqlite3.sqlite_version}, journal_mode=WAL, synchronous=FULL)",
            ),
            _CALLS: Run(
                calls,
                "save()'s system calls in its order, no Python work between them: "
                "the walk from the root (open + openat x2), fstatat x6, "
                "lock openat+fstat+flock, current file openat+fstat+read, temp file + fsync, "
                ".bak fstatat x3 + linkat + renameat + fstatat, renameat, fsync(held dir), "
                "worklog openat+fstat+pread x2+write+fsync, unlock",
            ),
            _CHECKS: Run(
                checks,
                "store.read_state(parse=False) + serialize(doc) + check_writable(data=...)",
            ),
        },
        notes=[
            f"the bundled example state ({len(data):,} bytes) and a {len(line)}-byte worklog "
            f"line, saved into {sdir.name}/ under the temp dir; the bare I/O goes to a sibling "
            "directory, the SQLite database next to them"
        ],
        info=info,
    )


# --- what keeping the tool's record of its writes costs ------------------------------------------

_RECORDED, _UNRECORDED = "store.save() with the record", "store.save() without the record"


def _record_bytes(sdir: Path) -> int:
    """The bytes the record of a session's writes keeps (storage/written.py)."""
    d = sdir / ".00-session-written"
    return sum(p.stat().st_size for p in d.iterdir()) if d.is_dir() else 0


def _record_cost(med: dict[str, float], info: dict[str, Any]) -> list[str]:
    extra = med[_RECORDED] - med[_UNRECORDED]
    return [
        f"keeping what puts a protocol file back costs {fmt_s(extra)} a save "
        f"({extra / med[_UNRECORDED]:.0%}): the copy of the state staged before it is "
        "replaced (no fsync), the .bak's copy renamed from the last one, the worklog line "
        "appended to its mirror, the record (keys and digests) written",
        f"on disk: {info['record']:,} bytes of record beside a {info['state']:,}-byte state, "
        f"its .bak and a {info['worklog']:,}-byte worklog (the copies are their size again)",
    ]


@benchmark(
    "save-record",
    description="in process, repeated on two session directories: store.save() of the bundled "
    "example state with its worklog event, as it runs (each locked block ends by recording "
    "what it wrote, for the hooks that put back a protocol file changed by anything else: "
    "storage/written.py), against the same save() with the record's two steps replaced by "
    "no-ops (nothing recorded, nothing copied)",
    contenders=(_RECORDED, _UNRECORDED),
    anchor=_UNRECORDED,
    targets=(Target(_RECORDED, 1.25),),
    runs=300,
    quick_runs=60,
    warmup=5,
    derive=_record_cost,
)
def save_record(tmpdir: Path) -> Prepared:
    from session_resume import load_workflow
    from session_resume.storage import store, written

    doc, sdir = _session(tmpdir, "recorded")
    _, bare_sdir = _session(tmpdir, "unrecorded")
    wf = load_workflow(doc["workflow"])

    def saver(d: Path) -> Callable[[], None]:
        def save() -> None:
            store.save(
                d,
                doc,
                now=_SAVE_NOW,
                workflow=wf,
                root=d.parent.parent,
                event="checkpoint",
                event_step="2",
                event_sub_step="phase_2_waf",
                session_id=_SESSION,
            )

        return save

    recorded, plain = saver(sdir), saver(bare_sdir)
    commit, stage = written.commit, written.stage_state

    def unrecorded() -> None:
        written.commit = lambda h, before: None  # type: ignore[assignment]
        written.stage_state = lambda h, data, rotating: None  # type: ignore[assignment]
        try:
            plain()
        finally:
            written.commit, written.stage_state = commit, stage

    _check_saves(recorded, sdir, sdir.parent.parent)
    _check_saves(unrecorded, bare_sdir, bare_sdir.parent.parent)
    if _record_bytes(bare_sdir) or not _record_bytes(sdir):
        raise BenchAbort("the record was not kept by the one save() and only by it")
    copy = sdir / ".00-session-written" / "state"
    if copy.read_bytes() != (sdir / STATE_FILE).read_bytes():
        raise BenchAbort("the record's copy of the state is not the state save() wrote")
    info = {
        "record": _record_bytes(sdir),
        "state": (sdir / STATE_FILE).stat().st_size,
        "worklog": (sdir / "00-worklog.jsonl").stat().st_size,
    }
    return Prepared(
        {
            _RECORDED: Run(recorded, "store.save(dir, doc, ..., event='checkpoint')"),
            _UNRECORDED: Run(
                unrecorded, "the same, written.commit and written.stage_state made no-ops"
            ),
        },
        notes=[
            f"the bundled example state ({info['state']:,} bytes), saved into two sibling "
            "session directories under the temp dir"
        ],
        info=info,
    )
