"""hooks-cold: each `session-resume hook EVENT` as an agent host runs it (one cold process,
the host's JSON on standard input), side by side with a cold `session-resume resume` of the
same session. The host waits for every hook: the goal is 300 ms each, reported in the derived
lines; the ratios against `resume` are reported with no goal.

Two contenders start from a package without bytecode (an editable install, a fresh clone):
each run gets a fresh ``PYTHONPYCACHEPREFIX`` holding only the standard library's bytecode
(copied in, untimed) and runs the session-start command `hooks install` configured in
`.claude/settings.json`. `hook session-start, cold bytecode` then compiles every module the
plan needs; `hook session-start, first after install` runs `hooks install` first (untimed),
which imports those modules and so leaves their bytecode, as on a user's machine."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from bench_write_cold import prepare_session
from commandline import bench_env, check_output, process, tool
from runner import BenchAbort, Prepared, Run, Target, benchmark

RESUME = "session-resume resume"
EVENTS = ("session-start", "pre-tool-use", "post-tool-use", "stop", "pre-compact")
HOOKS = tuple(f"hook {e}" for e in EVENTS)
COLD = "hook session-start, cold bytecode"
FIRST = "hook session-start, first after install"
GOAL_S = 0.300


def _input(event: str, root: Path, sdir: Path) -> dict[str, object]:
    """The input Claude Code sends for ``event`` (docs: schema/hooks/claude-output.json)."""
    common = {
        "session_id": "bench",
        "transcript_path": str(root / "t.jsonl"),
        "cwd": str(root),
        "permission_mode": "default",
    }
    art = str(sdir / "bench-notes.md")
    per_event: dict[str, dict[str, object]] = {
        "session-start": {"hook_event_name": "SessionStart", "source": "startup"},
        "pre-tool-use": {
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": str(sdir / "00-session-state.json"), "content": "{}"},
        },
        "post-tool-use": {
            "hook_event_name": "PostToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": art, "content": "notes"},
            "tool_response": {"filePath": art, "success": True},
        },
        "stop": {"hook_event_name": "Stop", "stop_hook_active": False},
        "pre-compact": {"hook_event_name": "PreCompact", "trigger": "auto"},
    }
    return {**common, **per_event[event]}


def _hook_run(argv: list[str], data: bytes, cwd: Path, env: dict[str, str]) -> Run:
    """A Run piping ``data`` to the hook; it must exit 0 (a hook never fails the host)."""

    def call() -> None:
        res = subprocess.run(argv, input=data, cwd=cwd, env=env, capture_output=True, check=False)
        if res.returncode != 0 or res.stderr:
            raise BenchAbort(f"`{shlex.join(argv)}` exited {res.returncode}: {res.stderr!r}")

    return Run(call, shlex.join(argv) + " < input.json")


def _goal_lines(medians: dict[str, float], _info: dict[str, object]) -> list[str]:
    lines = []
    for name in (*HOOKS, COLD, FIRST):
        if name in medians:
            med = medians[name]
            verdict = "met" if med <= GOAL_S else "missed"
            ratio = med / medians[RESUME] if medians.get(RESUME) else float("nan")
            lines.append(
                f"{name}: median {med * 1000:.0f} ms, goal <= {GOAL_S * 1000:.0f} ms {verdict}; "
                f"{ratio:.2f}x resume"
            )
    return lines


@benchmark(
    "hooks-cold",
    description="each `session-resume hook EVENT` as a host runs it (a cold process, Claude "
    "Code's JSON on stdin) on a copy of the bundled example session, vs a cold `session-resume "
    "resume` of the same session; goal 300 ms per hook (derived lines)",
    contenders=(RESUME, *HOOKS, COLD, FIRST),
    anchor=RESUME,
    targets=tuple(Target(h, None) for h in (*HOOKS, COLD, FIRST)),
    runs=20,
    quick_runs=8,
    derive=_goal_lines,
)
def hooks_cold(tmpdir: Path) -> Prepared:
    env = bench_env(tmpdir)
    root, sdir = prepare_session(tmpdir)
    (root / ".git").mkdir()
    sr = tool("session-resume")
    # a file under the session directory written after its last write: stop has work to name,
    # post-tool-use has a file to name
    notes = sdir / "bench-notes.md"
    notes.write_text("notes\n", encoding="utf-8")
    later = os.stat(sdir / "00-session-state.json").st_mtime + 60
    os.utime(notes, (later, later))
    resume_argv = [sr, "resume", str(sdir), "--root", str(root)]
    check_output(resume_argv, cwd=root, env=env, what="setup")
    runs_out: dict[str, Run] = {RESUME: process(resume_argv, cwd=root, env=env)}
    for event, name in zip(EVENTS, HOOKS, strict=True):
        data = json.dumps(_input(event, root, sdir)).encode("utf-8")
        argv = [sr, "hook", event]
        res = subprocess.run(argv, input=data, cwd=root, env=env, capture_output=True, check=False)
        if res.returncode != 0 or (event != "pre-compact" and not res.stdout.strip()):
            raise BenchAbort(f"hook {event} gave no answer in setup: {res.stderr!r}")
        runs_out[name] = _hook_run(argv, data, root, env)
    runs_out[COLD] = _first_session_start(sr, root, sdir, env, tmpdir, install=False)
    runs_out[FIRST] = _first_session_start(sr, root, sdir, env, tmpdir, install=True)
    return Prepared(
        runs_out,
        notes=[
            "a copy of examples/agent-output/contoso-portal (apex, step 2 in progress) with a "
            "file written after its last write; every hook but pre-compact answers (a plan, a "
            "denial, a context, a block); pre-compact appends its note on every run",
            f"{COLD} and {FIRST}: the command `hooks install` configured in "
            ".claude/settings.json, the package without bytecode; the second after an "
            "untimed `hooks install` in the same bytecode cache",
        ],
    )


def _first_session_start(
    sr: str, root: Path, sdir: Path, env: dict[str, str], tmpdir: Path, *, install: bool
) -> Run:
    install_argv = [sr, "hooks", "install", "--root", str(root)]
    check_output(install_argv, cwd=root, env=env, what="setup")
    settings = json.loads((root / ".claude" / "settings.json").read_text(encoding="utf-8"))
    argv = shlex.split(settings["hooks"]["SessionStart"][0]["hooks"][0]["command"])
    argv[0] = sr
    data = json.dumps(_input("session-start", root, sdir)).encode("utf-8")
    # the standard library's bytecode, compiled once into a template prefix: each run gets a
    # copy of it, so only the package compiles in the timed call
    template = tmpdir / "pycache-stdlib"
    label = "install" if install else "cold"
    probe = [
        sys.executable,
        "-X",
        "importtime",
        "-c",
        "import sys; from session_resume.cli.main import main; sys.argv = ['x', *sys.argv[1:]]; "
        "sys.exit(main())",
        *argv[1:],
    ]
    res = subprocess.run(probe, input=data, cwd=root, env=env, capture_output=True, check=False)
    stdlib = sorted(
        {
            line.rsplit("|", 1)[-1].strip()
            for line in res.stderr.decode().splitlines()
            if "|" in line and "session_resume" not in line and "import time:" in line
        }
        - {"imported package"}
    )
    if not template.is_dir():
        warm = {**env, "PYTHONPYCACHEPREFIX": str(template)}
        for name in stdlib:
            subprocess.run([sys.executable, "-c", f"import {name}"], env=warm, capture_output=True)
    counter = [0]
    run_env = dict(env)

    def before() -> None:
        counter[0] += 1
        prefix = tmpdir / f"pycache-{label}-{counter[0]}"
        shutil.copytree(template, prefix)
        run_env["PYTHONPYCACHEPREFIX"] = str(prefix)
        if install:
            subprocess.run(install_argv, cwd=root, env=run_env, capture_output=True, check=True)

    def call() -> None:
        res = subprocess.run(argv, input=data, cwd=root, env=run_env, capture_output=True)
        if res.returncode != 0 or not res.stdout.strip():
            raise BenchAbort(f"the first session-start gave no answer: {res.stderr!r}")

    shown = "after `hooks install`" if install else "package bytecode cold"
    return Run(call, shlex.join([*argv, "< input.json"]) + f" ({shown})", before)
