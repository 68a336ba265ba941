"""A state writer run as a real subprocess by the crash and concurrency tests.

It loops: load the session's state, append one new unique artifact to step 2, save. After each
successful save it prints one line, flushed, ``<revision> <artifact>``, so the parent knows the
last acknowledged write (a line the parent has read is a save that returned).

Modes (``--mode``):

``blind``  save without ``expected_revision`` (one writer per session: the crash test);
``retry``  save with ``expected_revision=<revision loaded>``; on ``ConflictError`` reload and
           retry the same artifact until it is saved (no update is ever given up);
``once``   like ``retry`` but exactly one attempt per update: a ``ConflictError`` prints
           ``conflict <artifact>`` and the update is abandoned.

``--no-lock`` replaces the store's lock by a no-op (a negative control: lost updates become
possible, and the tests must be able to see them); an ``OSError`` from ``save`` then prints
``error <artifact> <type>`` and the update is abandoned (with the lock it is a failure).
``--event`` appends that worklog event,
with the artifact in its detail, on every save. ``--trace FILE`` records, as one byte in a
shared memory map of FILE, which phase of a save the process is in, so the parent can tell
where a SIGKILL landed (see ``PHASES``). ``--ready`` prints ``ready`` once imports and schema
compilation are done; ``--go`` then waits for a line on stdin before the first update.

The clock is injected and deterministic: the save that produces revision ``r`` uses
``now_for(r)``, so the parent can rebuild every document exactly.

Last line, when the loop ends by itself: ``done saves=<n> conflicts=<n> seconds=<s>``.

``--serve`` makes it a fork server (a cold start costs ~0.2 s, a fork ~1 ms): warm once, then
fork one writer child per ``run`` line, the child printing ``ready <pid>`` then its acks; the
server reaps the child only when told (``reap``), so the parent can SIGKILL the pid safely.
``--stop-at PHASE:N`` (with ``--trace``) makes the writer SIGSTOP itself the N-th time it
enters PHASE, so that the parent's SIGKILL lands exactly there.
"""

from __future__ import annotations

import argparse
import contextlib
import mmap
import os
import signal
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

T0 = datetime(2026, 3, 2, 11, 0, tzinfo=UTC)
ARTIFACT_DIR = "agent-output/demo/"

# Where a save can be. The parent reads the byte after a SIGKILL: the phase the kill landed in.
PHASES = (
    "startup",  # 0: before --trace is set up (never seen by the parent)
    "ready",  # 1: warm, before the first update
    "load",  # 2: the writer's own load (outside the lock)
    "modify",  # 3: building the new document
    "lock_wait",  # 4: save() taking the lock
    "locked_load",  # 5: save() reading the current state under the lock
    "validate",  # 6: save() validating the new document
    "tmp_open",  # 7: creating the O_EXCL temp file
    "tmp_write",  # 8: writing the temp file
    "tmp_fsync",  # 9: fsync of the temp file
    "after_tmp_fsync",  # 10: temp durable; reading the current file to decide on .bak
    "bak_link",  # 11: hard-linking the current file to a staging name
    "bak_replace",  # 12: os.replace(staging, .bak)
    "after_bak",  # 13: .bak rotated, the state not yet replaced
    "state_replace",  # 14: os.replace(temp, state)
    "after_replace",  # 15: replaced, directory not yet fsynced
    "dir_fsync",  # 16: fsync of the directory
    "worklog",  # 17: appending the worklog event
    "unlock",  # 18: releasing the lock, returning from save()
    "ack",  # 19: printing the acknowledgement
    "after_ack",  # 20: acknowledged, looping
)
P = {name: i for i, name in enumerate(PHASES)}


def now_for(revision: int) -> datetime:
    """The injected clock of the save that produces ``revision``."""
    return T0 + timedelta(seconds=revision)


def artifact(prefix: str, i: int) -> str:
    return f"{ARTIFACT_DIR}x-{prefix}{i}.md"


class _Trace:
    """One byte in a shared mapping: survives the SIGKILL (the page cache holds it)."""

    def __init__(self, path: str | None):
        self.map: mmap.mmap | None = None
        self.stop_phase = -1  # --stop-at: SIGSTOP ourselves on reaching this phase ...
        self.stop_left = 0  # ... the n-th time
        if path:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                if os.fstat(fd).st_size < mmap.PAGESIZE:
                    os.ftruncate(fd, mmap.PAGESIZE)
                self.map = mmap.mmap(fd, mmap.PAGESIZE)
            finally:
                os.close(fd)

    def __call__(self, phase: int) -> None:
        if self.map is not None:
            self.map[0] = phase
            if phase == self.stop_phase:
                self.stop_left -= 1
                if self.stop_left == 0:  # wait here for the parent's SIGKILL
                    os.kill(os.getpid(), signal.SIGSTOP)

    def stop_at(self, spec: str | None) -> None:
        """``PHASE:N``: stop (SIGSTOP) the N-th time the writer enters PHASE."""
        if spec:
            name, _, n = spec.partition(":")
            self.stop_phase, self.stop_left = P[name], int(n or 1)

    def get(self) -> int:
        return self.map[0] if self.map is not None else 0


def _instrument(trace: _Trace, store: Any, worklog: Any, fileio: Any) -> None:
    """Mark the phases of a save. Only the markers are added: every call still goes to the real
    function (the ``os`` seen by the store module is a forwarding proxy)."""
    from session_resume.storage import held

    real_os = os

    class _OsProxy:
        def __getattr__(self, name: str) -> Any:
            return getattr(real_os, name)

        def open(self, path: Any, flags: int, *a: Any, **k: Any) -> int:
            if str(path).endswith(".tmp"):
                trace(P["tmp_open"])
                fd = real_os.open(path, flags, *a, **k)
                trace(P["tmp_write"])
                return fd
            return real_os.open(path, flags, *a, **k)

        def fsync(self, fd: int) -> None:
            if trace.get() == P["tmp_write"]:
                trace(P["tmp_fsync"])
                real_os.fsync(fd)
                trace(P["after_tmp_fsync"])
            elif trace.get() == P["after_replace"]:
                trace(P["dir_fsync"])
                real_os.fsync(fd)
                trace(P["unlock"])
            else:
                real_os.fsync(fd)

        def link(self, src: Any, dst: Any, **k: Any) -> None:
            trace(P["bak_link"])
            real_os.link(src, dst, **k)

        def replace(self, src: Any, dst: Any, **k: Any) -> None:
            if str(dst).endswith(store.BAK):
                trace(P["bak_replace"])
                real_os.replace(src, dst, **k)
                trace(P["after_bak"])
            elif str(dst).endswith(store.STATE):
                trace(P["state_replace"])
                real_os.replace(src, dst, **k)
                trace(P["after_replace"])
            else:
                real_os.replace(src, dst, **k)

    proxy = _OsProxy()
    store.os = proxy
    fileio.os = proxy
    held.os = proxy  # the temp file, the .bak link and the replaces are the held directory's

    real_locked = store.locked
    real_read_state = store.read_state  # save() reads the current state with it, locked
    real_check = store.check_writable
    real_append = worklog.append

    @contextlib.contextmanager
    def locked(*a: Any, **k: Any) -> Iterator[Any]:
        trace(P["lock_wait"])
        with real_locked(*a, **k) as h:
            yield h
            trace(P["unlock"])

    def read_state(*a: Any, **k: Any) -> Any:
        if trace.get() == P["lock_wait"]:
            trace(P["locked_load"])
        return real_read_state(*a, **k)

    def check(*a: Any, **k: Any) -> Any:
        trace(P["validate"])
        return real_check(*a, **k)

    def append(*a: Any, **k: Any) -> Any:
        trace(P["worklog"])
        out = real_append(*a, **k)
        trace(P["unlock"])
        return out

    store.locked = locked
    store.read_state = read_state
    store.check_writable = check
    worklog.append = append


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("session_dir", help="the session (with --serve: the one to warm up on)")
    ap.add_argument("--prefix", default="", help="artifact names are x-<prefix><n>.md")
    ap.add_argument("--count", type=int, default=0, help="updates to make; 0 = until killed")
    ap.add_argument("--mode", choices=("blind", "retry", "once"), default="blind")
    ap.add_argument("--no-lock", action="store_true", help="disable the store's lock")
    ap.add_argument("--event", default=None, help="worklog event to append on each save")
    ap.add_argument("--trace", default=None, help="file to map for phase markers")
    ap.add_argument("--ready", action="store_true", help="print `ready` when warm")
    ap.add_argument("--go", action="store_true", help="after `ready`, wait for a stdin line")
    ap.add_argument(
        "--stop-at",
        default=None,
        metavar="PHASE:N",
        help="with --trace: SIGSTOP itself the N-th time it enters PHASE (so that the parent's "
        "SIGKILL lands exactly there)",
    )
    ap.add_argument(
        "--serve",
        action="store_true",
        help="fork server: warm up once, then for each stdin line "
        "`run <dir> <prefix> [PHASE:N]` fork a writer child that prints `ready <pid>` and its "
        "acks; on the line `reap` wait for the child and print `exit <pid> <status>` "
        "(status: exit code, or minus the signal)",
    )
    return ap


class _Ctx:
    """What a warm writer holds: the store module, its own (untraced) load, the trace."""

    def __init__(self, store: Any, load: Any, trace: _Trace):
        self.store, self.load, self.trace = store, load, trace


def _setup(args: argparse.Namespace) -> _Ctx:
    """Import, warm up (the lock's module, schema compilation: so every update runs at its
    steady pace and a kill's timing means the same for the first update as for the others),
    then install the tracing and lock options."""
    from session_resume.services.validation import ValidateOptions, validate_document
    from session_resume.storage import fileio, store, worklog

    trace = _Trace(args.trace)
    session = store.Session(Path(args.session_dir))
    first = store.load(session)
    if first.document is not None:
        validate_document(
            store.serialize(first.document),
            options=ValidateOptions(workflow="apex", now=now_for(first.revision)),
        )
        store.is_valid_state_bytes(store.serialize(first.document))
    if not args.no_lock:
        with store.locked(session):
            pass
    worklog.read_tail(session.dir / worklog.WORKLOG, 1)
    real_load = store.load  # the writer's own read: not a phase of save()
    if args.trace:
        _instrument(trace, store, worklog, fileio)
    if args.no_lock:
        store.locked = lambda *a, **k: contextlib.nullcontext()
    return _Ctx(store, real_load, trace)


def _loop(args: argparse.Namespace, ctx: _Ctx, session_dir: str, prefix: str) -> int:
    """The updates. Returns the exit code."""
    store, trace = ctx.store, ctx.trace
    out = sys.stdout
    session = store.Session(Path(session_dir))
    saves = conflicts = 0
    started = time.perf_counter()
    i = 0
    while args.count == 0 or i < args.count:
        name = artifact(prefix, i)
        while True:
            trace(P["load"])
            loaded = ctx.load(session)
            if loaded.status != "ok" or loaded.document is None:
                print(f"cannot load: {loaded.status} {loaded.diagnostics}", file=sys.stderr)
                return 3
            trace(P["modify"])
            doc = loaded.document
            doc["steps"]["2"]["artifacts"].append(name)
            try:
                res = store.save(
                    session,
                    doc,
                    now=now_for(loaded.revision + 1),
                    expected_revision=None if args.mode == "blind" else loaded.revision,
                    workflow="apex",
                    event=args.event,
                    event_step="2",
                    event_detail={"artifact": name},
                )
            except store.ConflictError:
                conflicts += 1
                if args.mode == "once":
                    out.write(f"conflict {name}\n")
                    out.flush()
                    break
                continue
            except (OSError, store.StoreError) as exc:
                if not args.no_lock:
                    raise
                # Without the lock another writer can replace the state under our feet (a
                # link of the replaced inode fails with ENOENT, reported by save() as SR163):
                # a failed attempt, reported.
                out.write(f"error {name} {exc.__class__.__name__}\n")
                out.flush()
                break
            trace(P["ack"])
            out.write(f"{res.revision} {name}\n")
            out.flush()
            trace(P["after_ack"])
            saves += 1
            break
        i += 1
    elapsed = time.perf_counter() - started
    out.write(f"done saves={saves} conflicts={conflicts} seconds={elapsed:.3f}\n")
    out.flush()
    return 0


def _serve(args: argparse.Namespace, ctx: _Ctx) -> int:
    """Fork a warm writer per request; the parent kills it (by the pid it is told), then asks
    for it to be reaped, so the pid can never be reused by another process in between."""
    out = sys.stdout
    child = None
    for line in sys.stdin:
        cmd = line.split()
        if cmd and cmd[0] == "run" and child is None:
            session_dir, prefix = cmd[1], cmd[2] if len(cmd) > 2 else ""
            stop = cmd[3] if len(cmd) > 3 else None
            out.flush()
            sys.stderr.flush()
            child = os.fork()
            if child == 0:  # the writer
                code = 4
                try:
                    ctx.trace(P["ready"])
                    ctx.trace.stop_at(stop)
                    out.write(f"ready {os.getpid()}\n")
                    out.flush()
                    code = _loop(args, ctx, session_dir, prefix)
                except BaseException:
                    import traceback

                    traceback.print_exc()
                finally:
                    with contextlib.suppress(BaseException):
                        sys.stdout.flush()
                        sys.stderr.flush()
                    os._exit(code)
        elif cmd == ["reap"] and child is not None:
            _, status = os.waitpid(child, 0)
            code = os.waitstatus_to_exitcode(status)
            out.write(f"exit {child} {code}\n")
            out.flush()
            child = None
        else:
            print(f"writer --serve: unexpected {line!r}", file=sys.stderr)
            return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    ctx = _setup(args)
    if args.serve:
        return _serve(args, ctx)
    ctx.trace(P["ready"])
    ctx.trace.stop_at(args.stop_at)
    if args.ready:
        sys.stdout.write("ready\n")
        sys.stdout.flush()
    if args.go:
        sys.stdin.readline()
    return _loop(args, ctx, args.session_dir, args.prefix)


if __name__ == "__main__":
    sys.exit(main())
