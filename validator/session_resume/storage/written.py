"""What the tool itself last wrote to a session's protocol files, and putting it back.

Every block that holds the session lock (:func:`session_resume.storage.store.locked`) ends by
recording, for each protocol file it changed (the state, ``.bak``, worklog, lease), the file's
identity (inode, size, modification and change times) and a copy of its bytes, inside the
session directory and only through the held directory:

- ``.00-session-written/record.json``, the record: per file its stat key and, for the state
  and ``.bak``, the BLAKE2b digest of the bytes written (and the state's revision);
- ``.00-session-written/<kind>``, the copies: the state as last written (staged by
  :func:`stage_state` before the state is replaced, so no write reads it back), the ``.bak``
  (the previous state's copy, renamed when the state rotates), the lease, and a mirror of the
  worklog (its appended bytes appended again: linear in what a write adds, not in the log);
- ``.00-session-written/.gitignore`` (``*``): git ignores the directory, so a commit, a
  ``git stash`` or a checkout never changes the record together with the files it records.

:func:`check` compares each protocol file with the record: a file whose stat key is the
recorded one is unchanged (its change time moves on any write, and no process can set it
back); otherwise its bytes are compared with the copy. A file changed by anything but the tool
is put back from the copy, the changed bytes kept as ``<name>.corrupt-<stamp>`` (a directory,
link or FIFO in its place is moved there), and the change reported. The record and the copies
are the tool's own: a session without a record (written by another implementation, or before
the record existed) is never checked, and a copy whose digest is not the recorded one is never
restored (a crash between the copy and the record).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat as stat_mod

from session_resume.records import record
from session_resume.storage.fileio import write_all
from session_resume.storage.held import HeldDir, LockBusy, StoreError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime
    from typing import Any

    from session_resume.storage.worklog import NewEvent

STATE = "00-session-state.json"
BAK = STATE + ".bak"
WORKLOG = "00-worklog.jsonl"
LEASE = "00-session.active"
DIR = ".00-session-written"
RECORD = "record.json"
# The protocol files the record covers, and the name of each one's copy.
KINDS = {STATE: "state", BAK: "bak", WORKLOG: "worklog", LEASE: "lease"}
COPIES = KINDS
_PREFIX = ".tmp."
_IGNORE = b"# session-resume's record of its own writes: never committed\n*\n"
_CHUNK = 1 << 20
MAX_RECORD = 64 * 1024

Key = tuple[int, int, int, int, int]  # mode, inode, size, mtime_ns, ctime_ns


def _key(st: os.stat_result | None) -> Key | None:
    if st is None:
        return None
    return (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def snapshot(h: HeldDir) -> dict[str, Key | None]:
    """The stat key of each protocol file (None: absent)."""
    out: dict[str, Key | None] = {}
    for name in KINDS:
        try:
            out[name] = _key(h.stat(name))
        except OSError:
            out[name] = None
    return out


def _dir(h: HeldDir, *, create: bool) -> HeldDir | None:
    """The record's directory in the session directory ``h`` (made with its ``.gitignore``
    when ``create``); None when it is missing."""
    try:
        r = h.sub(DIR, create=create)
    except StoreError:
        return None
    if create and not r.exists(".gitignore"):
        try:
            _put(r, ".gitignore", _IGNORE, durable=False)
        except OSError:
            r.close()
            raise
    return r


def load(r: HeldDir) -> dict[str, Any] | None:
    """The record in its directory ``r``, or None when there is none or it cannot be read."""
    res = r.read_limited(RECORD, max_size=MAX_RECORD)
    if res.data is None:
        return None
    try:
        doc = json.loads(res.data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("v") != 1 or not isinstance(doc.get("files"), dict):
        return None
    return doc


def _entry(rec: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    files = rec.get("files") if rec else None
    entry = files.get(name) if isinstance(files, dict) else None
    return entry if isinstance(entry, dict) else None


def _recorded_key(entry: dict[str, Any] | None) -> Key | None:
    key = entry.get("key") if entry else None
    if isinstance(key, list) and len(key) == 5 and all(type(k) is int for k in key):
        return (key[0], key[1], key[2], key[3], key[4])
    return None


def _read(h: HeldDir, name: str) -> bytes | None:
    """A regular file's bytes, whatever their size (None: absent or not a regular file)."""
    try:
        fd = h.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat_mod.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while chunk := os.read(fd, _CHUNK):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _digest(data: bytes) -> str:
    """BLAKE2b-256 of ``data``, from the interpreter's built-in module: ``hashlib`` would load
    OpenSSL, 3 ms of every write's start-up (tests/test_cold_imports.py)."""
    try:
        # lazy: only a write or a check digests
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - an interpreter without the built-in module
        # lazy: the same function through hashlib
        from hashlib import blake2b
    return blake2b(data, digest_size=32).hexdigest()


def _put(h: HeldDir, name: str, data: bytes, *, durable: bool) -> None:
    tmp = h.write_temp(data, _PREFIX, durable=durable)
    try:
        h.replace(tmp, name)
    except BaseException:
        h.discard(tmp)
        raise


# --- recording -------------------------------------------------------------------------------


def stage_state(h: HeldDir, data: bytes, *, rotating: bool) -> None:
    """Before the state is replaced by ``data``: its copy is staged (no read of what was
    written); with ``rotating`` (the current state becomes ``.bak``) the current copy becomes
    the ``.bak``'s when it is the current state's (its key is the recorded one)."""
    with contextlib.suppress(OSError, StoreError):
        r = _dir(h, create=True)
        if r is None:
            return
        with r:
            if rotating:
                current = _key(h.stat(STATE))
                if current is not None and current == _recorded_key(_entry(load(r), STATE)):
                    r.replace(COPIES[STATE], COPIES[BAK])
            _put(r, COPIES[STATE], data, durable=False)


def commit(h: HeldDir, before: dict[str, Key | None]) -> None:
    """At the end of a locked block: record each protocol file this block changed (its key
    differs from ``before``), and every one when there is no record yet (only once the block
    changed one). Never raises: a record that cannot be written is removed (no record, no
    check)."""
    after = snapshot(h)
    r = None
    try:
        r = _dir(h, create=False)
        rec = load(r) if r is not None else None
        files: dict[str, Any] = dict(rec["files"]) if rec else {}
        changed = [n for n in KINDS if after[n] != before.get(n) or (rec and n not in files)]
        # a block that wrote nothing records nothing (a hook's look at a session no record
        # covers makes none)
        if not changed:
            return
        if rec is None:
            changed = list(KINDS)
        if r is None:
            r = _dir(h, create=True)
        if r is None:
            return
        for name in changed:
            old = _entry(rec, name)
            files[name] = _record_one(h, r, name, after[name], before.get(name), old)
        body = json.dumps({"v": 1, "files": files}, separators=(",", ":")).encode()
        _put(r, RECORD, body, durable=False)
    except (OSError, StoreError, ValueError):
        if r is not None:
            r.discard(RECORD)
    finally:
        if r is not None:
            r.close()


def _record_one(
    h: HeldDir,
    r: HeldDir,
    name: str,
    key: Key | None,
    before: Key | None,
    old: dict[str, Any] | None,
) -> dict[str, Any]:
    copy = COPIES[name]
    if key is None:
        r.discard(copy)
        return {"key": None}
    if not stat_mod.S_ISREG(key[0]):
        raise StoreError([])  # not the tool's: record nothing for this session
    if name == WORKLOG:
        _mirror(h, r, key, before, _recorded_key(old))
        return {"key": list(key)}
    data = _read(h, name)
    if data is None:
        raise StoreError([])
    if _read(r, copy) != data:
        _put(r, copy, data, durable=False)
    entry: dict[str, Any] = {"key": list(key), "blake2b": _digest(data)}
    if name == STATE:
        with contextlib.suppress(ValueError, RecursionError, AttributeError):
            rev = json.loads(data).get("revision")
            if type(rev) is int:
                entry["revision"] = rev
    return entry


def _mirror(h: HeldDir, r: HeldDir, key: Key, before: Key | None, recorded: Key | None) -> None:
    """Bring the worklog's mirror up to the worklog: only the bytes appended in this block
    when the worklog was the recorded one before it and the mirror has its size; else a whole
    copy."""
    copy = COPIES[WORKLOG]
    mirror = r.stat(copy)
    start = before[2] if before is not None else 0
    appended = (
        before is not None
        and before == recorded
        and mirror is not None
        and mirror.st_size == start
        and key[2] >= start
        and key[1] == before[1]
    )
    if not appended:
        data = _read(h, WORKLOG)
        if data is None:
            raise StoreError([])
        _put(r, copy, data, durable=False)
        return
    src = h.open(WORKLOG, os.O_RDONLY)
    try:
        dst = r.open(copy, os.O_WRONLY | os.O_APPEND)
        try:
            at = start
            while chunk := os.pread(src, _CHUNK, at):
                write_all(dst, chunk)
                at += len(chunk)
        finally:
            os.close(dst)
    finally:
        os.close(src)


# --- checking --------------------------------------------------------------------------------


@record(frozen=True)
class Restored:
    """One protocol file put back: its name, what was found (``changed``, ``deleted``,
    ``created``, ``replaced`` by something that is not a regular file) and where those bytes
    were kept (None: nothing to keep)."""

    name: str
    found: str
    kept_as: str | None


def check(h: HeldDir, now: datetime) -> list[Restored]:
    """Compare each protocol file with the record and put back every one that something other
    than the tool changed (the caller holds the session lock). Nothing without a record."""
    r = _dir(h, create=False)
    if r is None:
        return []
    with r:
        rec = load(r)
        if rec is None:
            return []
        out = []
        for name in KINDS:
            entry = _entry(rec, name)
            if entry is None:
                continue
            done = _check_one(h, r, name, entry, now)
            if done is not None:
                out.append(done)
        return out


def _check_one(
    h: HeldDir, r: HeldDir, name: str, entry: dict[str, Any], now: datetime
) -> Restored | None:
    recorded = _recorded_key(entry)
    try:
        current = _key(h.stat(name))
    except OSError:
        return None
    if current == recorded:
        return None
    if recorded is None:  # the tool left no such file: whatever is there now is foreign
        return Restored(name, "created", _keep(h, name, now, move=True))
    kept = _read(r, COPIES[name])
    if kept is None or (name != WORKLOG and _digest(kept) != entry.get("blake2b")):
        return None  # no copy that is the recorded write: nothing to put back
    if name == WORKLOG and len(kept) != recorded[2]:
        return None
    if current is None:
        found, kept_as = "deleted", None
    elif stat_mod.S_ISREG(current[0]):
        now_bytes = _read(h, name)
        if now_bytes == kept:
            return None  # the same bytes (touched, or rewritten as they were)
        if name != WORKLOG and now_bytes is not None and _digest(now_bytes) == entry["blake2b"]:
            return None
        found, kept_as = "changed", _keep(h, name, now)
    else:
        found, kept_as = "replaced", _keep(h, name, now)
    tmp = h.write_temp(kept, "." + name + ".")
    try:
        h.replace(tmp, name)
    except BaseException:
        h.discard(tmp)
        raise
    h.fsync()
    return Restored(name, found, kept_as)


def corrupt_name(h: HeldDir, name: str, now: datetime) -> str:
    """The first free ``<name>.corrupt-<stamp>[-N]`` (the naming recover keeps a corrupt
    state under)."""
    stem = f"{name}.corrupt-{now.strftime('%Y%m%dT%H%M%SZ')}"
    kept, n = stem, 1
    while h.exists(kept):
        n += 1
        kept = f"{stem}-{n}"
    return kept


def _keep(h: HeldDir, name: str, now: datetime, *, move: bool = False) -> str:
    """Keep what is at ``name`` (a file, a link, a directory, a FIFO) under a free corrupt
    name, never following a link: a second name for it (the restore then replaces ``name``),
    or with ``move`` (or where no second name can be made) the entry itself moved there;
    returns that name."""
    kept = corrupt_name(h, name, now)
    if not move:
        try:
            os.link(name, kept, src_dir_fd=h.fd, dst_dir_fd=h.fd, follow_symlinks=False)
            return kept
        except OSError:
            pass
    os.rename(name, kept, src_dir_fd=h.fd, dst_dir_fd=h.fd)
    return kept


LOCK = STATE + ".lock"


def check_session(
    session_dir: str | os.PathLike[str],
    root: str | os.PathLike[str],
    now: datetime,
    note: Callable[[list[Restored]], Sequence[NewEvent]],
    *,
    timeout: float = 2.0,
) -> list[Restored]:
    """:func:`check` in the session directory held from ``root``, under its lock (waiting at
    most ``timeout`` seconds), then the worklog events ``note`` makes of what was put back
    appended, and what the block changed recorded (:func:`commit`). Lighter than
    ``store.locked`` (no state reader or validator is imported: a hook's start-up). [] when
    the directory cannot be held or locked."""
    # lazy: the worklog writer only where something is put back
    from session_resume.storage import worklog

    try:
        with HeldDir.at(session_dir, root) as h, h.lock(LOCK, timeout):
            before = snapshot(h)
            try:
                done = check(h, now)
                if done:
                    worklog.append_many(h, note(done))
                return done
            finally:
                commit(h, before)
    except (StoreError, LockBusy, OSError, ValueError):
        return []
