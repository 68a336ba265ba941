"""Concurrent writers (DESIGN §3 lock, §4 ``revision``): real processes racing on one session.

(a) N processes × U read-modify-write updates, each ``save(expected_revision=<loaded>)``
    retried on ``ConflictError``: nothing is lost; the revision moves by exactly N × U; every
    revision was acknowledged by exactly one writer; the state holds every artifact, in
    revision order; the worklog has exactly one event per save, in the same order.
(b) The same with exactly one attempt per update: every conflict is detected. The successful
    saves are exactly the revision delta, the artifacts present are exactly those of the
    successful saves (no silent lost update), the conflicted ones are absent.
(c) Negative control: with the lock disabled in the writers, the same checks must find lost
    updates (so (a) and (b) passing means something).

Environment: ``SESSION_RESUME_WRITERS`` (processes, default 8),
``SESSION_RESUME_CONCURRENCY_UPDATES`` (updates per process, default 200).

Why not ``with store.locked(s): load(); save()``: ``save`` takes the lock itself on a new
file descriptor, and ``flock`` locks belong to one open file, so that deadlocks until the lock
timeout (SR160). Optimistic concurrency with ``expected_revision`` is the
supported read-modify-write.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from session_resume.core.timeutil import format_ts
from session_resume.storage import store, worklog

from conftest import apex_state

# Test tier (README "Test tiers"): racing writer processes.
pytestmark = [
    pytest.mark.stress,
    pytest.mark.skipif(os.name != "posix", reason="POSIX processes and locks"),
]

WRITER_PY = Path(__file__).parent / "helpers" / "writer.py"
_spec = importlib.util.spec_from_file_location("session_resume_test_writer", WRITER_PY)
assert _spec is not None and _spec.loader is not None
writer = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(writer)

WRITERS = max(1, int(os.environ.get("SESSION_RESUME_WRITERS", "8")))
UPDATES = max(1, int(os.environ.get("SESSION_RESUME_CONCURRENCY_UPDATES", "200")))


class _FiguresReport:
    """Prints the figures in the terminal summary whatever the capture mode (-s or not)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.lines:
            terminalreporter.section("session-resume concurrency figures")
            for line in self.lines:
                terminalreporter.write_line(line)


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> _FiguresReport:
    pm = request.config.pluginmanager
    name = "session-resume-concurrency-figures"
    plugin = pm.get_plugin(name)
    if plugin is None:
        plugin = _FiguresReport()
        pm.register(plugin, name)
    return plugin


@pytest.fixture
def session(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A session at revision 1 and its document."""
    (tmp_path / ".git").mkdir()
    d = tmp_path / "agent-output" / "demo"
    d.mkdir(parents=True)
    res = store.save(d, apex_state(), now=writer.now_for(1), workflow="apex")
    return d, copy.deepcopy(res.document)


@dataclass
class Run:
    acks: dict[int, list[tuple[int, str]]] = field(default_factory=dict)  # writer → acks
    conflicts: dict[int, list[str]] = field(default_factory=dict)  # writer → conflicted names
    errors: list[str] = field(default_factory=list)  # names whose save failed (--no-lock only)
    retried: int = 0  # conflicts a retrying writer retried (from its `done` line)
    seconds: float = 0.0

    @property
    def saves(self) -> int:
        return sum(len(a) for a in self.acks.values())

    @property
    def n_conflicts(self) -> int:
        return sum(len(c) for c in self.conflicts.values())


def run_writers(d: Path, mode: str, n: int, updates: int, *extra: str, tag: str = "") -> Run:
    """Start ``n`` writer processes, release them together, collect their output."""
    procs = [
        subprocess.Popen(
            [
                sys.executable, str(WRITER_PY), str(d), "--prefix", f"{tag}w{i}-",
                "--count", str(updates), "--mode", mode, "--event", "checkpoint",
                "--ready", "--go", *extra,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(n)
    ]  # fmt: skip
    run = Run()
    try:
        for p in procs:
            assert p.stdout is not None
            first = p.stdout.readline()
            assert first == "ready\n", f"writer did not start: {first!r}"
        started = time.perf_counter()
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        outputs = []
        for p in procs:
            assert p.stdout is not None and p.stderr is not None and p.stdin is not None
            p.stdin.close()
            out = p.stdout.read()  # the same buffered stream readline() used
            err = p.stderr.read()
            p.wait(timeout=600)
            outputs.append((p.returncode, out, err))
        run.seconds = time.perf_counter() - started
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for i, (code, out, err) in enumerate(outputs):
        assert code == 0, f"writer {i} failed ({code}): {err[-3000:]}"
        acks: list[tuple[int, str]] = []
        conflicts: list[str] = []
        for line in out.splitlines():
            word, rest = line.split(" ", 1)
            if word == "conflict":
                conflicts.append(rest)
            elif word == "error":
                run.errors.append(rest.split(" ", 1)[0])
            elif word == "done":
                fields = dict(kv.split("=") for kv in rest.split())
                if mode == "retry":
                    run.retried += int(fields["conflicts"])
            else:
                acks.append((int(word), rest))
        run.acks[i], run.conflicts[i] = acks, conflicts
    return run


def violations(d: Path, base: dict[str, Any], run: Run) -> list[str]:
    """Everything that shows a lost or invented update, a hidden conflict, or a broken log."""
    out: list[str] = []
    loaded = store.load(d)
    if loaded.status != "ok" or loaded.document is None:
        return [f"load() is {loaded.status}: {[x.code for x in loaded.diagnostics]}"]
    doc = loaded.document
    base_rev = base["revision"]
    base_arts = base["steps"]["2"]["artifacts"]
    arts = doc["steps"]["2"]["artifacts"]
    new = arts[len(base_arts) :]
    if arts[: len(base_arts)] != base_arts:
        out.append("the initial artifacts changed")
    all_acks = sorted(a for acks in run.acks.values() for a in acks)
    delta = doc["revision"] - base_rev
    if len(all_acks) != delta:
        out.append(f"{len(all_acks)} successful saves, but the revision moved by {delta}")
    revs = [r for r, _ in all_acks]
    if revs != list(range(base_rev + 1, doc["revision"] + 1)):
        dup = sorted({r for r in revs if revs.count(r) > 1})
        out.append(f"acknowledged revisions are not one per save; twice: {dup[:10]}")
    if len(new) != len(set(new)):
        out.append("an artifact is present twice")
    acked = {name for _, name in all_acks}
    lost = sorted(acked - set(new))
    if lost:
        out.append(f"{len(lost)} acknowledged updates lost, e.g. {lost[:3]}")
    invented = sorted(set(new) - acked)
    if invented:
        out.append(f"{len(invented)} artifacts present without a successful save: {invented[:3]}")
    failed = {c for cs in run.conflicts.values() for c in cs} | set(run.errors)
    if failed & set(new):
        out.append(f"a save reported as failed was written: {sorted(failed & set(new))[:3]}")
    if not lost and not invented and len(new) == delta:
        wrong = [(r, n) for r, n in all_acks if new[r - base_rev - 1] != n]
        if wrong:
            out.append(f"artifacts not in revision order, e.g. {wrong[:3]}")
    for i, acks in run.acks.items():
        if [r for r, _ in acks] != sorted(r for r, _ in acks):
            out.append(f"writer {i}'s revisions go backwards")
    if doc["updated"] != format_ts(writer.now_for(doc["revision"])):
        out.append(f"updated {doc['updated']} is not the clock of revision {doc['revision']}")
    # The worklog: one event per save, seq increasing, in the same order as the artifacts.
    wl = d / worklog.WORKLOG
    diags = worklog.scan(wl)
    if diags:
        out.append(f"worklog: {[(x.code, x.line, x.message) for x in diags][:5]}")
    events = [json.loads(line) for line in wl.read_bytes().splitlines() if line.strip()]
    logged = [e["detail"]["artifact"] for e in events]
    if sorted(logged) != sorted(acked):
        out.append(f"{len(logged)} worklog events for {len(acked)} saves")
    elif logged != new:
        out.append("worklog events are not in the order of the saves")
    return out


def test_retry_on_conflict_loses_nothing(
    session: tuple[Path, dict[str, Any]], figures: _FiguresReport, record_property: Any
) -> None:
    d, base = session
    run = run_writers(d, "retry", WRITERS, UPDATES)
    problems = violations(d, base, run)
    line = (
        f"concurrency (a) retry: {WRITERS} processes x {UPDATES} updates = {run.saves} saves in "
        f"{run.seconds:.1f} s ({run.saves / run.seconds:.0f}/s), {run.retried} conflicts "
        f"retried"
    )
    figures.lines.append(line)
    print(line)
    record_property("retry_saves", run.saves)
    record_property("retry_conflicts", run.retried)
    assert not problems, problems
    assert run.saves == WRITERS * UPDATES
    final = store.load(d)
    assert final.revision == base["revision"] + WRITERS * UPDATES
    expected = {writer.artifact(f"w{i}-", k) for i in range(WRITERS) for k in range(UPDATES)}
    present = final.document["steps"]["2"]["artifacts"] if final.document else []
    assert set(present) == expected | set(base["steps"]["2"]["artifacts"])


def test_every_conflict_is_detected_without_retry(
    session: tuple[Path, dict[str, Any]], figures: _FiguresReport, record_property: Any
) -> None:
    d, base = session
    run = run_writers(d, "once", WRITERS, UPDATES)
    problems = violations(d, base, run)
    line = (
        f"concurrency (b) one attempt: {WRITERS} processes x {UPDATES} attempts: {run.saves} "
        f"saved, {run.n_conflicts} conflicts detected, in {run.seconds:.1f} s"
    )
    figures.lines.append(line)
    print(line)
    record_property("once_saves", run.saves)
    record_property("once_conflicts", run.n_conflicts)
    assert not problems, problems
    assert run.saves + run.n_conflicts == WRITERS * UPDATES
    if WRITERS > 1:
        assert run.n_conflicts > 0, "no conflict happened: the race was not exercised"


def test_without_the_lock_lost_updates_are_visible(
    session: tuple[Path, dict[str, Any]], figures: _FiguresReport
) -> None:
    """The checks above can fail: with the lock disabled the same writers lose updates."""
    if WRITERS < 2:
        pytest.skip("needs two writers")
    d, base = session
    n, updates = max(WRITERS, 8), 60
    problems: list[str] = []
    rounds = 0
    while not problems and rounds < 5:
        rounds += 1
        run = run_writers(d, "once", n, updates, "--no-lock", tag=f"r{rounds}")
        problems = violations(d, base, run)
        base = store.load(d).document or base  # the next round starts from here
        if not problems:  # the next round's violations must be its own
            (d / worklog.WORKLOG).unlink(missing_ok=True)
    line = (
        f"concurrency (c) no lock (negative control): {len(problems)} kinds of violation found "
        f"in {rounds} round(s): {'; '.join(problems)[:300]}"
    )
    figures.lines.append(line)
    print(line)
    assert problems, "lost updates without the lock went unnoticed"
