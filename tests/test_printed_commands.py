"""Every message tells you what to do, and the command it names runs as printed (issue 27,
must-show 1 and 2).

Over the conformance suite's states and a set of CLI scenarios (fresh repository,
subdirectory, outside the repository, a v2 file, salvage, corrupt, missing state, write
refusals), every command the tool prints is collected: from messages, hints, ``run:`` lines
and the JSON ``commands`` (strings, or objects' ``run``). Each is parsed by the tool's own
parser as it would be run (a dry run: argparse only) and must not be a usage error; its
session must resolve from the directory the user ran the original command in; and it keeps
the options that made the original call succeed (``--salvage``, ``--project``, ``--root``).
Every diagnostic's hint must not contradict its message: no option the command lacks, no
fix for another field, no status other than the one the value meant.

The CLI entry point runs in-process (hundreds of calls); the subprocess tests elsewhere cover
the installed command.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from session_resume.cli.commands.suggest import PLACEHOLDERS, _subparser
from session_resume.cli.main import main

# Test tier (README "Test tiers"): many CLI processes.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
NOW = ["--now", "2026-11-22T12:00:00Z"]
FIXTURES = REPO / "tests" / "fixtures" / "migrate"
SUGGESTED = re.compile(r"`(session-resume [^`\n]+)`")
OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z-]+)")
# words a printed command may hold for the user to fill in
FILL_IN = PLACEHOLDERS | {"STEP", "TITLE", "TEXT", "PROJECT", "KEY", "VALUE", "SUB_STEP"}


class Printed:
    """One thing the tool printed, with the call that printed it."""

    def __init__(self, argv: list[str], cwd: Path, code: str, message: str, hint: str) -> None:
        self.argv, self.cwd, self.code, self.message, self.hint = argv, cwd, code, message, hint

    def __repr__(self) -> str:
        return f"{shlex.join(self.argv)} (in {self.cwd}): {self.code} {self.message} | {self.hint}"


def _run(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def _diagnostics(doc: Any) -> Iterator[dict[str, Any]]:
    """Every ``{code, message, hint}`` object anywhere in a JSON answer."""
    if isinstance(doc, dict):
        if isinstance(doc.get("code"), str) and "message" in doc:
            yield doc
        for v in doc.values():
            yield from _diagnostics(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _diagnostics(v)


def _commands(doc: Any) -> Iterator[str]:
    """The JSON ``commands`` (strings or objects' ``run``), anywhere in an answer."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k == "commands" and isinstance(v, list):
                for c in v:
                    run = c.get("run") if isinstance(c, dict) else c
                    if isinstance(run, str):
                        yield run
            else:
                yield from _commands(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _commands(v)


def collect(argv: list[str], cwd: Path) -> list[Printed]:
    """Run ``argv`` in ``cwd``; everything it printed that names a command or is a
    diagnostic (JSON or text)."""
    rc, out, err = _run(argv, cwd)
    assert rc != 3 and "SR900" not in out + err, (argv, out, err)
    found: list[Printed] = []
    doc = None
    with contextlib.suppress(ValueError):
        doc = json.loads(out)
    if doc is not None:
        for d in _diagnostics(doc):
            found.append(Printed(argv, cwd, d["code"], d["message"], d.get("hint") or ""))
        for c in _commands(doc):
            found.append(Printed(argv, cwd, "run", f"`{c}`", ""))
    text = err if doc is not None else out + err
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("run: session-resume "):
            found.append(Printed(argv, cwd, "run", f"`{line[5:]}`", ""))
        elif "`session-resume " in line:
            found.append(Printed(argv, cwd, "text", line, ""))
    return found


# --- the scenarios --------------------------------------------------------------------------


def _repo(base: Path) -> Path:
    r = base / "repo"
    (r / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(r)], check=True)
    return r


def _case_states() -> list[Any]:
    out = []
    for case in sorted((REPO / "conformance" / "cases").glob("*/*/case.yaml")):
        files_dir = case.parent / "files"
        if "setup:" in case.read_text(encoding="utf-8") or not files_dir.is_dir():
            continue
        files = {p.name: p.read_bytes() for p in files_dir.iterdir() if p.is_file()}
        if any(n.startswith("00-session-state.json") for n in files):
            out.append(pytest.param(files, id=f"{case.parent.parent.name}/{case.parent.name}"))
    return out


def _per_state(files: dict[str, bytes], base: Path) -> list[Printed]:
    root = _repo(base)
    sdir = root / "agent-output" / "demo"
    sdir.mkdir(parents=True)
    for name, data in files.items():
        (sdir / name).write_bytes(data)
    printed: list[Printed] = []
    sub = root / "sub"
    for argv, cwd in (
        (["validate", "--format", "json", "agent-output/demo", *NOW], sub),
        (["validate", "agent-output/demo", *NOW], root),
        (["resume", "--format", "json", "--project", "demo", *NOW], sub),
        (["resume", "agent-output/demo", *NOW], sub),
        (["report", "--format", "json", str(sdir), *NOW], base),
        (["migrate", "--dry-run", "agent-output/demo", *NOW], sub),
        (["migrate", "--dry-run", "--format", "json", "--project", "demo", *NOW], sub),
        (["migrate", "--dry-run", "--salvage", "agent-output/demo", *NOW], root),
        (["start", "1", "--project", "demo", "--format", "json", *NOW], sub),
        (["checkpoint", "1", "x", "--session-dir", str(sdir), *NOW], base),
    ):
        printed += collect(argv, cwd)
    return printed


def _scenarios(base: Path) -> list[Printed]:
    """The CLI scenarios of issue 27: fresh repository, subdirectory, outside, a v2 file,
    salvage, corrupt, missing state, and the write refusals users meet."""
    root = _repo(base)
    sub, outside = root / "sub", base / "outside"
    outside.mkdir()
    p: list[Printed] = []
    # fresh repository: nothing yet
    (root / "agent-output" / "empty").mkdir(parents=True)
    p += collect(["resume", "agent-output/empty", *NOW], sub)
    p += collect(["resume", "--format", "json", "agent-output/empty", *NOW], root)
    p += collect(["start", "1", "--project", "none", *NOW], sub)
    p += collect(["validate", "agent-output", *NOW], root)
    # a session, and refusals of the write commands from a subdirectory
    assert _run(["init", "P", *NOW], sub)[0] == 0
    for argv in (
        ["init", "P"],
        ["start", "3", "--project", "P"],
        ["checkpoint", "1", "x", "--project", "P"],
        ["complete", "1", "--project", "P"],
        ["skip", "1", "--project", "P", "--reason", "r"],
        ["finding", "resolve", "nope", "--project", "P"],
        ["ping", "--project", "P"],
        ["session", "end", "--session-dir", "agent-output/P"],
    ):
        p += collect([*argv, *NOW], sub)
        p += collect([*argv, "--format", "json", *NOW], sub)
    assert _run(["start", "1", "--project", "P", *NOW], sub)[0] == 0
    for argv in (
        ["start", "2", "--project", "P"],
        ["checkpoint", "1", "not-a-checkpoint", "--project", "P"],
        ["start", "1", "--session-dir", str(root / "agent-output" / "P")],
        # a decision key apex does not define (SR422): the nearest key's command, or none near
        ["decide", "regoin", "west europe", "--project", "P"],
        ["decide", "zzz", "x", "--project", "P"],
        ["decide", "regoin", "x", "--root", str(root), "--session-dir", "agent-output/P"],
    ):
        where = outside if str(root) in " ".join(argv) else sub
        p += collect([*argv, *NOW], where)
        if argv[0] == "decide":
            p += collect([*argv, "--format", "json", *NOW], where)
    # another live session holds the lease (issue 26): every write, `session end`, `ping`
    # and `session start` naming no session, or another one, is refused (SR511) with commands
    # to paste; `resume` and `report` answer session_active
    held = ["--session", "other"]
    assert _run(["init", "H", *held, *NOW], sub)[0] == 0
    assert _run(["session", "start", "--project", "H", *held, *NOW], sub)[0] == 0
    for where in (["--project", "H"], ["--session-dir", "agent-output/H"]):
        for argv in (
            ["checkpoint", "1", "phase_1_discovery"],
            ["decide", "region", "x"],
            ["start", "1"],
            ["complete", "1"],
            ["finding", "add", "a title"],
            ["transition", "--complete", "1", "--start", "2"],
            ["ping"],
            ["session", "end"],
            ["session", "start"],
            ["start", "1", "--session", "mine"],
        ):
            p += collect([*argv, *where, *NOW], sub)
            p += collect([*argv, *where, "--format", "json", *NOW], sub)
    for argv in (
        ["resume", "agent-output/H"],
        ["resume", "--format", "json", "agent-output/H", "--session", "mine"],
        ["report", "agent-output/H"],
        ["report", "--format", "json", "agent-output/H"],
    ):
        p += collect([*argv, *NOW], sub)
    # outside the repository, with --root and with an absolute path
    p += collect(["resume", "agent-output/P", "--root", str(root), *NOW], outside)
    p += collect(["report", str(root / "agent-output" / "P"), *NOW], outside)
    p += collect(["complete", "3", "--project", "P", "--root", str(root), *NOW], outside)
    # a v2 file, and one that needs --salvage
    for name, fixture in (("v2", "v2-nordic-fresh-foods.json"),):
        d = root / "agent-output" / name
        d.mkdir(parents=True)
        shutil.copy(FIXTURES / fixture, d / "00-session-state.json")
        for argv in (
            ["validate", f"agent-output/{name}"],
            ["resume", f"agent-output/{name}"],
            ["resume", "--format", "json", "--project", name],
            ["start", "1", "--project", name],
            ["migrate", f"agent-output/{name}"],
            ["migrate", "--dry-run", "--project", name],
            ["migrate", "--salvage", "--dry-run", f"agent-output/{name}"],
        ):
            p += collect([*argv, *NOW], sub)
    # corrupt, with a good .bak; and a missing state beside a worklog
    good = root / "agent-output" / "P" / "00-session-state.json"
    c = root / "agent-output" / "corrupt"
    c.mkdir()
    (c / "00-session-state.json").write_bytes(b"")
    (c / "00-session-state.json.bak").write_bytes(good.read_bytes().replace(b'"P"', b'"corrupt"'))
    m = root / "agent-output" / "missing"
    m.mkdir()
    shutil.copy(good.parent / "00-worklog.jsonl", m / "00-worklog.jsonl")
    for name in ("corrupt", "missing"):
        for argv in (
            ["validate", f"agent-output/{name}"],
            ["validate", "--format", "json", f"agent-output/{name}"],
            ["resume", f"agent-output/{name}"],
            ["resume", "--format", "json", f"agent-output/{name}"],
            ["report", f"agent-output/{name}"],
            ["start", "1", "--project", name],
            ["start", "1", "--format", "json", "--session-dir", f"agent-output/{name}"],
        ):
            p += collect([*argv, *NOW], sub)
    return p


# --- the checks ------------------------------------------------------------------------------


def _option_owner(span: str) -> tuple[str, list[str]] | None:
    """(command words, its options) of a backticked span naming a command."""
    words = span.split()
    if words and words[0] != "session-resume":
        words = ["session-resume", *words]
    parser, n = _subparser(words)
    if parser is None:
        return None
    return " ".join(words[1:n]), list(parser._option_string_actions)


def hint_problems(p: Printed) -> list[str]:
    """Ways ``p``'s hint contradicts its message or its command."""
    problems: list[str] = []
    own = _option_owner(" ".join(p.argv[:2]))
    own_options = own[1] if own else []
    if own is None or (p.argv[0] in ("finding", "session", "render") and len(p.argv) > 1):
        own = _option_owner(" ".join(p.argv[:2]))
    spans = re.findall(r"`([^`\n]+)`", p.hint)
    covered: set[str] = set()
    for span in spans:
        owner = _option_owner(span) if re.match(r"(session-resume )?[a-z]", span) else None
        if owner is None and re.match(r"[a-z]", span) and not span.startswith("session-resume"):
            covered.update(OPTION.findall(span))  # another program's options (`git log ...`)
            continue
        for opt in OPTION.findall(span) if owner is not None else []:
            covered.add(opt)
            if opt not in owner[1]:
                problems.append(f"`{span}`: {owner[0]} has no {opt}")
    for opt in OPTION.findall(p.hint):
        if opt in covered:
            continue
        named = [o for s in spans if (o := _option_owner(s)) is not None]
        if opt not in own_options and not any(opt in o[1] for o in named):
            problems.append(f"the hint names {opt}, which `{p.argv[0]}` does not have")
    lower_hint, lower_msg = p.hint.lower(), p.message.lower()
    if ("rfc 3339" in lower_hint or "timestamp" in lower_hint) and not re.search(
        r"timestamp|rfc 3339|date|time|started|completed|updated|created|heartbeat|/ts\b",
        lower_msg,
    ):
        problems.append("a timestamp fix for a message about something else")
    quoted = re.search(r'status: "([^"]+)" is not allowed', p.message)
    if quoted:
        value = quoted.group(1).lower()
        if value in ("done", "completed", "finished") and "complete" not in p.hint:
            problems.append(f"status {value!r}: the hint does not point to `complete`")
        if value not in ("blocked",) and "finding add" in p.hint:
            problems.append(f"status {value!r}: the hint records a blocker")
    return problems


def _session_words(args: Any) -> list[str]:
    return [
        str(v)
        for k in ("dir", "session_dir")
        if isinstance(v := getattr(args, k, None), str) and v not in FILL_IN
    ] + [v for v in getattr(args, "paths", None) or [] if v not in FILL_IN]


def command_problems(p: Printed) -> list[str]:
    """Ways a command ``p`` names would fail as printed, from where ``p`` was printed."""
    problems: list[str] = []
    for cmd in SUGGESTED.findall(p.message + "\n" + p.hint):
        try:
            words = shlex.split(cmd)
        except ValueError as exc:
            problems.append(f"`{cmd}`: not shell words ({exc})")
            continue
        parser, n = _subparser(words)
        if parser is None:
            problems.append(f"`{cmd}`: no such command")
            continue
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                args = parser.parse_args(words[n:])
            except SystemExit:
                problems.append(f"`{cmd}`: usage error: {err.getvalue().strip()[-200:]}")
                continue
        orig = p.argv
        takes = parser._option_string_actions
        if "--root" in orig and "--root" in takes and "--root" not in words:
            problems.append(f"`{cmd}`: lost --root")
        same_session = {"--project", "--session-dir"}
        if (
            "--project" in orig
            and "--project" in takes
            and not same_session & set(words)
            and not _session_words(args)
            and words[1] != "init"
        ):
            problems.append(f"`{cmd}`: names no session (the call used --project)")
        if "--salvage" in orig and words[1] == "migrate" and "--salvage" not in words:
            problems.append(f"`{cmd}`: lost --salvage")
        needs_session = words[1] in ("migrate", "resume", "report", "recover") or (
            "--session-dir" in takes and words[1] != "init"
        )
        if needs_session and not (_session_words(args) or getattr(args, "project", None)):
            problems.append(f"`{cmd}`: names no session")
        root_arg = getattr(args, "root", None)
        for w in _session_words(args):
            if any(ch in w for ch in "*?["):
                continue
            with contextlib.chdir(p.cwd):
                from session_resume.cli.commands.common import resolve_path

                where = resolve_path(w, root_arg)
                if not os.path.lexists(where):
                    problems.append(f"`{cmd}`: {w!r} does not exist from {p.cwd}")
    return problems


@pytest.fixture(scope="module")
def scenario_output(tmp_path_factory: pytest.TempPathFactory) -> list[Printed]:
    return _scenarios(tmp_path_factory.mktemp("scenarios"))


RO = ("resume", "report")  # read-only: they answer session_active, not a refusal


def test_scenarios_print_commands_and_hints(scenario_output: list[Printed]) -> None:
    """The scenarios exercise what they should: refusals with hints, and commands."""
    codes = {p.code for p in scenario_output}
    assert {"SR710", "SR130", "SR161", "SR422", "SR511", "run", "text"} <= codes, sorted(codes)
    # the other live session's refusals name the holder's own command and the takeover
    held = [p for p in scenario_output if p.code == "SR511" and p.argv[0] not in RO]
    assert any("--session other`" in p.hint for p in held), held[:3]
    assert all("only with the user's consent" in p.hint for p in held), held[:3]
    assert all("--takeover" in p.hint for p in held), held[:3]
    assert sum(1 for p in scenario_output if SUGGESTED.search(p.message + p.hint)) > 20


def test_scenario_hints_do_not_contradict_messages(scenario_output: list[Printed]) -> None:
    bad = [(p, problem) for p in scenario_output for problem in hint_problems(p)]
    assert not bad, "\n".join(f"{problem}\n    {p}" for p, problem in bad[:20])


def test_scenario_commands_run_as_printed(scenario_output: list[Printed]) -> None:
    bad = [(p, problem) for p in scenario_output for problem in command_problems(p)]
    assert not bad, "\n".join(f"{problem}\n    {p}" for p, problem in bad[:20])


@pytest.mark.parametrize("files", _case_states())
def test_conformance_states(files: dict[str, bytes], tmp_path: Path) -> None:
    printed = _per_state(files, tmp_path)
    bad = [(p, x) for p in printed for x in hint_problems(p) + command_problems(p)]
    assert not bad, "\n".join(f"{problem}\n    {p}" for p, problem in bad[:10])


def test_the_checks_catch_what_issue_27_reported(tmp_path: Path) -> None:
    """The checks fail on the defects the issue names (they would not pass anything)."""
    argv = ["init", "P"]
    assert hint_problems(
        Printed(argv, tmp_path, "SR710", "use `--fresh`", "use `--force` where offered")
    )
    assert hint_problems(
        Printed(
            ["validate"],
            tmp_path,
            "SR204",
            "/project: 'a b' does not have the form",
            "Timestamps are RFC 3339 UTC",
        )
    )
    assert hint_problems(
        Printed(
            ["validate"],
            tmp_path,
            "SR309",
            '/steps/1/status: "done" is not allowed',
            "record the blocker with `session-resume finding add TITLE`",
        )
    )
    (tmp_path / "d").mkdir()
    assert command_problems(
        Printed(
            ["start", "2", "--project", "P"], tmp_path, "SR710", "run `session-resume start 1`", ""
        )
    )
    assert command_problems(
        Printed(
            ["migrate", "--salvage", "--dry-run", "d"],
            tmp_path,
            "text",
            "to write it: run `session-resume migrate d`",
            "",
        )
    )
