"""Hostile session directories (issue 18): nothing written or read outside the repository,
every failure coded.

Every link planted here points at a decoy tree inside the test's temp directory (never at a
real system file); the decoy is hashed before and after each command.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import signal
import socket
import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from session_resume.cli.main import main
from session_resume.core.lease import SENTINEL, lease_state
from session_resume.core.timeutil import format_ts, parse_ts
from session_resume.storage import store, worklog

from conftest import apex_state, dump, run_cli

# Test tier (README "Test tiers"): many CLI processes.
pytestmark = pytest.mark.slow

NOW = "2026-03-03T12:00:00Z"
CANARY = "decoy-canary-7f3a"
HANDOFF = "00-handoff.md"
SESSION_FILES = [store.STATE, store.BAK, store.LOCK, worklog.WORKLOG, SENTINEL, HANDOFF]
KINDS = ["dir", "fifo", "socket", "dangling", "link_out", "readonly"]


# --- the scratch repository and its decoy ---------------------------------------------------


def make_repo(top: Path) -> tuple[Path, Path, Path]:
    """``top``/repo (a ``.git`` marks the root) with a valid session; ``top``/decoy outside it
    holding files with the canary, a copy of every session file name among them."""
    repo = top / "repo"
    d = repo / "agent-output" / "demo"
    d.mkdir(parents=True)
    (repo / ".git").mkdir()
    (d / store.STATE).write_bytes(dump(apex_state()))
    decoy = top / "decoy"
    decoy.mkdir()
    for name in [*SESSION_FILES, "file.txt"]:
        (decoy / name).write_text(f'{{"canary": "{CANARY}"}}\n{CANARY}\n')
    (decoy / "sub").mkdir()
    return repo, d, decoy


def tree_hash(top: Path) -> dict[str, str]:
    """Every entry under ``top``: its kind, mode and (files) content hash."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        for n in sorted(dirnames + filenames):
            p = Path(dirpath) / n
            st = os.lstat(p)
            digest = ""
            if stat.S_ISREG(st.st_mode):
                digest = hashlib.sha256(p.read_bytes()).hexdigest()
            out[str(p.relative_to(top))] = (
                f"{stat.S_IFMT(st.st_mode)}:{st.st_mode & 0o777}:{digest}"
            )
    return out


def plant(d: Path, name: str, kind: str, decoy: Path) -> None:
    p = d / name
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p)
    elif os.path.lexists(p):
        p.unlink()
    if kind == "dir":
        p.mkdir()
        (p / "inner").write_bytes(b"{}")
    elif kind == "fifo":
        os.mkfifo(p)
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        cwd = os.getcwd()
        os.chdir(d)  # a relative name: the temp path may be over the AF_UNIX limit
        try:
            s.bind(name)
        finally:
            os.chdir(cwd)
            s.close()
    elif kind == "dangling":
        os.symlink(d / "gone", p)
    elif kind == "link_out":
        os.symlink(decoy / name, p)
    elif kind == "readonly":
        p.write_bytes(dump(apex_state()) if name in (store.STATE, store.BAK) else b"{}\n")
        p.chmod(0o444)


@contextlib.contextmanager
def alarm(seconds: int = 20) -> Iterator[None]:
    def fire(*_: object) -> None:
        raise TimeoutError("the command hung (a FIFO opened for reading?)")

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def cli(*args: str) -> tuple[int, str]:
    """The CLI in this process (main(), exactly the console script's entry): exit code and
    everything it printed."""
    out, err = io.StringIO(), io.StringIO()
    with alarm(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue() + err.getvalue()


def commands(repo: Path, d: Path) -> dict[str, list[str]]:
    sd, root = ["--session-dir", str(d)], ["--root", str(repo)]
    t = ["--now", NOW]
    return {
        "validate": ["validate", str(d), *t, "--format", "json"],
        "resume": ["resume", str(d), *t, *root],
        "report": ["report", str(d), *t, *root, "--format", "json"],
        "budget": ["budget", "2", *sd, *root],
        "checkpoint": ["checkpoint", "2", "phase_3_cost", *sd, *root, *t, "--session", "s1"],
        "session start": ["session", "start", *sd, *root, *t, "--session", "s1"],
        "ping": ["ping", *sd, *root, *t, "--session", "s1"],
        "session end": ["session", "end", *sd, *root, *t, "--session", "s1"],
        "render handoff": ["render", "handoff", str(d), *root, *t],
        "recover": ["recover", str(d), *root, *t],
        "migrate --check": ["migrate", "--check", str(d), *root, *t],
        "archive": ["archive", str(d), *root, *t],
    }


# --- the matrix -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", SESSION_FILES)
@pytest.mark.parametrize("kind", KINDS)
def test_every_command_over_a_hostile_session_file(tmp_path: Path, name: str, kind: str) -> None:
    """Every command, every session file replaced by something hostile: no exit 3, no
    traceback, the decoy outside the repository neither changed nor read into output."""
    repo, d, decoy = make_repo(tmp_path)
    for label, argv in commands(repo, d).items():
        plant(d, name, kind, decoy)
        before = tree_hash(decoy)
        code, output = cli(*argv)
        where = f"{label} with {name} a {kind}: exit {code}\n{output}"
        assert code in (0, 1, 2), where
        assert "Traceback" not in output and "SR900" not in output, where
        assert CANARY not in output, where
        assert tree_hash(decoy) == before, where


def test_every_command_in_a_read_only_session_directory(tmp_path: Path) -> None:
    repo, d, decoy = make_repo(tmp_path)
    (d / worklog.WORKLOG).write_bytes(b"")
    d.chmod(0o555)
    try:
        for label, argv in commands(repo, d).items():
            before = tree_hash(decoy)
            code, output = cli(*argv)
            where = f"{label}: exit {code}\n{output}"
            assert code in (0, 1, 2) and "SR900" not in output, where
            assert tree_hash(decoy) == before, where
    finally:
        d.chmod(0o755)


@pytest.mark.parametrize("label", ["session start", "ping", "session end", "checkpoint"])
def test_a_session_directory_that_is_a_link_out_of_the_root_is_refused(
    tmp_path: Path, label: str
) -> None:
    repo, d, decoy = make_repo(tmp_path)
    (decoy / "sub" / store.STATE).write_bytes(dump(apex_state()))
    os.rename(d, tmp_path / "moved")
    os.symlink(decoy / "sub", d)
    before = tree_hash(decoy)
    code, output = cli(*commands(repo, d)[label])
    assert code in (1, 2) and "SR105" in output, output
    assert tree_hash(decoy) == before


# --- the lock -------------------------------------------------------------------------------


@pytest.mark.parametrize("label", ["session start", "ping", "session end", "checkpoint"])
def test_a_lock_link_never_truncates_its_target(tmp_path: Path, label: str) -> None:
    """Was: `ping` (filelock 3.13, O_TRUNC through the link) left the target 0 bytes."""
    repo, d, decoy = make_repo(tmp_path)
    cli(*commands(repo, d)["session start"])  # a lease, so ping/end have work to do
    (d / store.LOCK).unlink()
    os.symlink(decoy / store.LOCK, d / store.LOCK)
    before = tree_hash(decoy)
    code, output = cli(*commands(repo, d)[label])
    assert code in (1, 2) and "SR105" in output, output
    assert tree_hash(decoy) == before


@pytest.mark.parametrize("name", [store.LOCK, worklog.WORKLOG])
@pytest.mark.parametrize("label", ["checkpoint", "session start", "archive", "render handoff"])
def test_a_hard_linked_file_written_in_place_is_refused(
    tmp_path: Path, name: str, label: str
) -> None:
    """Issue 25, finding 6: a file written in place (the lock, the worklog) with a second name
    outside the repository is refused (SR107) before anything is written: the outside file
    never gains a record, is never truncated nor chmod-ed, and the state is unchanged."""
    repo, d, decoy = make_repo(tmp_path)
    os.link(decoy / "file.txt", d / name)
    (decoy / "file.txt").chmod(0o600)
    before, state = tree_hash(decoy), (d / store.STATE).read_bytes()
    code, output = cli(*commands(repo, d)[label])
    if label == "render handoff":  # writes neither file: nothing to refuse
        assert code == 0, output
    else:
        assert code in (1, 2) and "SR107" in output, output
        assert (d / store.STATE).read_bytes() == state
    assert tree_hash(decoy) == before


def test_the_lock_excludes_a_second_holder(tmp_path: Path) -> None:
    from session_resume.storage.held import HeldDir

    with HeldDir.at(tmp_path) as h, h.lock("x.lock", 1.0):
        import subprocess
        import sys

        code = (
            "import sys; from session_resume.storage.held import HeldDir, LockBusy\n"
            "try:\n"
            "    with HeldDir.at(sys.argv[1]) as h, h.lock('x.lock', 0.2): sys.exit(0)\n"
            "except LockBusy: sys.exit(7)\n"
        )
        held = subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=False)
        assert held.returncode == 7
    free = subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=False)
    assert free.returncode == 0


# --- writes that must not leave the repository ----------------------------------------------


def test_render_handoff_never_writes_through_a_linked_handoff(tmp_path: Path) -> None:
    repo, d, decoy = make_repo(tmp_path)
    os.symlink(decoy / "sub", d / HANDOFF)  # a link to a directory outside
    before = tree_hash(decoy)
    code, output = cli(*commands(repo, d)["render handoff"])
    assert code == 1 and "SR105" in output, output
    assert tree_hash(decoy) == before


@pytest.mark.parametrize("pattern", ["../x-{project}", "/tmp/x-{project}", "a/../../{project}"])
def test_a_workflow_session_dir_cannot_leave_the_repository(tmp_path: Path, pattern: str) -> None:
    from session_resume.core.workflow import WorkflowError, load_workflow

    wf = (Path(__file__).parents[1] / "schema" / "workflows" / "generic.yaml").read_text()
    assert "session_dir:" in wf
    lines = [
        f"session_dir: {json.dumps(pattern)}" if ln.startswith("session_dir:") else ln
        for ln in wf.splitlines()
    ]
    path = tmp_path / "wf.yaml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(WorkflowError) as exc:
        load_workflow(str(path))
    assert any(x.pointer == "/session_dir" for x in exc.value.diagnostics)


# --- time: ASCII digits, future heartbeats ----------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "2026-03-02T10:15:00Z\n",
        "٢٠٢٦-03-02T10:15:00Z",
        "2026-03-02T10:15:00.٣Z",
        "2026-03-02T10:15:00Z ",
    ],
)
def test_timestamps_accept_ascii_digits_only(text: str) -> None:
    assert parse_ts(text) is None
    assert parse_ts("2026-03-02T10:15:00.3Z") is not None  # the ASCII form is fine


def test_a_heartbeat_in_the_future_is_not_live() -> None:
    now = datetime(2026, 3, 3, 12, 0, tzinfo=UTC)
    lease = {"session": "s", "heartbeat": "2026-03-03T12:04:00Z"}  # within the skew
    assert lease_state(lease, now=now, ended=False, owner_alive=None).state == "live"
    lease = {"session": "s", "heartbeat": "2099-01-01T00:00:00Z"}
    assert lease_state(lease, now=now, ended=False, owner_alive=None).state == "stale"


# --- the worklog ----------------------------------------------------------------------------


@pytest.mark.parametrize("size", [70 * 1024, 300 * 1024])
def test_seq_continues_after_a_long_record(tmp_path: Path, size: int) -> None:
    """Was: a record longer than the 64 KiB tail window restarted seq at 1 (SR504)."""
    worklog.append(tmp_path, "note", ts=NOW, session="s")
    worklog.append(tmp_path, "note", ts=NOW, session="s", detail={"text": "x" * size})
    rec = worklog.append(tmp_path, "note", ts=NOW, session="s")
    assert rec["seq"] == 3
    assert worklog.scan(tmp_path / worklog.WORKLOG) == []


# --- text output: no terminal or CI-log injection -------------------------------------------

HOSTILE = "x\x1b[2J\x9b31m\u202egnp.exe\n::error file=a::forged\r"


def test_text_output_escapes_file_content_in_every_command(tmp_path: Path) -> None:
    """Step names, paths, lease fields and worklog events carry ESC, C1, a bidi override and
    a newline that would start a forged `::error` line: no command's text output holds a
    raw control character or a line starting with `:`."""
    repo, d, _ = make_repo(tmp_path)
    doc = apex_state()
    doc["steps"]["2"]["name"] = "Arch" + HOSTILE
    doc["steps"]["2"]["sub_step"] = "phase_3_cost"
    doc["steps"]["1"]["artifacts"].append("agent-output/demo/" + HOSTILE)
    (d / store.STATE).write_bytes(dump(doc))
    event = {"v": 1, "ts": NOW, "seq": 1, "session": HOSTILE, "event": "note", "step": HOSTILE}
    (d / worklog.WORKLOG).write_text(json.dumps(event) + "\n")
    lease = {"v": 1, "session": HOSTILE, "owner": HOSTILE, "host": HOSTILE, "pid": None}
    lease.update(started=NOW, heartbeat="2026-03-03T09:00:00Z")
    (d / SENTINEL).write_text(json.dumps(lease))
    runs = {
        "report": ["report", str(d), "--now", NOW, "--root", str(repo)],
        "validate": ["validate", str(d), "--now", NOW],
    }  # the readers first: archive moves the files away
    runs.update((k, v) for k, v in commands(repo, d).items() if "json" not in v)
    seen = 0
    for label, argv in runs.items():
        code, output = cli(*argv)
        assert code in (0, 1, 2), f"{label}: {output}"
        for line in output.splitlines():
            assert not line.lstrip().startswith(":"), f"{label}: {line!r}"
        assert not any(ch in output for ch in "\x1b\x9b\u202e\r"), f"{label}: {output!r}"
        seen += "gnp.exe" in output
    assert seen >= 4  # the hostile values were printed (escaped), not merely absent


# --- numbers Python refuses to convert ------------------------------------------------------


def test_a_step_key_of_5000_digits_is_no_internal_error(tmp_path: Path) -> None:
    """Was SR900 (int() refuses over 4,300 digits) in validate, resume, report, render and
    the writers."""
    repo, d, _ = make_repo(tmp_path)
    doc = apex_state()
    doc["workflow"] = "generic"
    doc["steps"]["9" * 5000] = doc["steps"].pop("7")
    (d / store.STATE).write_bytes(dump(doc))
    runs = commands(repo, d)
    runs["validate sarif"] = ["validate", str(d), "--now", NOW, "--format", "sarif"]
    for label, argv in runs.items():
        code, output = cli(*argv)
        assert code in (0, 1, 2) and "SR900" not in output, f"{label}: {output[:500]}"


def test_sync_todos_ids_of_5000_digits_and_2000_items(tmp_path: Path) -> None:
    repo, d, _ = make_repo(tmp_path)
    items = [{"id": "7" * 5000, "subject": "long id", "status": "pending"}]
    items += [{"id": str(i), "subject": f"task {i}", "status": "pending"} for i in range(2000)]
    listing = tmp_path / "todos.json"
    listing.write_text(json.dumps(items))
    (d / store.STATE).unlink()
    assert cli("init", "demo", "--workflow", "generic", "--root", str(repo), "--now", NOW)[0] == 0
    code, output = cli(
        "sync-todos", str(d), "--file", str(listing), "--root", str(repo), "--now", NOW
    )
    assert code == 0 and "SR900" not in output, output[:500]
    assert len(store.load(d, root=repo).document["steps"]) == 2001  # type: ignore[index]


def test_a_todo_list_of_more_than_10000_items_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    """1 MB of todo items (22,000) made a 4 MB state and took seconds (issue 18): SR830."""
    repo, d, _ = make_repo(tmp_path)
    (d / store.STATE).unlink()
    assert cli("init", "demo", "--workflow", "generic", "--root", str(repo), "--now", NOW)[0] == 0
    listing = tmp_path / "todos.json"
    listing.write_text(
        json.dumps([{"content": f"task {i}", "status": "pending"} for i in range(10_001)])
    )
    before = tree_hash(repo)
    code, output = cli(
        "sync-todos", str(d), "--file", str(listing), "--root", str(repo), "--now", NOW
    )
    assert code in (1, 2) and "SR830" in output and "10,001 items" in output, output[:500]
    assert tree_hash(repo) == before


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_lone_surrogates_in_duplicate_and_non_finite_keys(tmp_path: Path, fmt: str) -> None:
    """Was SR900 (UnicodeEncodeError printing the key) with --format json|sarif|github."""
    repo, d, _ = make_repo(tmp_path)
    text = json.dumps(apex_state())[:-1] + ', "\\ud800x": 1, "\\ud800x": 2, "\\udc00n": NaN}'
    (d / store.STATE).write_text(text)
    # a separate process: the real stdout, which must encode what is printed
    proc = run_cli("validate", str(d), "--now", NOW, "--format", fmt)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "SR900" not in output, output
    assert "SR121" in output and "SR122" in output
    if fmt in ("json", "sarif"):
        json.loads(proc.stdout)


def test_an_artifact_name_over_255_bytes_is_missing_not_an_error(tmp_path: Path) -> None:
    """Was SR900 (ENAMETOOLONG out of realpath) with --check-artifacts."""
    repo, d, _ = make_repo(tmp_path)
    doc = apex_state()
    doc["steps"]["1"]["artifacts"].append("agent-output/demo/" + "a" * 300 + ".md")
    (d / store.STATE).write_bytes(dump(doc))
    code, output = cli("validate", str(d), "--now", NOW, "--check-artifacts")
    assert code == 1 and "SR900" not in output and "SR314" in output, output


def test_render_skill_of_a_title_with_a_lone_surrogate_is_refused(tmp_path: Path) -> None:
    """Was SR900 (UnicodeEncodeError writing SKILL.md)."""
    wf = (Path(__file__).parents[1] / "schema" / "workflows" / "generic.yaml").read_text()
    lines = [
        'title: "Bad \\ud800 title"' if ln.startswith("title:") else ln for ln in wf.splitlines()
    ]
    path = tmp_path / "wf.yaml"
    path.write_text("\n".join(lines) + "\n")
    code, output = cli("render", "skill", "--workflow", str(path), "--out", str(tmp_path / "o"))
    assert code == 2 and "SR400" in output and "SR900" not in output, output
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


# --- importers never copy content from links out of their source ----------------------------


@pytest.mark.parametrize("name", ["worklog.jsonl", "state.json"])
def test_tracker_import_never_reads_a_link_out_of_its_source(tmp_path: Path, name: str) -> None:
    """Was: a linked worklog.jsonl or state.json was followed and its content landed in the
    new worklog (detail.unparsed) and the state's x-legacy."""
    repo, _, decoy = make_repo(tmp_path)
    src = repo / "tracker"
    fixtures = Path(__file__).parent / "fixtures" / "import" / "tracker" / "finished" / ".session"
    shutil.copytree(fixtures, src)
    (decoy / name).write_text(f'{{"canary": "{CANARY}"}}\n{CANARY}\n')
    if (src / name).exists():
        (src / name).unlink()
    os.symlink(decoy / name, src / name)
    out = repo / "agent-output" / "imported"
    code, output = cli("import", "session-tracker", str(src), "--to", str(out), "--root", str(repo))
    assert code in (0, 1, 2) and "SR900" not in output, output
    assert CANARY not in output
    for p in out.rglob("*") if out.exists() else []:
        if p.is_file():
            assert CANARY not in p.read_text(errors="replace"), p


@pytest.mark.parametrize("shape", ["array", "inline_table"])
@pytest.mark.parametrize("command", ["validate", "resume", "init"])
def test_a_pyproject_nested_20000_deep_is_refused(tmp_path: Path, shape: str, command: str) -> None:
    """Was SR900: tomllib recursed once per level (a RecursionError)."""
    repo, d, _ = make_repo(tmp_path)
    n = 20_000
    value = "[" * n + "]" * n if shape == "array" else "{b=" * n + "1" + "}" * n
    (repo / "pyproject.toml").write_text(
        f'[tool.session-resume]\nworkflow = "generic"\n\n[x]\na = {value}\n'
    )
    assert len((repo / "pyproject.toml").read_bytes()) < 100_000
    before = tree_hash(repo)
    args = {
        "validate": ["validate", str(d)],
        "resume": ["resume", str(d), "--now", NOW],
        "init": ["init", "other", "--now", NOW],
    }[command]
    proc = run_cli(*args, cwd=repo)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, output
    assert "SR405" in output and "deeper than 64" in output and "SR900" not in output, output
    assert tree_hash(repo) == before  # nothing written


# --- item 10's smaller cases, through the real CLI ------------------------------------------


@pytest.mark.parametrize(
    "now",
    [
        "0001-01-01T00:00:00Z",
        "0999-06-01T00:00:00Z",
        "1969-12-31T23:59:59Z",
        "0001-01-01T00:00:00+01:00",
        "9999-12-31T23:59:59-01:00",
    ],
)
def test_init_with_a_now_out_of_range_writes_nothing(tmp_path: Path, now: str) -> None:
    """Was: `init --now 0001-…` refused (SR161) but left a lease whose heartbeat `1-01-01…`
    (strftime's year) could not be parsed; an offset past the end of time was SR900."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    proc = run_cli("init", "demo", "--now", now, cwd=repo)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "--now" in proc.stderr and "1970-01-01T00:00:00Z" in proc.stderr, proc.stderr
    assert "SR900" not in proc.stderr
    assert not (repo / "agent-output").exists()
    assert format_ts(datetime(1, 1, 1, tzinfo=UTC)) == "0001-01-01T00:00:00Z"


def _ended_session(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose session has a state and no lease (its session ended)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    assert run_cli("init", "demo", "--now", NOW, cwd=repo).returncode == 0
    d = repo / "agent-output" / "demo"
    assert run_cli("session", "end", "--session-dir", str(d), "--now", NOW).returncode == 0
    assert not (d / SENTINEL).exists()
    return repo, d


@pytest.mark.parametrize("owner", ["\udcff", "a\udcffb", "a\x1bb", "line\nbreak"])
def test_an_owner_that_is_not_text_is_refused(tmp_path: Path, owner: str) -> None:
    """Was: `session start --owner $'\\xff'` (argv bytes that are not UTF-8 arrive as lone
    surrogates) ended in SR900 or wrote a lease the tool then called unreadable."""
    _, d = _ended_session(tmp_path)
    before = tree_hash(d)
    # subprocess passes the str argument as the bytes os.fsencode gives it: b"\xff"
    proc = run_cli("session", "start", "--session-dir", str(d), "--owner", owner, "--now", NOW)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "SR182" in proc.stderr and "SR900" not in proc.stderr, proc.stderr
    assert tree_hash(d) == before  # no lease, no worklog line


def test_a_user_name_that_is_not_text_is_refused_by_a_write(tmp_path: Path) -> None:
    """The implicit lease of a write takes its owner from $USER: the same check."""
    _, d = _ended_session(tmp_path)
    before = tree_hash(d)
    env = {"USER": "\udcff"}
    proc = run_cli("decide", "region", "x", "--session-dir", str(d), "--now", NOW, env=env)
    assert proc.returncode == 2 and "SR182" in proc.stderr, proc.stdout + proc.stderr
    assert tree_hash(d) == before


def test_a_refused_write_takes_no_lease(tmp_path: Path) -> None:
    """Was: a write refused with SR161 (here: the clock is behind a step's start) kept the
    implicit lease it had created; then it created one, logged its start and ended it again.
    Every check that can refuse a write now comes before the lease (docs/spec.md §7): the
    refused write changes no file at all."""
    _, d = _ended_session(tmp_path)
    assert run_cli("start", "1", "--session-dir", str(d), "--now", NOW).returncode == 0
    assert run_cli("session", "end", "--session-dir", str(d), "--now", NOW).returncode == 0
    before = tree_hash(d)
    earlier = "2026-01-01T00:00:00Z"
    proc = run_cli("decide", "region", "x", "--session-dir", str(d), "--now", earlier)
    assert proc.returncode == 1 and "SR161" in proc.stderr, proc.stdout + proc.stderr
    assert not os.path.lexists(d / SENTINEL)
    assert tree_hash(d) == before  # no lease, no session_start, no session_end
    # a lease the refused write did not create stays
    started = run_cli("session", "start", "--session-dir", str(d), "--now", earlier)
    assert started.returncode == 0
    lease = (d / SENTINEL).read_bytes()
    sid = started.stdout.strip()  # its own session: a write naming none is refused (SR511)
    proc = run_cli(
        "decide", "region", "x", "--session-dir", str(d), "--now", earlier, "--session", sid
    )
    assert proc.returncode == 1 and "SR161" in proc.stderr
    assert (d / SENTINEL).read_bytes() == lease


@pytest.mark.parametrize("kind", ["fifo", "dir"])
def test_recover_never_calls_a_state_it_cannot_read_readable(tmp_path: Path, kind: str) -> None:
    """Was: recover said "the state file is readable; nothing to recover" for a state it
    could not read. Root reads a mode-000 file, so a FIFO and a directory stand in for it
    here (the next test uses mode 000 where it means something)."""
    repo, d, _ = make_repo(tmp_path)
    (d / store.STATE).unlink()
    if kind == "fifo":
        os.mkfifo(d / store.STATE)
    else:
        (d / store.STATE).mkdir()
    before = tree_hash(d)
    proc = run_cli("recover", str(d), "--root", str(repo), "--now", NOW, timeout=20)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert "readable" not in output and ("SR102" in output or "SR101" in output), output
    assert tree_hash(d) == before


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="running as root, which ignores file modes: a chmod 000 state stays readable",
)
def test_recover_of_a_mode_000_state_says_it_cannot_read_it(tmp_path: Path) -> None:
    repo, d, _ = make_repo(tmp_path)
    (d / store.STATE).chmod(0)
    try:
        proc = run_cli("recover", str(d), "--root", str(repo), "--now", NOW)
        output = proc.stdout + proc.stderr
        assert proc.returncode == 1 and "SR104" in output and "readable" not in output, output
        assert (d / store.STATE).stat().st_mode & 0o777 == 0
    finally:
        (d / store.STATE).chmod(0o644)


def test_bidi_controls_become_spaces_in_the_handoff(tmp_path: Path) -> None:
    """docs/security.md said U+202E was kept in the handoff; `md_inline` makes every bidi
    control a space (docs/spec.md §3.1: a value stays literal text on one line)."""
    repo, d, _ = make_repo(tmp_path)
    doc = apex_state()
    bidi = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
    doc["decisions"]["region"] = "east\u202eexe.gnp"
    doc["open_findings"] = [f"must_fix: a{bidi}b"]
    (d / store.STATE).write_bytes(dump(doc))
    proc = run_cli("render", "handoff", str(d), "--root", str(repo), "--now", NOW)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (d / HANDOFF).read_text(encoding="utf-8")
    assert not any(ch in text for ch in bidi), ascii(text)
    assert "east exe.gnp" in text


# --- one root, whichever way a session is named ---------------------------------------------
#
# The repository root is found from the path as the caller gave it, before any link is
# followed: a session directory that is a link out of the repository, named by --project, by
# --session-dir (absolute, or relative from where the user stands) or by a positional DIR,
# is refused by every writer, and the folder the link leads to is left as it was. (Found from
# the link's target instead, the target became its own "repository" and was written.)

V2_STATE = Path(__file__).parent / "fixtures" / "migrate" / "v2-test01.json"
DOTAGENT = Path(__file__).parent / "fixtures" / "import" / "dotagent" / "completed" / "memory"

# (where the command runs, relative to the repository; the arguments that name the session)
NAMINGS: dict[str, tuple[str, list[str]]] = {
    "--project": (".", ["--project", "demo"]),
    "--session-dir absolute": (".", ["--session-dir", "{abs}"]),
    "--session-dir from agent-output": ("agent-output", ["--session-dir", "demo"]),
    "DIR relative": (".", ["agent-output/demo"]),
    "DIR absolute": (".", ["{abs}"]),
    "DIR from agent-output": ("agent-output", ["demo"]),
}
# each writer, and which naming forms it takes (a DIR, or --session-dir and --project)
WRITERS: dict[str, tuple[list[str], str]] = {
    "decide": (["decide", "region", "eu", "--session", "s1"], "option"),
    "session start": (["session", "start", "--session", "s1"], "option"),
    "session end": (["session", "end", "--session", "s1"], "option"),
    "ping": (["ping", "--session", "s1"], "option"),
    "checkpoint": (["checkpoint", "2", "phase_3_cost", "--session", "s1"], "option"),
    "render handoff": (["render", "handoff"], "dir"),
    "archive": (["archive"], "dir"),
    "migrate": (["migrate"], "dir"),
    "recover": (["recover"], "dir"),
}


def _naming_cases() -> list[tuple[str, str]]:
    out = []
    for writer, (_, takes) in WRITERS.items():
        for naming in NAMINGS:
            is_dir = naming.startswith("DIR")
            if naming == "--project" or is_dir == (takes == "dir"):
                out.append((writer, naming))
    return out


def _linked_session(tmp_path: Path, state: bytes) -> tuple[Path, Path, Path]:
    """The repository whose agent-output/demo is a link to decoy/sub, which holds ``state``
    (and the other session files a writer would touch)."""
    repo, d, decoy = make_repo(tmp_path)
    shutil.rmtree(d)
    (decoy / "sub" / store.STATE).write_bytes(state)
    os.symlink(decoy / "sub", d)
    return repo, d, decoy


@pytest.mark.parametrize(("writer", "naming"), _naming_cases())
def test_a_linked_session_is_refused_whichever_way_it_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writer: str, naming: str
) -> None:
    state = V2_STATE.read_bytes() if writer == "migrate" else dump(apex_state())
    repo, d, decoy = _linked_session(tmp_path, state)
    where, names = NAMINGS[naming]
    names = [n.replace("{abs}", str(d)) for n in names]
    if writer == "render handoff" and naming == "--project":
        names = ["--project", "demo"]
    before = tree_hash(decoy)
    monkeypatch.chdir(repo / where)
    args, _ = WRITERS[writer]
    code, output = cli(*args, *names, "--now", NOW)
    assert tree_hash(decoy) == before, output
    assert code != 0 and "SR105" in output, output


@pytest.mark.parametrize("naming", ["--project", "DIR relative", "DIR absolute"])
def test_init_fresh_and_import_force_never_archive_through_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, naming: str
) -> None:
    repo, d, decoy = _linked_session(tmp_path, dump(apex_state()))
    before = tree_hash(decoy)
    monkeypatch.chdir(repo)
    target = {"--project": [], "DIR relative": ["--session-dir", "agent-output/demo"]}.get(
        naming, ["--session-dir", str(d)]
    )
    code, output = cli("init", "demo", "--fresh", *target, "--now", NOW, "--session", "s1")
    assert tree_hash(decoy) == before, output
    assert code != 0 and "SR105" in output, output
    to = "agent-output/demo" if naming != "DIR absolute" else str(d)
    code, output = cli("import", "dotagent", str(DOTAGENT), "--to", to, "--force", "--now", NOW)
    assert tree_hash(decoy) == before, output
    assert code != 0 and "SR105" in output, output


HOOK_FIXTURES = Path(__file__).parent / "fixtures" / "hooks" / "claude"


@pytest.mark.parametrize(
    ("event", "where"),
    [(e, w) for e in ("session-start", "pre-compact", "stop") for w in (".", "agent-output")],
)
def test_hooks_never_write_through_a_linked_session(tmp_path: Path, event: str, where: str) -> None:
    """A host's hook, run from the repository or below it, finds the repository the session
    is named in; a session directory linked out of it is not written through."""
    repo, d, decoy = _linked_session(tmp_path, dump(apex_state()))
    before = tree_hash(decoy)
    cwd = repo / where
    text = (HOOK_FIXTURES / f"{event}.json").read_text(encoding="utf-8")
    data = text.replace("{REPO}", str(cwd)).replace("{SESSION_DIR}", str(d)).encode()
    res = run_cli("hook", event, input=data, cwd=cwd)
    assert res.returncode == 0, res.stderr
    assert tree_hash(decoy) == before, res.stdout
    assert CANARY not in res.stdout
