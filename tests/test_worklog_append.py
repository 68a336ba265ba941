"""The worklog append's next ``seq`` (docs/spec.md §6; issue 19 point 2): read from the newest
record backwards from the end, whatever the file's size, and still right after records of any
length, a torn last line, garbage, blank lines, other writers and a crash mid-append."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from session_resume.storage import store, worklog

NOW = "2026-03-03T10:00:00Z"


def _line(seq: int, pad: int = 0) -> bytes:
    rec = {"v": 1, "ts": NOW, "seq": seq, "session": "s", "event": "note"}
    if pad:
        rec["detail"] = {"text": "x" * pad}
    return json.dumps(rec, separators=(",", ":")).encode() + b"\n"


def _append(d: Path) -> int:
    return int(worklog.append(d, "note", ts=NOW, session="s")["seq"])


def _seqs(d: Path) -> list[int]:
    lines = (d / worklog.WORKLOG).read_bytes().splitlines()
    return [json.loads(x)["seq"] for x in lines if x.startswith(b'{"v":') and x.endswith(b"}")]


@pytest.mark.parametrize("size", [1024 * 1024, 4 * 1024 * 1024])
def test_seq_continues_after_a_record_of_megabytes(tmp_path: Path, size: int) -> None:
    _append(tmp_path)
    worklog.append(tmp_path, "note", ts=NOW, session="s", detail={"text": "x" * size})
    assert _append(tmp_path) == 3
    assert worklog.scan(tmp_path / worklog.WORKLOG) == []


@pytest.mark.parametrize("torn", [b'{"v":1,"ts":"20', b'{"v":1,"x":"' + b"y" * 200_000])
def test_a_torn_last_line_is_kept_and_skipped(tmp_path: Path, torn: bytes) -> None:
    """A crash mid-append left a torn record (short, or longer than any read window): the next
    append terminates it and continues from the last whole record."""
    log = tmp_path / worklog.WORKLOG
    log.write_bytes(_line(1) + _line(2) + torn)
    assert _append(tmp_path) == 3
    data = log.read_bytes()
    assert data.startswith(_line(1) + _line(2) + torn + b"\n")
    assert [d.code for d in worklog.scan(log)] == ["SR502"]
    assert _append(tmp_path) == 4


def test_a_whole_record_without_its_newline_counts(tmp_path: Path) -> None:
    log = tmp_path / worklog.WORKLOG
    log.write_bytes(_line(1) + _line(5).rstrip(b"\n"))
    assert _append(tmp_path) == 6
    assert log.read_bytes().endswith(b"}\n" + _line(6))


def test_garbage_blank_lines_and_records_without_seq_are_walked_over(tmp_path: Path) -> None:
    log = tmp_path / worklog.WORKLOG
    no_seq = b'{"v":1,"ts":"' + NOW.encode() + b'","session":"s","event":"note"}\n'
    log.write_bytes(_line(7) + b"<<<<<<< HEAD\n\n   \n" + no_seq + b"[1,2]\n" + b"\xff\xfe\n")
    assert _append(tmp_path) == 8


def test_an_integral_float_seq_is_an_integer(tmp_path: Path) -> None:
    (tmp_path / worklog.WORKLOG).write_bytes(b'{"v":1,"ts":"x","seq":7.0,"event":"note"}\n')
    assert _append(tmp_path) == 8


def test_a_line_over_the_limit_is_never_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worklog, "MAX_LINE", 1000)
    log = tmp_path / worklog.WORKLOG
    long_record = _line(99, pad=5000)  # would parse, but is over the (lowered) limit
    log.write_bytes(_line(3) + long_record)
    assert _append(tmp_path) == 4


def test_an_empty_or_absent_worklog_starts_at_one(tmp_path: Path) -> None:
    assert _append(tmp_path) == 1
    other = tmp_path / "other"
    other.mkdir()
    (other / worklog.WORKLOG).write_bytes(b"")
    assert _append(other) == 1


def test_newest_seq_at_every_read_boundary(tmp_path: Path) -> None:
    """Lines of random lengths around the 4 KiB first read and the doubling reads: the walk
    agrees with reading the whole file, newest record first."""
    rng = random.Random(19)
    path = tmp_path / worklog.WORKLOG
    for trial in range(300):
        seq, data = 0, b""
        for _ in range(rng.randint(0, 6)):
            pick = rng.random()
            if pick < 0.6:
                seq += rng.randint(1, 3)
                data += _line(seq, pad=rng.choice([0, 10, 4000, 4060, 8100, 12_250, 70_000]))
            elif pick < 0.8:
                data += b"garbage " * rng.randint(0, 1100) + b"\n"
            else:
                data += b"\n"
        if rng.random() < 0.3:
            data += b'{"v":1,"ts":' + b"z" * rng.randint(0, 9000)  # torn
        path.write_bytes(data)
        expected = 0
        for raw in data.split(b"\n"):
            try:
                value = json.loads(raw)
            except ValueError:
                continue
            if isinstance(value, dict) and isinstance(value.get("seq"), int):
                expected = value["seq"]
        fd = os.open(path, os.O_RDONLY)
        try:
            assert worklog.newest_seq(fd, len(data)) == expected, f"trial {trial}"
        finally:
            os.close(fd)


@pytest.mark.skipif(os.name != "posix", reason="a FIFO and O_NOFOLLOW")
def test_a_worklog_that_is_not_a_regular_file_is_refused_unwritten(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    os.symlink(fifo, tmp_path / worklog.WORKLOG)
    with pytest.raises(OSError):
        _append(tmp_path)
    (tmp_path / worklog.WORKLOG).unlink()
    os.mkfifo(tmp_path / worklog.WORKLOG)
    with pytest.raises(OSError):
        _append(tmp_path)


_WRITER = """
import sys
from pathlib import Path
from session_resume.storage import store, worklog
d, n = Path(sys.argv[1]), int(sys.argv[2])
s = store.Session(d, d)
for i in range(n):
    with store.locked(s):
        worklog.append(d, "note", ts="2026-03-03T10:00:00Z", session=sys.argv[3])
"""


@pytest.mark.skipif(os.name != "posix", reason="POSIX processes and locks")
def test_interleaved_writers_under_the_lock_never_repeat_a_seq(tmp_path: Path) -> None:
    """Processes appending under the session lock (as every writer does): seq 1..N, each once,
    in file order; nothing a process remembered could have been trusted."""
    writers, per = 4, 60
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), str(per), f"w{k}"])
        for k in range(writers)
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    assert _seqs(tmp_path) == list(range(1, writers * per + 1))
    events = (tmp_path / worklog.WORKLOG).read_bytes().splitlines()
    assert len({json.loads(e)["session"] for e in events}) == writers
    assert worklog.scan(tmp_path / worklog.WORKLOG) == []
    with store.locked(store.Session(tmp_path, tmp_path)):
        assert _append(tmp_path) == writers * per + 1


def test_a_crash_at_any_byte_of_an_append_loses_only_that_record(tmp_path: Path) -> None:
    """The file cut at every byte of its last record (a crash mid-write): the next append
    continues from the record before, and the one after from it."""
    whole = _line(1) + _line(2) + _line(3, pad=30)
    start = len(_line(1) + _line(2))
    for cut in range(start, len(whole) + 1):
        d = tmp_path / str(cut)
        d.mkdir()
        (d / worklog.WORKLOG).write_bytes(whole[:cut])
        expected = 3 if cut >= len(whole) - 1 else 2  # only the newline missing: whole
        assert _append(d) == expected + 1, cut
        assert _append(d) == expected + 2, cut
