"""hostile-1mb: one cold `session-resume` command per hostile input of about 1 MB, its wall
time against issue 18's goal ("1 MB of hostile input is answered in <= 1 s on this machine").

Every contender is one fresh process in its own scratch repository (a `.git` directory under
the benchmark's temporary directory), fed one hostile input of about 1,000,000 bytes (10 KB
under --smoke): duplicate keys, NaN members, a torn last worklog line, a workflow and a
pyproject.toml nested as deep as the bytes allow, a tracker worklog of non-JSON lines, a 2.0
state with tens of thousands of findings, a state listing tens of thousands of artifacts, a
todo list of tens of thousands of items. The value is the command's wall time in seconds,
measured around ``subprocess.run`` (output discarded), beside the bare interpreter's.

Each command's answer is checked once in setup: its exit status, a text its output must hold
(the expected code where there is one), and neither SR900 nor a traceback; anything else
aborts the benchmark. The timed runs must then exit as that check did. Commands that write
(import, sync-todos) get their scratch session restored before every run, untimed.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench_resume_worklog import _RESUME_NOW, _SESSION, _current_session_events
from bench_validate_cold import BARE
from bench_write_cold import prepare_session
from commandline import bench_env, process, tool
from runner import EXAMPLE, OPTIONS, ROOT, BenchAbort, Limit, Prepared, Run, benchmark
from states import STATE_FILE

from session_resume.importers.todos import MAX_ITEMS

GOAL_S = 1.0  # issue 18: 1 MB of hostile input answered in <= 1 s
_TRACKER = ROOT / "tests" / "fixtures" / "import" / "tracker" / "finished" / ".session"
_MIGRATE_2 = ROOT / "tests" / "fixtures" / "migrate" / "v2-test01.json"
_FORBIDDEN = ("SR900", "Traceback")  # an internal error is never an answer

DUP = "validate: duplicate keys"
NAN = "validate: NaN members"
TORN = "resume: torn last worklog line"
YAML = "validate --workflow: nested YAML"
TOML = "validate: nested pyproject.toml"
IMPORT = "import: non-JSON tracker worklog"
MIGRATE = "migrate --check: 2.0 findings"
RENDER = "render handoff: artifacts"
TODOS = "sync-todos: todo items"
CONTENDERS = (DUP, NAN, TORN, YAML, TOML, IMPORT, MIGRATE, RENDER, TODOS)


@dataclass
class Case:
    """One hostile command: what it runs, where, which exits and which text answer it."""

    name: str
    argv: list[str]
    cwd: Path
    codes: tuple[int, ...]  # the exit statuses that are a right answer
    expect: str | None  # a text the output must hold (the expected code), None: any
    size: int  # bytes of hostile input
    what: str  # the input, for the notes
    reset: Callable[[], None] | None = None  # untimed, before every run (commands that write)


# --- inputs -------------------------------------------------------------------------------


def fill(build: Callable[[int], bytes], size: int) -> bytes:
    """``build(n)`` for the n that makes it about ``size`` bytes; ``build``'s length must be
    linear in n (fixed-width items), so two probes give the n."""
    base = len(build(0))
    per_item = (len(build(100)) - base) / 100
    return build(max(1, round((size - base) / per_item)))


def compact(doc: object) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


def repo(tmpdir: Path, name: str) -> Path:
    """A scratch repository of its own for one contender."""
    root = tmpdir / name
    (root / ".git").mkdir(parents=True)
    return root


def example_state() -> dict:
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    doc.pop("$schema", None)  # its relative path points into the source tree
    return doc


def sr(*args: str | Path) -> list[str]:
    return [tool("session-resume"), *(str(a) for a in args)]


# --- the cases ----------------------------------------------------------------------------


def dup_keys(tmpdir: Path, size: int) -> Case:
    root = repo(tmpdir, "dup-keys")
    state = root / "agent-output" / "dup" / STATE_FILE
    state.parent.mkdir(parents=True)
    state.write_bytes(fill(lambda n: b"{" + b",".join([b'"k":1'] * n) + b"}", size))
    argv = sr("validate", state.relative_to(root), "--root", root)
    return Case(DUP, argv, root, (1,), "SR121", state.stat().st_size, 'a state {"k":1,"k":1,...}')


def nan_members(tmpdir: Path, size: int) -> Case:
    root = repo(tmpdir, "nan")
    state = root / "agent-output" / "nan" / STATE_FILE
    state.parent.mkdir(parents=True)

    def build(n: int) -> bytes:
        return b"{" + b",".join(b'"k%06d":NaN' % i for i in range(n)) + b"}"

    state.write_bytes(fill(build, size))
    argv = sr("validate", state.relative_to(root), "--root", root)
    what = 'a state {"k000000":NaN,"k000001":NaN,...}'
    return Case(NAN, argv, root, (1,), "SR122", state.stat().st_size, what)


def torn_line(tmpdir: Path, size: int) -> Case:
    """The bundled example session (step 2 in progress) whose worklog holds the events of
    that session and ends in a torn line of ``size`` bytes: no newline, not JSON."""
    root, sdir = prepare_session(tmpdir / "torn")
    (root / ".git").mkdir()
    head = b'{"v":1,"ts":"2026-11-20T14:40:00Z","seq":10,"session":"%s","event":"note",' % (
        _SESSION.encode()
    )
    head += b'"detail":{"text":"'
    torn = head + b"x" * (size - len(head))
    (sdir / "00-worklog.jsonl").write_bytes(b"".join(_current_session_events(1)) + torn)
    argv = sr("resume", sdir.relative_to(root), "--root", root, "--now", _RESUME_NOW)
    what = "a valid session's worklog: 9 events, then a torn last line (no newline, not JSON)"
    return Case(TORN, argv, root, (0,), "SR703", len(torn), what)


def nested_yaml(tmpdir: Path, size: int) -> Case:
    root, sdir = prepare_session(tmpdir / "yaml")
    (root / ".git").mkdir()
    wf = root / "deep.yaml"
    wf.write_bytes(fill(lambda n: b"a: " + b"[" * n + b"]" * n + b"\n", size))
    state = (sdir / STATE_FILE).relative_to(root)
    argv = sr("validate", "--workflow", wf.name, state, "--root", root)
    what = "a workflow `a: [[[...]]]` (refused before it is parsed)"
    return Case(YAML, argv, root, (2,), "SR400", wf.stat().st_size, what)


def nested_toml(tmpdir: Path, size: int) -> Case:
    root, _ = prepare_session(tmpdir / "toml")
    (root / ".git").mkdir()
    cfg = root / "pyproject.toml"
    head = b'[tool.session-resume]\nworkflow = "generic"\n[x]\na = '
    cfg.write_bytes(fill(lambda n: head + b"[" * n + b"]" * n + b"\n", size))
    what = "a pyproject.toml `[x] a = [[[...]]]` after a valid [tool.session-resume]"
    return Case(TOML, sr("validate"), root, (2,), "SR405", cfg.stat().st_size, what)


def tracker_import(tmpdir: Path, size: int) -> Case:
    """The finished tracker fixture with its worklog replaced by non-JSON lines. Any coded
    answer is right (exit 0, 1 or 2): the importer keeps such lines as notes (SR807) today and
    is to refuse a worklog with too many of them, writing nothing."""
    root = repo(tmpdir, "import")
    src = root / "tracker" / ".session"
    shutil.copytree(_TRACKER, src)
    worklog = src / "worklog.jsonl"
    worklog.write_bytes(fill(lambda n: b"x\n" * n, size))
    to = root / "agent-output" / "imported"
    argv = sr(
        "import",
        "session-tracker",
        src.relative_to(root),
        "--to",
        to.relative_to(root),
        "--root",
        root,
        "--now",
        "2026-03-03T00:00:00Z",
    )
    what = "a session-tracker worklog.jsonl of `x` lines (the finished fixture otherwise)"
    size = worklog.stat().st_size
    return Case(IMPORT, argv, root, (0, 1, 2), None, size, what, reset=lambda: _rmtree(to))


def migrate_findings(tmpdir: Path, size: int) -> Case:
    root = repo(tmpdir, "migrate")
    doc = json.loads(_MIGRATE_2.read_text(encoding="utf-8"))
    state = root / STATE_FILE

    def build(n: int) -> bytes:
        return compact({**doc, "open_findings": [f"f{i:012d}" for i in range(n)]})

    state.write_bytes(fill(build, size))
    count = len(json.loads(state.read_bytes())["open_findings"])
    argv = sr("migrate", "--check", ".", "--root", root, "--now", "2026-06-01T00:00:00Z")
    argv.append("--salvage")
    what = f"a 2.0 state (v2-test01) with {count:,} open_findings strings"
    return Case(MIGRATE, argv, root, (1,), "would migrate", state.stat().st_size, what)


def many_artifacts(tmpdir: Path, size: int) -> Case:
    """The example session with its complete step 1 listing artifacts; the handoff is
    written (replaced) by every run."""
    root, sdir = prepare_session(tmpdir / "render")
    (root / ".git").mkdir()
    doc = example_state()
    d = f"agent-output/{doc['project']}"

    def build(n: int) -> bytes:
        doc["steps"]["1"]["artifacts"] = [f"{d}/a{i:06d}.md" for i in range(n)]
        return compact(doc)

    state = sdir / STATE_FILE
    state.write_bytes(fill(build, size))
    count = len(json.loads(state.read_bytes())["steps"]["1"]["artifacts"])
    argv = sr("render", "handoff", sdir.relative_to(root), "--root", root, "--now", _RESUME_NOW)
    what = f"a 3.0 state (the example) whose complete step 1 lists {count:,} artifacts"
    return Case(RENDER, argv, root, (0,), "00-handoff.md", state.stat().st_size, what)


def todo_list(tmpdir: Path, size: int, env: dict[str, str]) -> Case:
    """A fresh generic session (made by `init`) and a TodoWrite list of new items: one write
    adds them all as steps. The session is restored before every run."""
    root = repo(tmpdir, "todos")
    now = "2026-03-03T00:00:00Z"
    init = sr("init", "demo", "--workflow", "generic", "--root", root, "--now", now)
    init += ["--session", _SESSION]
    check_case(Case("init", init, root, (0,), "initialised", 0, ""), env)
    sdir = root / "agent-output" / "demo"
    pristine = tmpdir / "todos-pristine"
    shutil.copytree(sdir, pristine)

    def reset() -> None:
        _rmtree(sdir)
        shutil.copytree(pristine, sdir)

    # The most items sync-todos accepts (more are refused, SR830), each padded so that the
    # list reaches the size: the slowest input of that size that is imported at all.
    n = min(MAX_ITEMS, max(1, size // 100))
    pad = max(0, size // n - len(compact([{"content": "task 000000 ", "status": "pending"}])))

    listing = root / "todos.json"
    listing.write_bytes(
        compact([{"content": f"task {i:06d} " + "x" * pad, "status": "pending"} for i in range(n)])
    )
    count = len(json.loads(listing.read_bytes()))
    argv = sr("sync-todos", sdir.relative_to(root), "--file", listing.name, "--root", root)
    argv += ["--now", "2026-03-03T01:00:00Z", "--session", _SESSION]
    what = f"a TodoWrite list of {count:,} new items into a fresh generic session"
    size = listing.stat().st_size
    return Case(TODOS, argv, root, (0,), "added step", size, what, reset=reset)


def _rmtree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


# --- checking and timing ------------------------------------------------------------------


def check_case(case: Case, env: dict[str, str]) -> tuple[int, list[str]]:
    """Run ``case`` once (untimed) and check its answer; its exit status and the codes its
    output names. Aborts on any other answer."""
    if case.reset is not None:
        case.reset()
    res = subprocess.run(
        case.argv,
        cwd=case.cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
    )
    out = (res.stdout + res.stderr).decode("utf-8", "replace")
    wrong = [f"exit {res.returncode}, not {' or '.join(map(str, case.codes))}"]
    if res.returncode in case.codes:
        wrong = [f"{bad} in the output" for bad in _FORBIDDEN if bad in out]
        if case.expect is not None and case.expect not in out:
            wrong.append(f"no {case.expect!r} in the output")
    if wrong:
        lines = out.splitlines()
        shown = "\n".join(lines[:15] + (["...", *lines[-10:]] if len(lines) > 25 else lines[15:]))
        raise BenchAbort(f"{case.name}: `{shlex.join(case.argv)}`: {'; '.join(wrong)}\n{shown}")
    return res.returncode, sorted(set(re.findall(r"\bSR\d{3}\b", out)))


def timed(argv: Sequence[str], cwd: Path, env: dict[str, str], code: int) -> Run:
    """A Run whose call returns the wall time of one run of ``argv`` (output discarded), which
    must exit ``code`` as it did in setup."""
    run = process(argv, cwd=cwd, env=env, ok_codes=(code,), shown=f"{shlex.join(argv)}  (in {cwd})")

    def call() -> float:
        start = time.perf_counter()
        run.call()
        return time.perf_counter() - start

    return Run(call, run.shown)


@benchmark(
    "hostile-1mb",
    description="wall time of one cold session-resume command per hostile input of about "
    "1 MB (10 KB under --smoke; issue 18): duplicate keys, NaN members, a torn last worklog "
    "line, a nested workflow YAML, a nested pyproject.toml, a non-JSON tracker worklog, "
    "many findings, many artifacts, many todo items; beside the bare interpreter",
    contenders=(*CONTENDERS, BARE),
    anchor=BARE,
    targets=tuple(Limit(c, GOAL_S) for c in CONTENDERS),
    unit="s",
    runs=5,
    quick_runs=3,
    warmup=0,  # setup ran every exact command once to check its answer
)
def hostile_1mb(tmpdir: Path) -> Prepared:
    env = bench_env(tmpdir)
    size = 10_000 if OPTIONS.smoke else 1_000_000
    builders: list[Callable[[Path, int], Case]] = [
        dup_keys,
        nan_members,
        torn_line,
        nested_yaml,
        nested_toml,
        tracker_import,
        migrate_findings,
        many_artifacts,
        lambda t, s: todo_list(t, s, env),
    ]
    runs: dict[str, Run] = {}
    notes: list[str] = []
    for build in builders:
        case = build(tmpdir, size)
        code, codes = check_case(case, env)
        run = timed(case.argv, case.cwd, env, code)
        runs[case.name] = Run(run.call, run.shown, before=case.reset)
        answered = f"exit {code}" + (f", {' '.join(codes[:6])}" if codes else ", no code")
        notes.append(f"{case.name}: {case.size:,} bytes, {case.what}; answers {answered}")
    runs[BARE] = timed([sys.executable, "-I", "-c", "pass"], tmpdir, env, 0)
    return Prepared(runs, notes=notes)
