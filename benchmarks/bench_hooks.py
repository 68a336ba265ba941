"""hooks-cold: each `session-resume hook EVENT` as an agent host runs it (one cold process,
the host's JSON on standard input), side by side with a cold `session-resume resume` of the
same session. The host waits for every hook: the goal is 300 ms each (issue 28), reported in
the derived lines; the ratios against `resume` are reported with no goal."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

from bench_write_cold import prepare_session
from commandline import bench_env, check_output, process, tool
from runner import BenchAbort, Prepared, Run, Target, benchmark

RESUME = "session-resume resume"
EVENTS = ("session-start", "pre-tool-use", "post-tool-use", "stop", "pre-compact")
HOOKS = tuple(f"hook {e}" for e in EVENTS)
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
    for name in HOOKS:
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
    contenders=(RESUME, *HOOKS),
    anchor=RESUME,
    targets=tuple(Target(h, None) for h in HOOKS),
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
    return Prepared(
        runs_out,
        notes=[
            "a copy of examples/agent-output/contoso-portal (apex, step 2 in progress) with a "
            "file written after its last write; every hook but pre-compact answers (a plan, a "
            "denial, a context, a block); pre-compact appends its note on every run"
        ],
    )
