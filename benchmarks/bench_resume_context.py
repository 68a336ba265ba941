"""resume-context: the characters a fresh agent must read before its first write, in five
situations, against the upstream protocol's own startup reading for the same situation.

No timing: every figure is a count of characters (Python ``len`` of the text, so a figure is
the same on every machine and every run). Contenders, for each situation:

* **CLI**: the generated SKILL.md (rendered live by ``session-resume render skill --workflow
  apex``) plus everything ``session-resume resume DIR`` prints in text for the situation
  (stdout and stderr: an agent in a shell reads both).
* **hook**: the ``additionalContext`` that ``session-resume hook session-start`` injects for
  the situation, alone (the host puts it in the agent's context; no skill is needed to ask
  for it). "Not available" while the command is not in this tree.
* **MCP**: the generated SKILL.md plus the ``resume`` tool's answer as a host hands it to
  the model (:func:`host_view`), from a ``session-resume mcp`` server started as a host starts
  it. The tool list the host loads once is reported, not counted (the same in every
  situation). "Not available" without the ``mcp`` extra.
* **upstream** (the comparison): the upstream protocol's startup reading for the same
  resume: its SKILL.md (``UPSTREAM_SKILL_CHARS``), the state file(s) it tells the agent to read
  (the corrupt state and its ``.bak`` when the state does not parse), and the step's row of its
  context-budget table (``UPSTREAM_BUDGET_ROWS``).

Goals: the CLI and MCP paths at most 0.8x the upstream reading, the hook path at most 0.4x,
in every situation. The data are built with the real CLI on a copy of the bundled example
session and checked before counting: each situation gets the expected ``resume`` action, and
the mid-step answer names the next checkpoint and the command that records it (the answer stays
complete). The counting itself (``cli_reading``, ``upstream_reading``, ``hook_context``,
``host_view``) is pure and tested on tiny data in tests/test_benchmarks.py.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench_write_cold import prepare_session
from commandline import bench_env, check_output, tool
from runner import ROOT, BenchAbort, Prepared, Run, Target, benchmark
from states import STATE_FILE

# The upstream skill's SKILL.md, in characters: the version of the protocol this project
# started from (its apex workflow), before the upstream repository replaced the skill.
UPSTREAM_SKILL_CHARS = 4848
# Its context-budget table (references/context-budgets.md), one row per step, as written there:
# the upstream agent reads the row of its step to know which files it may load at startup.
UPSTREAM_BUDGET_ROWS = {
    "1": "| 1    | Requirements | 1         | `00-session-state.json`" + " " * 66 + "|",
    "2": "| 2    | Architect    | 2         | `00-session-state.json` + `01-requirements.md`"
    + " " * 43
    + "|",
    "3": "| 3    | Design       | 2         | `00-session-state.json` + "
    "`02-architecture-assessment.md`" + " " * 32 + "|",
    "4": "| 4    | Planner      | 2         | `00-session-state.json` + "
    "`02-architecture-assessment.md`" + " " * 32 + "|",
    "5": "| 5    | CodeGen      | 3         | `00-session-state.json` + "
    "`04-implementation-plan.md` + `04-governance-constraints.json` |",
    "6": "| 6    | Deploy       | 2         | `00-session-state.json` + "
    "`05-implementation-reference.md`" + " " * 31 + "|",
    "7": "| 7    | As-Built     | 3         | `00-session-state.json` + "
    "`06-deployment-summary.md` + `02-architecture-assessment.md`   |",
}

CLI_GOAL = 0.8
HOOK_GOAL = 0.4
LIVE_FOR = timedelta(minutes=1)  # the other session's heartbeat: fresh (stale after 300 s)
SILENT_FOR = timedelta(minutes=80)  # since the gate handover: the chat ended there
PROJECT = "contoso-portal"
V2_FIXTURE = ROOT / "tests" / "fixtures" / "migrate" / "v2-nordic-fresh-foods.json"

SITUATIONS = (
    "mid-step",
    "corrupt state with .bak",
    "v2 state",
    "another live session",
    "gate handover into an optional step",
)
CLI, MCP, HOOK, UPSTREAM = "CLI", "MCP", "hook", "upstream"


def contender(situation: str, path: str) -> str:
    return f"{situation}: {path}"


# --- the counting (pure) -------------------------------------------------------------------


def cli_reading(skill: str, answer: str) -> int:
    """What the CLI path has a fresh agent read: the skill, then the resume answer."""
    return len(skill) + len(answer)


def upstream_reading(state_texts: Sequence[str], step: str) -> int:
    """What the upstream protocol has a fresh agent read for the same resume: its SKILL.md,
    the state file(s) and the step's context-budget row (none for a step the table lacks)."""
    return UPSTREAM_SKILL_CHARS + sum(len(t) for t in state_texts) + len(budget_row(step))


def budget_row(step: str) -> str:
    return UPSTREAM_BUDGET_ROWS.get(step, "")


def hook_context(stdout: str) -> str | None:
    """The ``additionalContext`` of a session-start hook's answer (the hosts' shared format:
    ``hookSpecificOutput.additionalContext``, or at the top level), or None if it has none."""
    try:
        doc = json.loads(stdout) if stdout.strip() else None
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    specific = doc.get("hookSpecificOutput")
    for holder in (specific, doc):
        if isinstance(holder, dict) and isinstance(holder.get("additionalContext"), str):
            return str(holder["additionalContext"])
    return None


def host_view(result: dict[str, Any]) -> str:
    """What a host hands the model of a tool result: the structured content as JSON when the
    result has one (Claude Code and VS Code do so and drop the text), else its text."""
    structured = result.get("structuredContent")
    if isinstance(structured, dict):
        return json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
    texts = [c.get("text", "") for c in result.get("content") or [] if c.get("type") == "text"]
    return "".join(texts)


# --- the situations (built with the real CLI, untimed) -------------------------------------


def _ts(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Situation:
    name: str
    root: Path  # the repository
    session_dir: Path
    step: str  # the step the upstream agent would run (its context-budget row)
    expected_action: str
    upstream_files: list[Path]  # the state file(s) the upstream protocol has it read


def _cli(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return check_output([tool("session-resume"), *args], cwd=root, env=env, what="setup")


def build_situations(tmpdir: Path, env: dict[str, str], now: datetime) -> list[Situation]:
    """The five situations, each in its own repository under ``tmpdir``, as they stand at
    ``now`` (the real clock: the hook, as a host runs it, reads the clock itself)."""
    out: list[Situation] = []
    p = ("--project", PROJECT)

    root, sdir = prepare_session(tmpdir / "mid-step")
    state = sdir / STATE_FILE
    out.append(Situation(SITUATIONS[0], root, sdir, "2", "resume_from_checkpoint", [state]))

    root, sdir = prepare_session(tmpdir / "corrupt")
    state = sdir / STATE_FILE
    good = state.read_bytes()
    (sdir / f"{STATE_FILE}.bak").write_bytes(good)
    state.write_bytes(good[: len(good) // 2])  # torn in the middle of a write
    bak = sdir / f"{STATE_FILE}.bak"
    out.append(Situation(SITUATIONS[1], root, sdir, "2", "needs_recovery", [state, bak]))

    doc = json.loads(V2_FIXTURE.read_text(encoding="utf-8"))
    root = tmpdir / "v2" / "repo"
    sdir = root / "agent-output" / doc["project"]
    sdir.mkdir(parents=True)
    shutil.copyfile(V2_FIXTURE, sdir / STATE_FILE)
    step = str(doc.get("current_step", ""))
    out.append(Situation(SITUATIONS[2], root, sdir, step, "migrate_first", [sdir / STATE_FILE]))

    root, sdir = prepare_session(tmpdir / "live")
    live = _ts(now - LIVE_FOR)
    _cli(root, env, "session", "start", *p, "--session", "agent-1", "--now", live)
    out.append(Situation(SITUATIONS[3], root, sdir, "2", "session_active", [sdir / STATE_FILE]))

    root, sdir = prepare_session(tmpdir / "gate")
    gate = ("transition", "--complete", "2", "--start", "3", *p)
    _cli(root, env, *gate, "--now", _ts(now - SILENT_FOR))
    out.append(Situation(SITUATIONS[4], root, sdir, "3", "start", [sdir / STATE_FILE]))
    for s in out:
        (s.root / ".git").mkdir(exist_ok=True)  # a repository, as the hook looks for one
    return out


def _resume(
    s: Situation, env: dict[str, str], fmt: str, now: datetime
) -> subprocess.CompletedProcess[str]:
    rel = s.session_dir.relative_to(s.root).as_posix()
    return _cli(s.root, env, "resume", rel, "--now", _ts(now), "--format", fmt)


def check_answer(s: Situation, env: dict[str, str], now: datetime) -> None:
    """The data check: the expected action, and a complete answer for the mid-step resume."""
    decision = json.loads(_resume(s, env, "json", now).stdout)
    if decision.get("action") != s.expected_action:
        raise BenchAbort(
            f"{s.name}: resume answered {decision.get('action')!r}, expected {s.expected_action!r}"
        )
    if s.name == SITUATIONS[0]:
        text = _resume(s, env, "text", now).stdout
        if "phase_3_cost" not in text or "checkpoint 2 phase_3_cost" not in text:
            raise BenchAbort(f"{s.name}: the answer no longer names the next checkpoint's write")


def render_skill(tmpdir: Path, env: dict[str, str]) -> str:
    out = tmpdir / "skill" / "apex"
    _cli(tmpdir, env, "render", "skill", "--workflow", "apex", "--out", str(out))
    return (out / "SKILL.md").read_text(encoding="utf-8")


def hook_available(env: dict[str, str]) -> str | None:
    """None if ``session-resume hook`` exists here, else why not."""
    res = subprocess.run(
        [tool("session-resume"), "hook", "--help"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    if res.returncode != 0:
        return "`session-resume hook` is not a command of this tree yet"
    return None


def run_hook(s: Situation, env: dict[str, str]) -> str | None:
    """The session-start hook's additionalContext for the situation, as a host runs it."""
    event = {
        "hook_event_name": "SessionStart",
        "session_id": "bench-resume-context",
        "transcript_path": str(s.root / "transcript.jsonl"),
        "cwd": str(s.root),
        "source": "startup",
    }
    res = subprocess.run(
        [tool("session-resume"), "hook", "session-start"],
        cwd=s.root,
        env=env,
        input=json.dumps(event),
        capture_output=True,
        text=True,
        check=False,
    )
    return hook_context(res.stdout) if res.returncode == 0 else None


def mcp_answers(situations: list[Situation], env: dict[str, str]) -> tuple[dict[str, str], int]:
    """Each situation's ``resume`` tool answer as the host hands it to the model, each from
    its own server (``session-resume mcp --root`` the situation's repository), and the
    characters of the tool list (``tools/list``) the host loads."""
    from bench_mcp_write import start_server

    answers, tool_list = {}, 0
    for s in situations:
        pipe = start_server(s.root, env)
        try:
            if not tool_list:  # the same list from every server: asked once
                tool_list = len(json.dumps(pipe.request("tools/list", {})["tools"]))
            rel = s.session_dir.relative_to(s.root).as_posix()
            args = {"name": "resume", "arguments": {"session_dir": rel}}
            answers[s.name] = host_view(pipe.request("tools/call", args))
        finally:
            pipe.close()
    return answers, tool_list


def _count(n: int, shown: str) -> Run:
    return Run(lambda: n, shown)


def _goals() -> list[Target]:
    goals = []
    for s in SITUATIONS:
        up = contender(s, UPSTREAM)
        goals.append(Target(contender(s, CLI), CLI_GOAL, against=up))
        goals.append(Target(contender(s, MCP), CLI_GOAL, against=up))
        goals.append(Target(contender(s, HOOK), HOOK_GOAL, against=up))
    return goals


def _derive(med: dict[str, float], info: dict[str, Any]) -> list[str]:
    lines = []
    for s in SITUATIONS:
        parts = info["parts"].get(s)
        if parts is None:
            continue
        up = med[contender(s, UPSTREAM)]
        cli = med[contender(s, CLI)]
        hook = med.get(contender(s, HOOK))
        hook_text = (
            "hook not available"
            if hook is None
            else f"hook {hook:,.0f} = {hook / up:.2f}x (goal <= {HOOK_GOAL}x)"
        )
        mcp = med.get(contender(s, MCP))
        mcp_text = (
            "MCP not available"
            if mcp is None
            else f"MCP {mcp:,.0f} = {mcp / up:.2f}x (goal <= {CLI_GOAL}x)"
        )
        lines.append(
            f"{s}: CLI {cli:,.0f} = SKILL.md {parts['skill']:,} + resume answer "
            f"{parts['answer']:,} = {cli / up:.2f}x (goal <= {CLI_GOAL}x); {mcp_text}; "
            f"{hook_text}; upstream "
            f"{up:,.0f} = SKILL.md {UPSTREAM_SKILL_CHARS:,} + state {parts['state']:,} + budget "
            f"row {parts['row']:,}"
        )
    return lines


@benchmark(
    "resume-context",
    description="the characters a fresh agent reads before its first write, in five "
    "situations: the generated SKILL.md plus the text `resume` answer (CLI), or plus the MCP "
    "`resume` tool's answer as a host shows it (MCP), the session-start "
    "hook's additionalContext alone (hook), against the upstream protocol's SKILL.md, state "
    "file(s) and context-budget row (upstream); counted, not timed",
    contenders=tuple(contender(s, p) for s in SITUATIONS for p in (CLI, MCP, HOOK, UPSTREAM)),
    anchor=contender(SITUATIONS[0], UPSTREAM),
    targets=_goals(),
    runs=1,
    quick_runs=1,
    warmup=0,
    derive=_derive,
    unit="chars",
)
def resume_context(tmpdir: Path) -> Prepared:
    env = bench_env(tmpdir)
    skill = render_skill(tmpdir, env)
    now = datetime.now(UTC).replace(microsecond=0)
    situations = build_situations(tmpdir, env, now)
    no_hook = hook_available(env)
    no_mcp = None if importlib.util.find_spec("mcp") else "the mcp extra is not installed"
    mcp, tool_list = ({}, 0) if no_mcp else mcp_answers(situations, env)
    runs: dict[str, Run] = {}
    unavailable: dict[str, str] = {}
    parts: dict[str, dict[str, int]] = {}
    for s in situations:
        check_answer(s, env, now)
        res = _resume(s, env, "text", now)
        answer = res.stdout + res.stderr
        states = [f.read_bytes().decode("utf-8", "replace") for f in s.upstream_files]
        rel = s.session_dir.relative_to(s.root).as_posix()
        runs[contender(s.name, CLI)] = _count(
            cli_reading(skill, answer), f"SKILL.md + `session-resume resume {rel}` (text)"
        )
        files = " + ".join(f.name for f in s.upstream_files)
        runs[contender(s.name, UPSTREAM)] = _count(
            upstream_reading(states, s.step),
            f"upstream SKILL.md + {files} + context-budget row of step {s.step}",
        )
        parts[s.name] = {
            "skill": len(skill),
            "answer": len(answer),
            "state": sum(len(t) for t in states),
            "row": len(budget_row(s.step)),
        }
        if no_mcp:
            unavailable[contender(s.name, MCP)] = no_mcp
        else:
            runs[contender(s.name, MCP)] = _count(
                cli_reading(skill, mcp[s.name]),
                'SKILL.md + the `resume` tool\'s answer ({"session_dir": ...}) as a host shows it',
            )
        name = contender(s.name, HOOK)
        context = None if no_hook else run_hook(s, env)
        if no_hook:
            unavailable[name] = no_hook
        elif not context:
            unavailable[name] = "the session-start hook injected nothing in this situation"
        else:
            runs[name] = _count(
                len(context), "session-resume hook session-start: additionalContext"
            )
    notes = [
        f"SKILL.md rendered by `session-resume render skill --workflow apex`: {len(skill):,} "
        f"characters; the upstream SKILL.md: {UPSTREAM_SKILL_CHARS:,}",
        "situations: a copy of the bundled example session (apex, step 2 at phase_2_waf with its "
        "partial deliverable); the same with its state torn in half and a .bak; a 2.0 state "
        f"({V2_FIXTURE.relative_to(ROOT).as_posix()}); the example with another session's live "
        "lease; the example after `transition --complete 2 --start 3` (Design, optional) and "
        "80 silent minutes; the clock is the real one (the hook reads it), the durations "
        "fixed: the same counts in every run",
        f"the MCP tool list the host loads once (tools/list): {tool_list:,} characters, not counted"
        if tool_list
        else "MCP: not run",
        "the ratio column is against the mid-step's upstream reading (the anchor); each "
        "situation's own ratios are in the lines below and in the goals table",
    ]
    return Prepared(runs, notes=notes, unavailable=unavailable, info={"parts": parts})
