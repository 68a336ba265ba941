"""checkpoint-cold: a CLI write moment (`session-resume checkpoint`, one cold process that
loads, checks, saves and appends a worklog event) against the bare interpreter."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

from bench_validate_cold import BARE, IMPORT, SITE, bare_python, startup_breakdown, startup_parts
from commandline import bench_env, check_output, process, tool
from runner import EXAMPLE, BenchAbort, Run, Target, benchmark
from states import STATE_FILE

SESSION = "c0ffee00c0ffee00"
_CHECKPOINTS = ("phase_3_cost", "phase_2_waf")  # two checkpoints of apex step 2, in turn
_CHECKPOINT = "session-resume checkpoint"


def prepare_session(tmpdir: Path) -> tuple[Path, Path]:
    """A repository under ``tmpdir`` holding a copy of the bundled example session (apex, step
    2 in progress); returns the repository root and the session directory."""
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    doc.pop("$schema", None)  # its relative path points into the source tree
    root = tmpdir / "repo"
    sdir = root / "agent-output" / doc["project"]
    sdir.mkdir(parents=True)
    for f in EXAMPLE.parent.iterdir():
        if f.name != STATE_FILE:
            shutil.copyfile(f, sdir / f.name)
    (sdir / STATE_FILE).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return root, sdir


def checkpoint_argv(root: Path, sub_step: str) -> list[str]:
    """`checkpoint 2 SUB_STEP` as an agent runs it: its session id, a fixed clock."""
    return [
        tool("session-resume"),
        "checkpoint",
        "2",
        sub_step,
        "--project",
        "contoso-portal",
        "--root",
        str(root),
        "--session",
        SESSION,
        "--now",
        "2026-11-20T15:00:00Z",
    ]


def _alternating(runs: list[Run]) -> Run:
    """One contender that runs ``runs`` in turn, one per call: every call is a real write
    (another checkpoint than the last), never a repeat."""
    turn = itertools.cycle(runs)

    def call() -> None:
        next(turn).call()

    return Run(call, " / ".join(r.shown for r in runs) + "  (in turn)", probe=runs[0].probe)


@benchmark(
    "checkpoint-cold",
    description="a CLI write moment: one cold `session-resume checkpoint 2 <id>` on a copy of "
    "the bundled example session (lock, load, checks, save with .bak, worklog event, lease "
    "heartbeat), two checkpoint ids in turn so every run writes, vs the bare interpreter",
    contenders=(_CHECKPOINT, BARE, SITE, IMPORT),
    anchor=BARE,
    target=Target(_CHECKPOINT, 5.0),
    runs=30,
    quick_runs=15,
    derive=startup_breakdown(_CHECKPOINT),
)
def checkpoint_cold(tmpdir: Path) -> dict[str, Run]:
    env = bench_env(tmpdir)
    root, sdir = prepare_session(tmpdir)
    runs = []
    for sub in _CHECKPOINTS:
        argv = checkpoint_argv(root, sub)
        check_output(argv, cwd=root, env=env, what="setup")
        runs.append(process(argv, cwd=root, env=env))
    state = json.loads((sdir / STATE_FILE).read_text(encoding="utf-8"))
    if state["steps"]["2"].get("sub_step") != _CHECKPOINTS[-1]:
        raise BenchAbort(f"checkpoint did not record {_CHECKPOINTS[-1]}: {state['steps']['2']}")
    return {
        _CHECKPOINT: _alternating(runs),
        BARE: bare_python(root, env),
        **startup_parts(root, env),
    }
