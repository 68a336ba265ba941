"""resume-large-worklog: a cold `session-resume resume` with a 1 GB worklog against the same
session with an empty one (and with the large file evicted from the page cache)."""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from commandline import bench_env, check_output, process, tool
from runner import (
    EXAMPLE,
    OPTIONS,
    BenchAbort,
    BenchUnavailable,
    Prepared,
    Run,
    Target,
    benchmark,
    progress,
)
from states import STATE_FILE

_RESUME_NOW = "2026-11-20T16:00:00Z"  # the lease below is then stale: an orphaned session
_SESSION = "5e55b1d0c0ffee42"
_LARGE = "large worklog"
_LARGE_COLD = "large worklog, evicted from cache"
_EMPTY = "empty worklog"


def _event(ts: str, seq: int, event: str, **extra: Any) -> bytes:
    rec = {"v": 1, "ts": ts, "seq": seq, "session": _SESSION, "event": event, **extra}
    return json.dumps(rec, separators=(",", ":")).encode() + b"\n"


def _current_session_events(first_seq: int) -> list[bytes]:
    """The session the state file describes (examples/…/contoso-portal): it crashed in step 2
    after checkpoint phase_2_waf, without a session_end."""
    d = "agent-output/contoso-portal"
    evs: list[tuple[str, str, dict[str, Any]]] = [
        ("2026-11-20T12:39:30Z", "session_start", {"detail": {"owner": "copilot-agent"}}),
        ("2026-11-20T12:40:00Z", "step_start", {"step": "1"}),
        ("2026-11-20T12:55:00Z", "checkpoint", {"step": "1", "sub_step": "phase_1_discovery"}),
        ("2026-11-20T13:05:00Z", "decision", {"detail": {"id": "D001"}}),
        ("2026-11-20T13:20:00Z", "step_complete", {"step": "1"}),
        ("2026-11-20T14:00:00Z", "step_start", {"step": "2"}),
        ("2026-11-20T14:10:00Z", "checkpoint", {"step": "2", "sub_step": "phase_1_prereqs"}),
        ("2026-11-20T14:20:00Z", "heartbeat", {}),
        (
            "2026-11-20T14:32:10Z",
            "checkpoint",
            {
                "step": "2",
                "sub_step": "phase_2_waf",
                "detail": {"artifacts": [f"{d}/02-architecture-assessment.md"]},
            },
        ),
    ]
    return [_event(ts, first_seq + i, ev, **x) for i, (ts, ev, x) in enumerate(evs)]


def _write_history(fh: Any, size: int, rng: random.Random) -> int:
    """Past sessions of the project, as valid JSONL with seq 1, 2, ..., until ``size`` bytes.
    Built a whole session (36 lines) per %-format and written in ~16 MB chunks. Returns the
    last seq written."""
    d = "agent-output/contoso-portal"
    body = [
        b'"event":"session_start","detail":{"owner":"copilot-agent","host":"build-07","pid":%d}',
        b'"event":"step_start","step":"2"',
        b'"event":"checkpoint","step":"2","sub_step":"phase_1_prereqs","detail":{"context_files":'
        b'["' + d.encode() + b'/00-session-state.json","' + d.encode() + b'/01-requirements.md"]}',
        *[b'"event":"heartbeat"'] * 28,
        b'"event":"note","detail":{"text":"WAF pillar review half done; cost pillar pending"}',
        b'"event":"checkpoint","step":"2","sub_step":"phase_2_waf","detail":{"artifacts":["'
        + d.encode()
        + b'/02-architecture-assessment.md"]}',
        b'"event":"finding_add","detail":{"title":"No RTO stated for the order database"}',
        b'"event":"heartbeat"',
        b'"event":"session_end"',
    ]
    # one line: {"v":1,"ts":"<day, hour, minute>:<second>Z","seq":N,"session":"<id>",<body>};
    # a past session's events lie one second apart, sessions at least a minute apart, and all
    # of them between 2020-01-01 and the start of the current session (2026-11-20).
    head = b'{"v":1,"ts":"%s%s","seq":%d,"session":"%s",'
    template = b"".join(head + line.replace(b"%d", b"%%d") + b"}\n" for line in body)
    template = template.replace(b"%%d", b"%d")  # the pid placeholder of session_start
    seconds = [f"{i:02d}Z".encode() for i in range(len(body))]
    start, end = datetime(2020, 1, 1, tzinfo=UTC), datetime(2026, 11, 19, tzinfo=UTC)
    per_block = len(template) + 4 * len(body) * 8  # roughly: the placeholders' expansions
    minutes = max(1, int((end - start).total_seconds() / 60 / max(1, size // per_block)))
    step = timedelta(minutes=minutes)
    when = start
    seq, written, chunk = 0, 0, []
    chunk_bytes = 0
    while written + chunk_bytes < size:
        prefix = when.strftime("%Y-%m-%dT%H:%M:").encode()
        sid = f"{rng.getrandbits(64):016x}".encode()
        args: list[Any] = []
        for i in range(len(body)):
            seq += 1
            args += [prefix, seconds[i], seq, sid]
            if i == 0:
                args.append(rng.randrange(1000, 99999))
        block = template % tuple(args)
        chunk.append(block)
        chunk_bytes += len(block)
        when += step
        if chunk_bytes >= 16 << 20:
            fh.write(b"".join(chunk))
            written += chunk_bytes
            chunk, chunk_bytes = [], 0
    fh.write(b"".join(chunk))
    return seq


def _sessions(tmpdir: Path) -> dict[str, Path]:
    """Two copies of the bundled example session, ``empty`` and ``large``, each its own
    repository, with a stale lease of the crashed session; no worklog yet."""
    from session_resume.core import lease as sentinel

    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    doc.pop("$schema", None)
    sent = sentinel.make(
        _SESSION,
        owner="copilot-agent",
        now=datetime(2026, 11, 20, 12, 39, 30, tzinfo=UTC),
        host="build-07",
    )
    sent["heartbeat"] = "2026-11-20T14:32:10Z"
    dirs: dict[str, Path] = {}
    for name in ("empty", "large"):
        root = tmpdir / name
        d = root / "agent-output" / doc["project"]
        d.mkdir(parents=True)
        for f in EXAMPLE.parent.iterdir():
            if f.name != STATE_FILE:
                shutil.copyfile(f, d / f.name)
        (d / STATE_FILE).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        (d / sentinel.SENTINEL).write_text(json.dumps(sent) + "\n", encoding="utf-8")
        # the artifacts were written before the last checkpoint (14:32:10), as an agent does
        written = datetime(2026, 11, 20, 14, 30, tzinfo=UTC).timestamp()
        for f in d.iterdir():
            os.utime(f, (written, written))
        dirs[name] = d
    return dirs


def _check_answers(
    tmpdir: Path, argv: Callable[[str], list[str]], env: dict[str, str], last: int
) -> str:
    """Both answer the same (resume_from_checkpoint with an orphan report), except that the
    orphan report of the large one lists the crashed session's last events. Returns the
    action."""
    answers, tails = {}, {}
    for name in ("empty", "large"):
        res = check_output(argv(name), cwd=tmpdir / name, env=env, what="setup")
        text = res.stdout.replace(str(tmpdir / name), "$ROOT")
        answer = json.loads(text)
        chosen = (answer.get("session") or {}).get("id")
        if chosen:  # a new session id, chosen at random for each answer (docs/spec.md §10.3)
            answer = json.loads(text.replace(chosen, "$SESSION"))
        tails[name] = (answer.get("orphan") or {}).pop("last_events", None)
        (answer.get("briefing") or {}).pop("last_events", None)  # the same tail, briefed
        answers[name] = answer
    if answers["empty"] != answers["large"]:
        raise BenchAbort(
            "resume answers differently with the large worklog:\n"
            f"empty: {json.dumps(answers['empty'])[:1500]}\nlarge: "
            f"{json.dumps(answers['large'])[:1500]}"
        )
    action = answers["large"].get("action")
    if action != "resume_from_checkpoint" or not answers["large"].get("orphan"):
        raise BenchAbort(f"unexpected resume answer: {json.dumps(answers['large'])[:1500]}")
    # (the report's events are the worklog's last ones; they must end with the crashed
    # session's own events)
    expected_tail = [json.loads(line) for line in _current_session_events(last + 1)]
    got = tails["large"] or []
    k = min(len(got), len(expected_tail))
    if tails["empty"] != [] or not k or got[-k:] != expected_tail[-k:]:
        raise BenchAbort(f"the orphan report's last events are unexpected: {tails}"[:1500])
    return str(action)


def _evicted(large: Run, big: Path) -> Run:
    """``large`` with ``big`` dropped from the page cache before each call."""

    def evict() -> None:
        fd = os.open(big, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)

    return Run(large.call, large.shown + "  (after fadvise DONTNEED)", evict, large.probe)


def large_size() -> tuple[int, str]:
    """The large worklog's size in bytes, and as the report says it."""
    if OPTIONS.smoke:
        return 1000 * 1000, "1 MB"
    if OPTIONS.quick:
        return 100 * 1000 * 1000, "100 MB"
    return 1000 * 1000 * 1000, "1 GB"


def write_large_worklog(
    path: Path, size: int, then: Callable[[int], bytes] = lambda _last: b""
) -> int:
    """A valid worklog of about ``size`` bytes (past sessions, seq 1..N) followed by
    ``then(N)``, fsynced (clean pages, so they can be evicted; the space is really used);
    returns N. Unavailable unless three times ``size`` is free."""
    free = shutil.disk_usage(path.parent).free
    if free < 3 * size:
        raise BenchUnavailable(
            f"only {free / 1e9:.1f} GB free in {path.parent}; the worklog needs "
            f"{3 * size / 1e9:.1f} GB free"
        )
    t0 = time.perf_counter()
    with open(path, "wb", buffering=0) as fh:
        last = _write_history(fh, size, random.Random(size))
        fh.write(then(last))
        os.fsync(fh.fileno())
    progress(
        f"  wrote a {path.stat().st_size / 1e9:.2f} GB worklog ({last:,} past events) in "
        f"{time.perf_counter() - t0:.1f} s"
    )
    return last


def orphaned_sessions(tmpdir: Path) -> tuple[dict[str, Path], Path, int, str]:
    """The orphaned session twice, under ``tmpdir/empty`` and ``tmpdir/large``: with an empty
    worklog and with a large one ending in the session's own events. Returns the session
    directories, the large worklog, its last past seq and its size as the report says it."""
    size, label = large_size()
    dirs = _sessions(tmpdir)
    (dirs["empty"] / "00-worklog.jsonl").write_bytes(b"")
    big = dirs["large"] / "00-worklog.jsonl"
    last = write_large_worklog(big, size, lambda n: b"".join(_current_session_events(n + 1)))
    return dirs, big, last, label


def resume_argv(tmpdir: Path, dirs: dict[str, Path], name: str) -> list[str]:
    """`session-resume resume` of the ``name`` session as JSON, at a time its lease is stale."""
    return [tool("session-resume"), "resume", str(dirs[name]), "--root", str(tmpdir / name)] + [
        "--now",
        _RESUME_NOW,
        "--format",
        "json",
    ]


@benchmark(
    "resume-large-worklog",
    description="cold `session-resume resume DIR` (an orphaned session: stale lease, crashed "
    "in step 2 after a checkpoint) with a 1 GB worklog (100 MB under --quick) vs the same "
    "session with an empty worklog; the third contender drops the large file from the page "
    "cache before each run (posix_fadvise DONTNEED)",
    contenders=(_EMPTY, _LARGE, _LARGE_COLD),
    anchor=_EMPTY,
    target=Target(_LARGE, 2.0),
    runs=15,
    quick_runs=7,
)
def resume_large_worklog(tmpdir: Path) -> Prepared:
    env = bench_env(tmpdir)
    dirs, big, last, label = orphaned_sessions(tmpdir)
    big_size = big.stat().st_size

    def argv(name: str) -> list[str]:
        return resume_argv(tmpdir, dirs, name)

    action = _check_answers(tmpdir, argv, env, last)
    runs = {
        _EMPTY: process(argv("empty"), cwd=tmpdir / "empty", env=env),
        _LARGE: process(argv("large"), cwd=tmpdir / "large", env=env),
    }
    unavailable: dict[str, str] = {}
    if hasattr(os, "posix_fadvise"):
        runs[_LARGE_COLD] = _evicted(runs[_LARGE], big)
    else:
        unavailable[_LARGE_COLD] = "os.posix_fadvise is not available on this platform"
    return Prepared(
        runs,
        notes=[
            f"large worklog = {label}: {big_size:,} bytes, {last + 9:,} valid JSONL events; "
            f"both sessions answer `{action}` with the same orphan report (apart from its "
            "last events, which only the large worklog has)"
        ],
        unavailable=unavailable,
    )
