"""Crash safety of the store (DESIGN §5, §11): real writer processes SIGKILLed mid-save.

Each kill: start a ``helpers/writer.py`` process on a session directory (it loads, appends a
unique artifact, saves with a worklog event, prints ``<revision> <artifact>`` per acknowledged
save, forever), wait until it is warm, sleep a random 0..max_delay (about two and a half
saves, calibrated on this machine, so kills land anywhere in the first saves), SIGKILL it,
then check the directory:

* ``load()`` is ``ok`` and the document is exactly the last acknowledged one or the next one
  (the save that was in flight: revision last_ack + 1, every acknowledged artifact present);
* ``.bak``, if present, is a valid state, exactly an earlier document, revision ≤ the state's
  (and ≥ state - 1: it is the previous version);
* temp files are never read as state (a decoy temp holding a valid state with a huge revision
  sits in every directory), leftovers are counted;
* the worklog has no garbage in the middle and its seq increases; its events are the saves, in
  order, with none invented.

The writer records, in a shared memory byte, which phase of a save it is in (see
``writer.PHASES``); the histogram of the phases the kills landed in is reported. Phases of a
few microseconds (the renames) are rarely hit by chance, so on top of the random kills, a
fifth as many *targeted* kills make the writer SIGSTOP itself on entering a chosen phase
(round robin over all of them) before the SIGKILL: every phase is killed in, every run.

Writers are forked from a warm ``writer.py --serve`` (a cold start costs ~0.2 s of CPU; the
fork ~1 ms); every 20th random kill is of a freshly exec'd ``python writer.py`` instead.

Environment: ``SESSION_RESUME_KILLS`` (random-delay kills, default 500),
``SESSION_RESUME_TARGETED_KILLS`` (default max(40, kills / 5)), ``SESSION_RESUME_WRITERS``
(directories killed concurrently, default 3), ``SESSION_RESUME_SEED`` (printed: rerun a
failure with it), ``SESSION_RESUME_KILL_MAX_DELAY_MS`` (default: calibrated).
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import json
import mmap
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from session_resume.core.timeutil import format_ts
from session_resume.storage import store, worklog

from conftest import apex_state

# Test tier (README "Test tiers"): SIGKILLs mid-save (`nox -s stress` runs 10,000).
pytestmark = [
    pytest.mark.stress,
    pytest.mark.skipif(os.name != "posix", reason="SIGKILL and fork are POSIX"),
]

WRITER_PY = Path(__file__).parent / "helpers" / "writer.py"
_spec = importlib.util.spec_from_file_location("session_resume_test_writer", WRITER_PY)
assert _spec is not None and _spec.loader is not None
writer = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(writer)

KILLS = int(os.environ.get("SESSION_RESUME_KILLS", "500"))
WRITERS = max(1, int(os.environ.get("SESSION_RESUME_WRITERS", "3")))
SEED = int(os.environ.get("SESSION_RESUME_SEED", str(random.randrange(1 << 30))))
TARGETED = int(os.environ.get("SESSION_RESUME_TARGETED_KILLS", str(max(40, KILLS // 5))))
SPAWN_EVERY = 20  # every 20th kill is of a cold `python writer.py`, the others of forked ones
ROTATE = 40  # kills per session directory before starting a fresh one (bounds the doc size)
TMP_GLOB = f"{store.TMP_PREFIX}*{store.TMP_SUFFIX}"
DECOY = f"{store.TMP_PREFIX}dec0dec0dec0{store.TMP_SUFFIX}"
DECOY_ARTIFACT = "agent-output/demo/decoy-never-state.md"
# Targeted kills stop the writer on entering one of these (all the phases of an update).
TARGET_PHASES = writer.PHASES[writer.P["load"] :]


# --- reporting -------------------------------------------------------------------------


class _FiguresReport:
    """Prints the figures in the terminal summary whatever the capture mode (-s or not)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.lines:
            terminalreporter.section("session-resume crash figures")
            for line in self.lines:
                terminalreporter.write_line(line)


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> _FiguresReport:
    pm = request.config.pluginmanager
    name = "session-resume-crash-figures"
    plugin = pm.get_plugin(name)
    if plugin is None:
        plugin = _FiguresReport()
        pm.register(plugin, name)
    return plugin


# --- the model of what is on disk ----------------------------------------------------------


@dataclass
class Tracked:
    """One session directory and what the parent knows must be in it."""

    dir: Path
    base: dict[str, Any]
    artifacts: list[str] = field(default_factory=list)  # artifacts saved, in save order
    acked: list[str] = field(default_factory=list)  # those whose save was acknowledged
    history: list[str] = field(default_factory=list)  # one line per kill, for failure reports
    shared_ino: int | None = None  # set when a kill left .bak and the state as one inode

    @property
    def revision(self) -> int:
        return 1 + len(self.artifacts)

    def doc_at(self, revision: int, extra: str | None = None) -> dict[str, Any]:
        """The exact document of ``revision`` (one artifact per save since revision 1)."""
        arts = self.artifacts[: revision - 1] + ([extra] if extra else [])
        assert len(arts) == revision - 1
        doc = copy.deepcopy(self.base)
        doc["steps"]["2"]["artifacts"] = doc["steps"]["2"]["artifacts"] + arts
        doc["revision"] = revision
        doc["updated"] = format_ts(writer.now_for(revision))
        return doc


def new_session(root: Path, name: str) -> Tracked:
    d = root / name / "agent-output" / "demo"
    d.mkdir(parents=True)
    (root / name / ".git").mkdir()
    res = store.save(d, apex_state(), now=writer.now_for(1), workflow="apex")
    assert res.revision == 1
    decoy = copy.deepcopy(res.document)
    decoy["revision"] = 999_999
    decoy["steps"]["2"]["artifacts"].append(DECOY_ARTIFACT)
    (d / DECOY).write_bytes(store.serialize(decoy))
    assert store.classify((d / DECOY).read_bytes()).status == "ok"
    return Tracked(d, copy.deepcopy(res.document))


def temp_files(d: Path) -> set[str]:
    return {p.name for p in d.glob(TMP_GLOB)} - {DECOY}


@dataclass
class Figures:
    kills: int = 0
    acked_saves: int = 0
    inflight_landed: int = 0  # kills after which the unacknowledged save was on disk
    targeted_kills: int = 0  # kills of a writer stopped at a chosen phase
    cold_kills: int = 0  # kills of a freshly exec'd writer (the others: forked from a warm one)
    leftover_tmp: int = 0  # temp files left behind by kills
    leftover_tmp_complete: int = 0  # ... of which: left by the kill, a whole valid state
    leftover_tmp_partial: int = 0  # ... left by the kill, empty or partly written
    leftover_tmp_after_save: int = 0  # ... left by a later save that succeeded (store bug)
    bak_same_as_state: int = 0  # kills between the .bak rotation and the replace
    torn_worklog: int = 0  # SR502 seen (a torn last line)
    dirs: int = 0
    phases: Counter[str] = field(default_factory=Counter)  # where the random kills landed
    targeted_phases: Counter[str] = field(default_factory=Counter)
    delays_ms: list[float] = field(default_factory=list)

    def add(self, other: Figures) -> None:
        for k in (
            "kills",
            "cold_kills",
            "targeted_kills",
            "acked_saves",
            "inflight_landed",
            "leftover_tmp",
            "leftover_tmp_complete",
            "leftover_tmp_partial",
            "leftover_tmp_after_save",
            "bak_same_as_state",
            "torn_worklog",
            "dirs",
        ):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.phases.update(other.phases)
        self.targeted_phases.update(other.targeted_phases)
        self.delays_ms.extend(other.delays_ms)


# --- the checks after every kill -----------------------------------------------------------


def check_after_kill(
    t: Tracked, acks: list[tuple[int, str]], next_name: str, fig: Figures, where: str
) -> None:
    # The acknowledgements continue the history one revision at a time.
    t.history.append(f"{where} acks {acks} known revision {t.revision}")
    for rev, name in acks:
        assert rev == t.revision + 1, (
            f"{where}: ack of revision {rev} after {t.revision}; history:\n"
            + "\n".join(t.history[-8:])
        )
        t.artifacts.append(name)
        t.acked.append(name)
    fig.acked_saves += len(acks)

    loaded = store.load(t.dir)
    assert loaded.status == "ok", (
        f"{where}: load() is {loaded.status}: {[d.code for d in loaded.diagnostics]}"
    )
    doc = loaded.document
    assert doc is not None
    assert doc["revision"] != 999_999 and DECOY_ARTIFACT not in doc["steps"]["2"]["artifacts"], (
        f"{where}: a temp file was read as the state"
    )
    if doc == t.doc_at(t.revision):
        pass
    elif doc == t.doc_at(t.revision + 1, extra=next_name):
        t.artifacts.append(next_name)
        fig.inflight_landed += 1
    else:
        arts = doc.get("steps", {}).get("2", {}).get("artifacts", [])
        missing = [a for a in t.acked if a not in arts]
        raise AssertionError(
            f"{where}: the state is neither the last acknowledged document (revision "
            f"{t.revision}) nor the next one: revision {doc.get('revision')}, "
            f"{len(arts)} artifacts, acknowledged but missing: {missing[:5]}"
        )
    state_rev = t.revision
    assert set(t.acked) <= set(doc["steps"]["2"]["artifacts"]), f"{where}: lost acked artifact"

    # .bak: a valid state, an exact earlier document, the previous version (or the same one
    # when the kill fell between the rotation and the replace).
    if os.path.lexists(t.dir / store.BAK):
        data = (t.dir / store.BAK).read_bytes()
        bak = store.classify(data)
        assert bak.status == "ok", f"{where}: .bak is {bak.status}"
        assert bak.document is not None
        brev = bak.revision
        assert 1 <= brev <= state_rev, f"{where}: .bak revision {brev} > state {state_rev}"
        assert brev >= state_rev - 1, f"{where}: .bak revision {brev}, state {state_rev}"
        assert bak.document == t.doc_at(brev), f"{where}: .bak is not revision {brev}"
        if brev == state_rev:
            fig.bak_same_as_state += 1
            t.shared_ino = os.lstat(t.dir / store.STATE).st_ino
        else:
            t.shared_ino = None
    else:
        assert state_rev == 1, f"{where}: no .bak at revision {state_rev}"

    # The worklog: no garbage in the middle, seq increasing, events = saves in order.
    wl = t.dir / worklog.WORKLOG
    diags = worklog.scan(wl)
    bad = [d for d in diags if d.code != "SR502"]
    assert not bad, f"{where}: worklog: {[(d.code, d.line, d.message) for d in bad]}"
    fig.torn_worklog += sum(1 for d in diags if d.code == "SR502")
    events = []
    if wl.exists():
        for raw in wl.read_bytes().splitlines():
            try:
                ev = json.loads(raw)
            except ValueError:
                continue
            events.append(ev["detail"]["artifact"])
    assert len(events) == len(set(events)), f"{where}: an event was logged twice"
    it = iter(t.artifacts)
    assert all(e in it for e in events), f"{where}: worklog events are not the saves in order"
    assert set(t.acked) <= set(events), f"{where}: an acknowledged save has no worklog event"


# --- the kill loop -------------------------------------------------------------------------


def calibrate(root: Path, writers: int) -> tuple[float, Path]:
    """Seconds per save of a writer on this machine when ``writers`` of them run at once, as
    they will during the kills (and a session to warm the fork servers on)."""
    n = 30
    dirs = [new_session(root, f"calibrate-{i}").dir for i in range(writers)]
    procs = [
        subprocess.Popen(
            [sys.executable, str(WRITER_PY), str(d), "--count", str(n), "--event", "checkpoint"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for d in dirs
    ]
    per_save = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        done = out.strip().splitlines()[-1]
        per_save.append(float(done.rsplit("seconds=", 1)[1]) / n)
    return sum(per_save) / len(per_save), dirs[0]


class Zygote:
    """``writer.py --serve``: a warm writer that forks one writer child per kill (a cold
    ``python writer.py`` costs ~0.2 s of start-up; a fork costs about a millisecond)."""

    def __init__(self, warm_dir: Path, trace: Path, log: Path):
        self.log = log
        self.stderr = open(log, "wb")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(WRITER_PY),
                str(warm_dir),
                "--serve",
                "--mode",
                "blind",
                "--event",
                "checkpoint",
                "--trace",
                str(trace),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
        )
        self.child: int | None = None

    def _send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError(f"writer --serve ended: {self.log.read_text()[-2000:]}")
        return line.rstrip("\n")

    def run(self, session_dir: Path, prefix: str, stop_at: str = "") -> int:
        self._send(f"run {session_dir} {prefix} {stop_at}".rstrip())
        word, pid = self._line().split()
        assert word == "ready", word
        self.child = int(pid)
        return self.child

    def reap(self) -> tuple[list[str], int]:
        """Ask for the (killed) child to be reaped: its output lines and exit status."""
        self._send("reap")
        lines = []
        while not (line := self._line()).startswith(f"exit {self.child} "):
            lines.append(line)
        self.child = None
        return lines, int(line.rsplit(" ", 1)[1])

    def close(self) -> None:
        if self.child is not None:  # not reaped yet: the pid is still ours
            os.kill(self.child, signal.SIGKILL)
            with contextlib.suppress(Exception):
                self.reap()
        with contextlib.suppress(Exception):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()


def spawn_and_kill(
    session_dir: Path, prefix: str, trace: Path, delay: float
) -> tuple[list[str], int, str]:
    """One cold ``python writer.py`` process, killed ``delay`` after it says it is warm."""
    proc = subprocess.Popen(
        [
            sys.executable,
            str(WRITER_PY),
            str(session_dir),
            "--prefix",
            prefix,
            "--mode",
            "blind",
            "--event",
            "checkpoint",
            "--trace",
            str(trace),
            "--ready",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        if first == "ready\n":
            time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)  # not waited for yet: the pid is still ours
        # Read on through the same buffered stream: readline() may already hold acks.
        out = proc.stdout.read()
        err = proc.stderr.read()
        proc.wait(timeout=60)
        assert first == "ready\n", f"writer did not start: {first!r} {err}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return out.splitlines(), proc.returncode, err


def wait_stopped(pid: int, timeout: float = 20.0) -> str:
    """Wait until the (unreaped) process ``pid`` has stopped itself; its state letter."""
    deadline = time.monotonic() + timeout
    while True:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
        if state in "TtZX" or time.monotonic() > deadline:
            return state
        time.sleep(0.0002)


def reset_trace(trace: Path) -> None:
    """Phase 0, without truncating the file (the server has it mapped)."""
    fd = os.open(trace, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if os.fstat(fd).st_size < mmap.PAGESIZE:
            os.ftruncate(fd, mmap.PAGESIZE)
        os.pwrite(fd, b"\0", 0)
    finally:
        os.close(fd)


def run_slot(
    slot: int,
    kills: int,
    targeted: int,
    root: Path,
    warm_dir: Path,
    max_delay: float,
    stop: threading.Event,
) -> Figures:
    """``kills`` kills after a random delay, and ``targeted`` ones of a writer that stopped
    itself on entering a chosen phase of its 1st to 3rd save (every phase, however short)."""
    rng = random.Random(SEED * 1000 + slot)
    n_targeted = 0
    plan = ["random"] * kills + ["targeted"] * targeted
    rng.shuffle(plan)
    fig = Figures()
    trace = root / f"trace-{slot}"
    reset_trace(trace)
    zygote = Zygote(warm_dir, trace, root / f"writer-{slot}.log")
    t: Tracked | None = None
    try:
        for cycle, kind in enumerate(plan):
            if stop.is_set():
                break
            if cycle % ROTATE == 0:
                t = new_session(root, f"w{slot}-d{cycle // ROTATE}")
                fig.dirs += 1
            assert t is not None
            prefix = f"s{slot}c{cycle}-"
            reset_trace(trace)
            before = temp_files(t.dir)
            delay = rng.uniform(0.0, max_delay)
            if kind == "targeted":
                # round robin over the slots: every phase is targeted by someone
                target = TARGET_PHASES[(n_targeted * WRITERS + slot) % len(TARGET_PHASES)]
                n_targeted += 1
                nth = rng.randint(1, 3)
                pid = zygote.run(t.dir, prefix, f"{target}:{nth}")
                state = wait_stopped(pid)
                os.kill(pid, signal.SIGKILL)
                lines, status = zygote.reap()
                err = zygote.log.read_text()[-2000:]
                assert state in "Tt", f"writer never reached {target}:{nth} ({state}): {err}"
                fig.targeted_kills += 1
                delay = 0.0
            elif cycle % SPAWN_EVERY == SPAWN_EVERY - 1:
                lines, status, err = spawn_and_kill(t.dir, prefix, trace, delay)
                fig.cold_kills += 1
            else:
                pid = zygote.run(t.dir, prefix)
                time.sleep(delay)
                os.kill(pid, signal.SIGKILL)  # not reaped until we say so: the pid is ours
                lines, status = zygote.reap()
                err = zygote.log.read_text()[-2000:]
            assert status == -signal.SIGKILL, (
                f"writer exited by itself ({status}) before the kill: {err}"
            )
            phase = writer.PHASES[trace.read_bytes()[0]]
            fig.kills += 1
            if kind == "targeted":
                assert phase == target, f"stopped in {phase}, not {target}"
                fig.targeted_phases[phase] += 1
            else:
                fig.phases[phase] += 1
                fig.delays_ms.append(delay * 1000)
            acks = []
            for line in lines:
                rev, name = line.split(" ", 1)
                acks.append((int(rev), name))
            where = (
                f"[seed {SEED} slot {slot} kill {cycle} ({kind}) phase {phase} "
                f"delay {delay * 1000:.2f} ms dir {t.dir}]"
            )
            shared_ino, rev_before = t.shared_ino, t.revision
            check_after_kill(t, acks, writer.artifact(prefix, len(acks)), fig, where)
            left = temp_files(t.dir) - before
            fig.leftover_tmp += len(left)
            for name in left:
                path = t.dir / name
                if shared_ino == path.lstat().st_ino and t.revision > rev_before:
                    # store bug: a save that succeeded after a kill between the .bak
                    # rotation and the replace (see test_save_after_interrupted_rotation...)
                    fig.leftover_tmp_after_save += 1
                elif store.classify(path.read_bytes()).status == "ok":
                    fig.leftover_tmp_complete += 1
                else:
                    fig.leftover_tmp_partial += 1
    finally:
        zygote.close()
    return fig


@pytest.fixture
def fast_thread_switch() -> Iterator[None]:
    """Kill timing is measured by threads of this process: let a sleeping one run promptly."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def test_sigkill_mid_save_never_loses_or_corrupts(
    tmp_path: Path,
    figures: _FiguresReport,
    record_property: Any,
    fast_thread_switch: None,
) -> None:
    started = time.perf_counter()
    per_save, warm_dir = calibrate(tmp_path, WRITERS)
    env_delay = os.environ.get("SESSION_RESUME_KILL_MAX_DELAY_MS")
    # about two and a half saves: kills land from the writer's load to the worklog append
    max_delay = float(env_delay) / 1000 if env_delay else min(max(2.5 * per_save, 0.003), 0.25)
    per_slot = -(-KILLS // WRITERS)
    targeted_per_slot = -(-TARGETED // WRITERS)
    stop = threading.Event()
    total = Figures()
    with ThreadPoolExecutor(WRITERS) as pool:
        futures = [
            pool.submit(
                run_slot, slot, per_slot, targeted_per_slot, tmp_path, warm_dir, max_delay, stop
            )
            for slot in range(WRITERS)
        ]
        try:
            for f in futures:
                total.add(f.result())
        finally:
            stop.set()
    elapsed = time.perf_counter() - started

    phases = ", ".join(f"{p}={total.phases[p]}" for p in writer.PHASES if total.phases[p])
    targeted = ", ".join(
        f"{p}={total.targeted_phases[p]}" for p in writer.PHASES if total.targeted_phases[p]
    )
    random_kills = total.kills - total.targeted_kills
    line = (
        f"crash: {total.kills} kills ({random_kills} after a random delay, of which "
        f"{total.cold_kills} of cold processes; {total.targeted_kills} at a chosen phase; "
        f"{WRITERS} concurrent, seed {SEED}) in {elapsed:.1f} s; "
        f"save {per_save * 1000:.1f} ms, delay 0..{max_delay * 1000:.1f} ms; "
        f"{total.acked_saves} acknowledged saves; in-flight save landed {total.inflight_landed}; "
        f".bak == state {total.bak_same_as_state}; leftover temp files {total.leftover_tmp} "
        f"(left by the kill: {total.leftover_tmp_complete} complete, "
        f"{total.leftover_tmp_partial} partial; left by the next successful save: "
        f"{total.leftover_tmp_after_save}); torn worklog lines {total.torn_worklog}; "
        f"{total.dirs} session dirs"
    )
    summary = [
        line,
        f"crash: random kills landed in: {phases}",
        f"crash: targeted kills stopped at: {targeted}",
    ]
    figures.lines += summary
    print("\n".join(summary))
    for key, value in (
        ("kills", total.kills),
        ("random_kills", random_kills),
        ("targeted_kills", total.targeted_kills),
        ("leftover_tmp", total.leftover_tmp),
        ("acked_saves", total.acked_saves),
        ("inflight_landed", total.inflight_landed),
        ("seed", SEED),
        ("phases", dict(total.phases)),
        ("targeted_phases", dict(total.targeted_phases)),
    ):
        record_property(key, value)

    assert random_kills >= KILLS, f"only {random_kills} random-delay kills of {KILLS}"
    assert total.targeted_kills >= TARGETED, f"only {total.targeted_kills} of {TARGETED}"
    if len(TARGET_PHASES) <= TARGETED:
        missed = [p for p in TARGET_PHASES if not total.targeted_phases[p]]
        assert not missed, f"no targeted kill in {missed}"
    assert total.acked_saves > 0
    if KILLS >= 500:  # the random delays do spread the kills over the save
        in_save = [p for p in TARGET_PHASES if total.phases[p]]
        assert len(in_save) >= 6, f"random kills landed in too few phases: {phases}"


def test_save_after_interrupted_rotation_leaves_no_temp(tmp_path: Path) -> None:
    t = new_session(tmp_path, "s")
    store.save(t.dir, store.load(t.dir).document or {}, now=writer.now_for(2))
    # What a SIGKILL after _keep_as(state, .bak) and before os.replace(tmp, state) leaves:
    os.unlink(t.dir / store.BAK)
    os.link(t.dir / store.STATE, t.dir / store.BAK)
    res = store.save(t.dir, store.load(t.dir).document or {}, now=writer.now_for(3))
    assert res.revision == 3
    assert store.classify((t.dir / store.BAK).read_bytes()).revision == 2
    assert temp_files(t.dir) == set(), "a successful save left a temp file"
