"""A workflow that cannot be used (SR400-SR403) is an input error: every command refuses it
with exit 2 (docs/cli.md "Exit codes", docs/spec.md §5) and writes nothing. `init`, the
writers and `recover` answered 1 or an internal error (SR900, exit 3) once; the JavaScript
CLI's answers are compared with these in tests/test_js_package.py."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from conftest import run_cli

NOW = ["--now", "2026-03-02T12:00:00Z"]
BROKEN = "id: x\nsteps: [{key: 1.5}]\n"  # the workflow schema's findings: SR400

# the commands that name a workflow with --workflow (a corrupt state for recover: the fresh
# state it would create needs the workflow)
BY_OPTION = [
    ["init", "fresh", "--session", "s1"],
    ["validate", "agent-output/demo"],
    ["migrate", "agent-output/demo"],
    ["recover", "agent-output/corrupt"],
    ["recover", "agent-output/demo"],
    ["resume", "agent-output/demo"],
    ["report", "agent-output/demo"],
    ["budget", "1", "--project", "demo"],
    ["render", "handoff", "agent-output/demo"],
    ["render", "skill", "--out", "skill-out"],
]
# every command that reads the configured workflow to find `--project`'s session directory
BY_CONFIG = [
    ["init", "fresh", "--session", "s1"],
    ["init", "demo", "--fresh", "--session", "s0"],
    ["start", "2", "--project", "demo", "--session", "s0"],
    ["checkpoint", "1", "phase_1_discovery", "--project", "demo", "--session", "s0"],
    ["complete", "1", "--project", "demo", "--session", "s0"],
    ["skip", "3", "--reason", "r", "--project", "demo", "--session", "s0"],
    ["decide", "region", "x", "--project", "demo", "--session", "s0"],
    ["finding", "add", "T", "--project", "demo", "--session", "s0"],
    ["finding", "resolve", "T", "--project", "demo", "--session", "s0"],
    ["transition", "--complete", "1", "--start", "2", "--project", "demo", "--session", "s0"],
    ["session", "start", "--project", "demo", "--session", "s0"],
    ["session", "end", "--project", "demo", "--session", "s0"],
    ["ping", "--project", "demo", "--session", "s0"],
    ["archive", "--project", "demo"],
    ["sync-todos", "--project", "demo"],
    ["validate", "--project", "demo"],
    ["migrate", "--project", "demo"],
    ["recover", "--project", "demo"],
    ["resume", "--project", "demo"],
    ["report", "--project", "demo"],
    ["budget", "1", "--project", "demo"],
]


def _files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    assert run_cli("init", "demo", "--session", "s0", *NOW, cwd=tmp_path).returncode == 0
    assert (
        run_cli("start", "1", "--project", "demo", "--session", "s0", *NOW, cwd=tmp_path).returncode
        == 0
    )
    (tmp_path / "agent-output" / "corrupt").mkdir()
    (tmp_path / "agent-output" / "corrupt" / "00-session-state.json").write_text("{")
    (tmp_path / "bad.yaml").write_text(BROKEN, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("argv", BY_OPTION, ids=lambda a: " ".join(a))
def test_broken_workflow_option_is_exit_2(argv: list[str], repo: Path) -> None:
    before = _files(repo)
    takes_now = argv[0] not in ("budget", "render")
    proc = run_cli(*argv, "--workflow", "bad.yaml", *(NOW if takes_now else []), cwd=repo)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "bad.yaml: SR400 error: /steps/0/key: expected string, got 1.5" in proc.stderr
    assert _files(repo) == before  # refused before anything was written


@pytest.mark.parametrize("argv", BY_CONFIG, ids=lambda a: " ".join(a))
def test_broken_configured_workflow_is_exit_2(argv: list[str], repo: Path) -> None:
    (repo / ".session-resume.yaml").write_text("workflow: bad.yaml\n", encoding="utf-8")
    before = _files(repo)
    takes_now = argv[0] not in ("budget", "sync-todos", "archive")
    proc = run_cli(*argv, *(NOW if takes_now else []), cwd=repo)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "bad.yaml: SR400 error: /steps/0/key: expected string, got 1.5" in proc.stderr
    assert _files(repo) == before


@pytest.mark.parametrize(
    "argv",
    [
        ["start", "2", "--session-dir", "agent-output/demo", "--session", "s0"],
        ["decide", "region", "x", "--session-dir", "agent-output/demo", "--session", "s0"],
        ["resume", "agent-output/demo"],
    ],
    ids=lambda a: a[0],
)
def test_state_naming_an_unknown_workflow_is_exit_2(argv: list[str], repo: Path) -> None:
    """SR403: the state names a workflow that is neither built in nor configured."""
    state = repo / "agent-output" / "demo" / "00-session-state.json"
    state.write_text(state.read_text().replace('"workflow": "apex"', '"workflow": "nope"'))
    before = _files(repo)
    proc = run_cli(*argv, *NOW, cwd=repo)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "SR403 error: the state names workflow 'nope'" in proc.stderr
    assert _files(repo) == before
