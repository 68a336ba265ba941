"""Differential test of the two implementations' writers (issue 16): random sequences of write
moments and pings (Hypothesis) applied through the Python CLI and through the JavaScript
package's CLI to twin session directories give the same answers at every step (exit code,
revision, step record, worklog event, lease action, refusal codes) and the same files at the
end (state, .bak, worklog, lease), and each implementation validates the other's files.

The Python CLI runs in process (``session_resume.cli.main``); the JavaScript CLI runs in one
Node process per sequence (tests/node/cli_batch.mjs calls the package's ``cli``). Node
(>= 20) and ``npm ci`` are needed; SESSION_RESUME_NO_NODE=1 skips instead.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_resume.cli.main import main as py_cli
from session_resume.core.workflow import load_workflow

# Test tier (README "Test tiers"): Node and `npm ci`.
pytestmark = pytest.mark.node

REPO = Path(__file__).resolve().parents[1]
DRIVER = REPO / "tests" / "node" / "cli_batch.mjs"
WORKFLOWS = ("apex", "dotagent", "generic")
EXAMPLES = int(os.environ.get("SESSION_RESUME_DIFF_EXAMPLES", "12"))


def _node() -> str:
    node = shutil.which("node")
    if node is None or not (REPO / "node_modules" / "session-resume").exists():
        if os.environ.get("SESSION_RESUME_NO_NODE") == "1":
            pytest.skip("node or the session-resume workspace package is missing")
        pytest.fail("the differential test needs node (>= 20) and `npm ci`", pytrace=False)
    return node


def _steps(wf_id: str) -> list[tuple[str, list[str]]]:
    wf = load_workflow(wf_id)
    if wf.free_steps:
        return [(k, ["draft", "review"]) for k in ("1", "2", "3", "2_5")]
    return [(s.key, list(s.checkpoint_ids) or ["any"]) for s in wf.steps]


PATHS = st.sampled_from(["docs/a.md", "docs/./a.md", "b.md", "../escape.md", "/abs.md", ""])
TEXT = st.sampled_from(["cost", "latency", "no tests", "Auth flow"])


@st.composite
def moment(draw: st.DrawFn, wf_id: str) -> list[str]:
    steps = _steps(wf_id)
    keys = [k for k, _ in steps] + ["99"]
    key = draw(st.sampled_from(keys))
    cps = dict(steps).get(key, ["x"]) + ["not-a-checkpoint"]
    kind = draw(
        st.sampled_from(
            ["start", "start", "checkpoint", "complete", "skip", "decide", "log", "finding"]
            + ["finding", "transition", "review", "review", "ping", "approve"]
        )
    )
    force = ["--force"] if draw(st.booleans()) and kind in ("start", "skip", "transition") else []
    if kind == "start":
        return ["start", key, *force]
    if kind == "checkpoint":
        argv = ["checkpoint", key, draw(st.sampled_from(cps))]
        for p in draw(st.lists(PATHS, max_size=2)):
            argv += ["--artifact", p]
        for p in draw(st.lists(PATHS, max_size=1)):
            argv += ["--context-file", p]
        return argv
    if kind == "complete":
        return ["complete", key]
    if kind == "skip":
        return ["skip", key, "--reason", draw(TEXT), *force]
    if kind == "decide":
        k = draw(st.sampled_from(["iac_tool", "complexity", "region", "audience"]))
        v = draw(st.sampled_from(["bicep", "terraform", "pulumi", "simple", "eastus", "x"]))
        return ["decide", k, v]
    if kind == "log":
        argv = ["decide", "--log", "--title", draw(TEXT), "--choice", "c", "--rationale", "r"]
        if draw(st.booleans()):
            argv += ["--step", key]
        return argv
    if kind == "approve":
        # a gate's approval: refused before the step is complete, once recorded, for a step
        # with no gate (SR710); with a decision the enum allows, refuses (SR420) or lacks (SR422)
        argv = ["approve", key]
        if draw(st.booleans()):
            pair = draw(st.sampled_from(["iac_tool=bicep", "iac_tool=nope", "regoin=x"]))
            argv += ["--decision", pair]
        return argv
    if kind == "finding":
        # two titles only, so that adding an open one again and resolving happen often
        title = draw(st.sampled_from(["no tests", "Auth flow"]))
        return ["finding", draw(st.sampled_from(["add", "add", "resolve"])), title]
    if kind == "review":
        # the workflow's tiers and one it refuses (SR420); counts that fit, exceed or are
        # negative; skipped passes in and out of those planned, with or without a reason
        argv = ["review-audit", key]
        if draw(st.booleans()):
            argv += ["--complexity", draw(st.sampled_from(["standard", "complex", "huge"]))]
        for option in ("--passes-planned", "--passes-executed"):
            if draw(st.booleans()):
                argv += [option, str(draw(st.integers(-1, 3)))]
        for n in draw(st.lists(st.integers(0, 3), max_size=2)):
            argv += ["--skipped-pass", str(n)]
        if draw(st.booleans()):
            argv += ["--skip-reason", draw(TEXT)]
        for model in draw(st.lists(st.sampled_from(["m1", "m2"]), max_size=2)):
            argv += ["--model", model]
        return argv
    if kind == "ping":
        return ["ping"]
    other = draw(st.sampled_from(keys))
    argv = ["transition", "--complete", key, "--start", other, *force]
    if draw(st.booleans()):
        # an allowed value, one the enum refuses (SR420), a key apex does not define (SR422)
        pair = draw(st.sampled_from(["iac_tool=bicep", "iac_tool=nope", "regoin=x"]))
        argv += ["--decision", pair]
    return argv


@st.composite
def sequences(draw: st.DrawFn) -> tuple[str, list[tuple[list[str], str]]]:
    wf_id = draw(st.sampled_from(WORKFLOWS))
    ops = draw(st.lists(moment(wf_id), min_size=3, max_size=14))
    # now and then another session tries to write while s1 holds a live lease (SR511)
    sessions = draw(
        st.lists(st.sampled_from(["s1"] * 7 + ["s2"]), min_size=len(ops), max_size=len(ops))
    )
    return wf_id, list(zip(ops, sessions, strict=True))


def _argv(op: list[str], session: str, sess_dir: Path, root: Path, minute: int) -> list[str]:
    now = f"2026-03-02T{10 + minute // 60:02d}:{minute % 60:02d}:00Z"
    common = ["--session-dir", str(sess_dir), "--root", str(root), "--now", now]
    common += ["--format", "json", "--session", session]
    if op[0] == "finding":
        return [*op[:2], *common, *op[2:]]
    return [*op, *common]


def _run_python(runs: list[list[str]], cwd: Path) -> list[dict[str, Any]]:
    out = []
    here = os.getcwd()
    os.chdir(cwd)
    try:
        for argv in runs:
            buf, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
                rc = py_cli(argv)
            out.append({"rc": rc, "stdout": buf.getvalue(), "stderr": err.getvalue()})
    finally:
        os.chdir(here)
    return out


def _run_js(node: str, runs: list[list[str]], cwd: Path) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [node, str(DRIVER)],
        input=json.dumps({"cwd": str(cwd), "runs": runs}),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env={**os.environ, "USER": "differential"},
    )
    assert proc.returncode == 0, proc.stderr
    result: list[dict[str, Any]] = json.loads(proc.stdout)
    return result


def _answer(res: dict[str, Any]) -> dict[str, Any]:
    """What must agree: the exit code, and either the write or the refusal codes."""
    out: dict[str, Any] = {"rc": res["rc"]}
    try:
        data = json.loads(res["stdout"])
    except ValueError:
        return {**out, "stdout": res["stdout"]}
    if data.get("ok"):
        keys = ("ok", "revision", "step", "event", "events", "session", "lease")
        out.update({k: data.get(k) for k in keys})
    else:
        out["codes"] = sorted({d["code"] for d in data.get("diagnostics", [])})
    return out


def _files(d: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("00-session-state.json", "00-session-state.json.bak", "00-session.active"):
        p = d / name
        out[name] = json.loads(p.read_text()) if p.exists() else None
    wl = d / "00-worklog.jsonl"
    out["worklog"] = [json.loads(x) for x in wl.read_text().splitlines()] if wl.exists() else []
    return out


def _validate_argv(d: Path) -> list[str]:
    return ["validate", str(d), "--root", str(d.parent.parent), "--format", "json"]


def _verdict(res: dict[str, Any]) -> tuple[int, list[str]]:
    report = json.loads(res["stdout"])
    return res["rc"], sorted(x["code"] for f in report["files"] for x in f["diagnostics"])


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(seq=sequences())
def test_writers_agree(
    seq: tuple[str, list[tuple[list[str], str]]],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    node = _node()
    monkeypatch.setenv("USER", "differential")
    monkeypatch.delenv("SESSION_RESUME_SESSION", raising=False)
    wf_id, ops = seq
    base = tmp_path_factory.mktemp("diff")
    dirs = {impl: base / impl / "agent-output" / "demo" for impl in ("py", "js")}
    runs: dict[str, list[list[str]]] = {}
    for impl, d in dirs.items():
        root = d.parent.parent
        root.mkdir(parents=True)
        init = ["init", "demo", "--workflow", wf_id, "--session-dir", str(d), "--root", str(root)]
        init += ["--now", "2026-03-02T09:59:00Z", "--format", "json", "--session", "s1"]
        runs[impl] = [init] + [
            _argv(op, session, d, root, minute) for minute, (op, session) in enumerate(ops)
        ]
    py = [_answer(r) for r in _run_python(runs["py"], base / "py")]
    # one Node process: the writes, then validate its own directory and the Python one
    checks = [_validate_argv(dirs["js"]), _validate_argv(dirs["py"])]
    js_raw = _run_js(node, runs["js"] + checks, base / "js")
    js = [_answer(r) for r in js_raw[: len(runs["js"])]]
    for i, (a, b) in enumerate(zip(py, js, strict=True)):
        label = " ".join(runs["py"][i][: runs["py"][i].index("--session-dir")])
        assert b == a, f"step {i} `{label}`: Python {a} vs JavaScript {b}"
    assert sum(1 for a in py if a.get("ok")) >= 1, "init at least wrote"
    fa, fb = _files(dirs["py"]), _files(dirs["js"])
    for lease in (fa["00-session.active"], fb["00-session.active"]):
        assert lease is not None
    assert fb == fa
    # each implementation validates the other's files, with the same verdict as its own
    own_py = _verdict(_run_python([_validate_argv(dirs["py"])], base)[0])
    other_py = _verdict(_run_python([_validate_argv(dirs["js"])], base)[0])
    own_js, other_js = _verdict(js_raw[-2]), _verdict(js_raw[-1])
    assert own_py[0] == 0 and own_js[0] == 0, (own_py, own_js)
    assert other_py == own_py
    assert other_js == own_js
