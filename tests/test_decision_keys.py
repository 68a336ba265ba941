"""A decision key the workflow does not define (issue 27: `decide regoin x`): refused with
SR422 where the workflow lists its decision keys (apex), naming the keys and, in the hint,
the command with the nearest key, runnable as printed; accepted where it lists none (generic,
dotagent: free-form). Through the real CLI (`decide`, `transition --decision`) and the MCP
SDK's own client (`decide`)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from conftest import run_cli

STATE = "00-session-state.json"
APEX_KEYS = (
    "region, compliance, budget, architecture_pattern, deployment_strategy, complexity, "
    "review_depth, iac_tool"
)


def _repo(tmp_path: Path, workflow: str) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    proc = run_cli("init", "demo", "--workflow", workflow, cwd=root)
    assert proc.returncode == 0, proc.stderr
    return root


def _state(root: Path, workflow: str = "apex") -> bytes:
    sub = "memory" if workflow == "dotagent" else "agent-output"
    return (root / sub / "demo" / STATE).read_bytes()


def test_a_misspelled_key_is_refused_with_the_keys_and_the_nearest(tmp_path: Path) -> None:
    root = _repo(tmp_path, "apex")
    before = _state(root)
    proc = run_cli(
        "decide", "regoin", "west europe", "--project", "demo", "--format", "json", cwd=root
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = json.loads(proc.stdout)
    assert out["ok"] is False
    (d,) = out["diagnostics"]
    assert d["code"] == "SR422" and d["pointer"] == "/decisions/regoin"
    assert f"its keys: {APEX_KEYS}" in d["message"]
    assert "did you mean 'region'?" in d["message"]
    assert d["hint"] == "Run `session-resume decide region 'west europe' --project demo`."
    assert _state(root) == before  # nothing written

    # the hint's command runs as printed, from a subdirectory too, and records the decision
    (cmd,) = re.findall(r"`(session-resume [^`]+)`", d["hint"])
    (root / "docs").mkdir()
    proc = run_cli(*shlex.split(cmd)[1:], cwd=root / "docs")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(_state(root))["decisions"]["region"] == "west europe"


def test_a_key_near_none_names_the_keys_and_the_decision_log(tmp_path: Path) -> None:
    root = _repo(tmp_path, "apex")
    proc = run_cli("decide", "zzz", "1", "--project", "demo", cwd=root)
    assert proc.returncode == 1
    assert "SR422" in proc.stderr and f"its keys: {APEX_KEYS}" in proc.stderr
    assert "did you mean" not in proc.stderr
    assert "`session-resume decide --log --title T --choice C --rationale R --project demo`" in (
        proc.stderr
    )
    assert "Traceback" not in proc.stderr


def test_transition_refuses_a_misspelled_decision_before_writing(tmp_path: Path) -> None:
    root = _repo(tmp_path, "apex")
    assert run_cli("start", "1", "--project", "demo", cwd=root).returncode == 0
    before = _state(root)
    proc = run_cli(
        "transition",
        *("--complete", "1", "--start", "2", "--decision", "regoin=x", "--project", "demo"),
        cwd=root,
    )
    assert proc.returncode == 1
    assert "SR422" in proc.stderr and "did you mean 'region'?" in proc.stderr
    assert "Pass `--decision region=x` instead." in proc.stderr
    assert _state(root) == before


@pytest.mark.parametrize("workflow", ["generic", "dotagent"])
def test_free_form_workflows_accept_any_key(tmp_path: Path, workflow: str) -> None:
    root = _repo(tmp_path, workflow)
    # the directory named: dotagent's sessions live under memory/ (its session_dir pattern)
    sub = "memory" if workflow == "dotagent" else "agent-output"
    proc = run_cli("decide", "regoin", "x", "--session-dir", f"{sub}/demo", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(_state(root, workflow))["decisions"]["regoin"] == "x"


@pytest.mark.mcp
def test_mcp_decide_refuses_a_misspelled_key(tmp_path: Path) -> None:
    pytest.importorskip(
        "mcp", reason="the optional MCP SDK is not installed (pip install -e '.[mcp]')"
    )
    import sys

    import anyio
    from mcp import Client, StdioServerParameters

    root = _repo(tmp_path, "apex")
    before = _state(root)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "session_resume", "mcp", "--root", str(root)],
        cwd=str(root),
    )

    async def go() -> tuple[object, object]:
        async with Client(params, read_timeout_seconds=60) as c:
            bad = await c.call_tool("decide", {"project": "demo", "key": "regoin", "value": "x"})
            good = await c.call_tool("decide", {"project": "demo", "key": "region", "value": "x"})
            return bad, good

    bad, good = anyio.run(go)
    assert bad.is_error  # type: ignore[attr-defined]
    (d,) = bad.structured_content["diagnostics"]  # type: ignore[attr-defined]
    assert d["code"] == "SR422"
    assert "did you mean 'region'?" in d["message"] and APEX_KEYS in d["message"]
    # over MCP a refusal names the tool, not a CLI command
    assert "session-resume" not in d["hint"] and "`decide`" in d["hint"], d["hint"]
    assert not good.is_error, good  # type: ignore[attr-defined]
    assert json.loads(_state(root))["decisions"]["region"] == "x"
    assert before != _state(root)


@pytest.mark.mcp
def test_mcp_transition_hint_names_the_tool_argument_not_the_cli_option(tmp_path: Path) -> None:
    """Over MCP, SR422 from `transition` names the `decisions` argument, not `--decision`;
    the argument it shows, passed as shown, makes the same call succeed."""
    pytest.importorskip(
        "mcp", reason="the optional MCP SDK is not installed (pip install -e '.[mcp]')"
    )
    import re
    import sys

    import anyio
    from mcp import Client, StdioServerParameters

    root = _repo(tmp_path, "apex")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "session_resume", "mcp", "--root", str(root)],
        cwd=str(root),
    )
    move = {"project": "demo", "complete": "1", "start": "2"}

    async def go() -> tuple[object, object, object]:
        async with Client(params, read_timeout_seconds=60) as c:
            started = await c.call_tool("start", {"project": "demo", "step": "1"})
            assert not started.is_error, started
            bad = await c.call_tool("transition", {**move, "decisions": {"regoin": "x"}})
            (d,) = bad.structured_content["diagnostics"]  # type: ignore[attr-defined]
            shown = re.search(r"`(\{.*\})`", d["hint"])
            assert shown, d["hint"]
            good = await c.call_tool("transition", {**move, **json.loads(shown.group(1))})
            return bad, d, good

    bad, d, good = anyio.run(go)
    assert bad.is_error  # type: ignore[attr-defined]
    assert d["code"] == "SR422" and "did you mean 'region'?" in d["message"]  # type: ignore[index]
    hint = d["hint"]  # type: ignore[index]
    assert "--decision" not in hint and "session-resume" not in hint, hint
    # the refused call is the transition: the hint names its argument, not the CLI option
    assert '`{"decisions": {"region": "x"}}`' in hint and "--decision" not in hint, hint
    assert not good.is_error, good  # type: ignore[attr-defined]
    assert json.loads(_state(root))["decisions"]["region"] == "x"
