"""`session-resume hooks install|uninstall` (issue 28): the configuration VS Code, Claude Code
and the Copilot agents read, written idempotently, merged into an existing
.claude/settings.json without losing a key or a hook, removed exactly; never through a link
out of the repository (SR105), never over a file it cannot merge (SR190); the commands it
writes work from any directory."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from session_resume.services.hook_config import CLAUDE_FILE, GITHUB_FILE

from conftest import run_cli

STATE = "00-session-state.json"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def hooks(root: Path, *args: str, code: int = 0) -> str:
    res = run_cli("hooks", *args, cwd=root)
    assert res.returncode == code, res.stdout + res.stderr
    return res.stdout + res.stderr


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


def test_install_writes_both_files_and_a_second_install_changes_nothing(repo: Path) -> None:
    out = hooks(repo, "install")
    assert ".github/hooks/session-resume.json: created" in out
    assert ".claude/settings.json: created" in out
    gh = json.loads((repo / GITHUB_FILE).read_text())
    assert gh["version"] == 1
    assert set(gh["hooks"]) == {"SessionStart", "PreToolUse", "PostToolUse", "Stop", "PreCompact"}
    entry = gh["hooks"]["PreToolUse"][0]
    assert (
        entry["command"]
        == entry["bash"]
        == entry["powershell"]
        == "session-resume hook pre-tool-use"
    )
    claude = json.loads((repo / CLAUDE_FILE).read_text())
    group = claude["hooks"]["PreToolUse"][0]
    # Claude Code's file tools and both of its shells (PowerShell is a documented tool)
    assert group["matcher"] == "Write|Edit|MultiEdit|NotebookEdit|Bash|PowerShell"
    # after every tool: a protocol file changed by any tool is put back
    assert claude["hooks"]["PostToolUse"][0]["matcher"] == "*"
    assert group["hooks"][0]["command"] == "session-resume hook pre-tool-use --host claude"
    before = files(repo)
    again = hooks(repo, "install")
    assert again.count(": unchanged") == 2
    assert files(repo) == before


def test_the_merge_keeps_every_key_and_hook_and_uninstall_removes_exactly_ours(
    repo: Path,
) -> None:
    (repo / ".claude").mkdir()
    mine: dict[str, Any] = {
        "permissions": {"allow": ["Bash(npm test)"]},
        "env": {"X": "1"},
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}
            ],
            "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
        },
    }
    (repo / CLAUDE_FILE).write_text(json.dumps(mine, indent=4) + "\n")
    hooks(repo, "install", "--host", "claude")
    merged = json.loads((repo / CLAUDE_FILE).read_text())
    assert merged["permissions"] == mine["permissions"] and merged["env"] == mine["env"]
    assert merged["hooks"]["PreToolUse"][0] == mine["hooks"]["PreToolUse"][0]
    assert len(merged["hooks"]["PreToolUse"]) == 2
    assert merged["hooks"]["Notification"] == mine["hooks"]["Notification"]
    assert not (repo / GITHUB_FILE).exists()  # --host claude: only Claude Code's file
    out = hooks(repo, "uninstall", "--host", "claude")
    assert ".claude/settings.json: updated" in out
    assert json.loads((repo / CLAUDE_FILE).read_text()) == mine


def test_uninstall_removes_the_files_it_created(repo: Path) -> None:
    hooks(repo, "install")
    out = hooks(repo, "uninstall")
    assert out.count(": removed") == 2
    assert not (repo / GITHUB_FILE).exists() and not (repo / CLAUDE_FILE).exists()
    assert ": absent" in hooks(repo, "uninstall")


def test_an_entry_someone_edited_is_no_longer_ours(repo: Path) -> None:
    hooks(repo, "install", "--host", "vscode")
    doc = json.loads((repo / GITHUB_FILE).read_text())
    doc["hooks"]["Stop"][0]["timeout"] = 99
    (repo / GITHUB_FILE).write_text(json.dumps(doc))
    hooks(repo, "uninstall", "--host", "copilot")
    left = json.loads((repo / GITHUB_FILE).read_text())
    assert list(left["hooks"]) == ["Stop"] and left["hooks"]["Stop"][0]["timeout"] == 99


def test_dry_run_writes_nothing(repo: Path) -> None:
    out = hooks(repo, "install", "--dry-run")
    assert "would be created" in out and '"SessionStart"' in out
    assert files(repo) == {}
    hooks(repo, "install")
    before = files(repo)
    assert "would be removed" in hooks(repo, "uninstall", "--dry-run")
    assert files(repo) == before


def test_json_output(repo: Path) -> None:
    doc = json.loads(hooks(repo, "install", "--format", "json"))
    assert doc["ok"] is True
    assert {c["file"]: c["action"] for c in doc["changes"]} == {
        ".github/hooks/session-resume.json": "created",
        ".claude/settings.json": "created",
    }


@pytest.mark.parametrize("what", [".claude", ".claude/settings.json", ".github", ".github/hooks"])
def test_a_link_out_of_the_repository_is_refused(repo: Path, tmp_path: Path, what: str) -> None:
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    target = decoy / "settings.json" if what.endswith(".json") else decoy
    if what.endswith(".json"):
        target.write_text("{}\n")
    link = repo / what
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    before = {p.name: p.read_bytes() for p in decoy.iterdir()}
    out = hooks(repo, "install", code=1)
    assert "SR105" in out and "nothing was written" in out
    assert {p.name: p.read_bytes() for p in decoy.iterdir()} == before
    other = GITHUB_FILE if what.startswith(".claude") else CLAUDE_FILE
    assert not (repo / other).exists()  # nothing is written when one file is refused
    hooks(repo, "uninstall", code=1)


@pytest.mark.parametrize(
    "text", ["{not json", "[]", '{"hooks": []}', '{"hooks": {"Stop": {}}}', "\xff"]
)
def test_a_file_that_cannot_be_merged_is_refused_and_kept(repo: Path, text: str) -> None:
    (repo / ".claude").mkdir()
    data = text.encode("latin-1")
    (repo / CLAUDE_FILE).write_bytes(data)
    out = hooks(repo, "install", code=1)
    assert "SR190" in out and "nothing was written" in out
    assert (repo / CLAUDE_FILE).read_bytes() == data
    assert not (repo / GITHUB_FILE).exists()


UNWRITABLE = [
    ('{"a": "\\ud800", "hooks": {}}', "lone surrogate"),
    ('{"\\udfff": 1}', "lone surrogate"),
    ('{"x": [1e400]}', "beyond any float"),
    ('{"x": -1E999}', "beyond any float"),
    ('{"x": NaN}', "NaN"),
    ('{"x": {"y": Infinity}}', "Infinity"),
]


@pytest.mark.parametrize("path", [CLAUDE_FILE, GITHUB_FILE], ids=["claude", "github"])
@pytest.mark.parametrize(("text", "why"), UNWRITABLE)
def test_a_file_json_cannot_write_back_is_refused_and_kept(
    repo: Path, path: Path, text: str, why: str
) -> None:
    """A lone surrogate was SR900 and a non-finite number was written back as Infinity or
    NaN (no longer JSON for the host): SR190 now, nothing written, in either file."""
    (repo / path).parent.mkdir(parents=True)
    (repo / path).write_text(text, encoding="utf-8")
    before = files(repo)
    for args in (("install",), ("uninstall",), ("install", "--dry-run")):
        out = hooks(repo, *args, code=1)
        assert "SR190" in out and why in out and "nothing was written" in out, out
        assert files(repo) == before


def _configured_command(root: Path, path: Path, event: str) -> list[str]:
    doc = json.loads((root / path).read_text())
    entry = doc["hooks"][event][0]
    command = entry["hooks"][0]["command"] if "hooks" in entry else entry["bash"]
    argv = shlex.split(command)
    assert argv[0] == "session-resume"
    return argv[1:]


@pytest.mark.parametrize("path", [GITHUB_FILE, CLAUDE_FILE])
def test_the_configured_commands_work_from_any_directory(
    repo: Path, tmp_path: Path, path: Path
) -> None:
    assert run_cli("init", "shop", cwd=repo).returncode == 0
    hooks(repo, "install")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    state = repo / "agent-output" / "shop" / STATE
    doc = {
        "session_id": "s",
        "cwd": str(repo),
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(state)},
    }
    res = run_cli(
        *_configured_command(repo, path, "PreToolUse"),
        cwd=elsewhere,
        input=json.dumps(doc).encode(),
    )
    assert res.returncode == 0
    assert json.loads(res.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_vscode_running_the_claude_configuration_answers_once(repo: Path) -> None:
    """VS Code reads .claude/settings.json as well as .github/hooks: with both installed, the
    Claude Code entry stays silent for VS Code's input."""
    assert run_cli("init", "shop", cwd=repo).returncode == 0
    state = repo / "agent-output" / "shop" / STATE
    doc = {
        "timestamp": "2026-02-09T10:30:00.000Z",
        "cwd": str(repo),
        "sessionId": "s",
        "hookEventName": "PreToolUse",
        "tool_name": "editFiles",
        "tool_input": {"files": [str(state)]},
    }
    data = json.dumps(doc).encode()
    hooks(repo, "install", "--host", "claude")
    claude_argv = _configured_command(repo, CLAUDE_FILE, "PreToolUse")
    assert run_cli(*claude_argv, input=data, cwd=repo).stdout  # only .claude: it answers
    hooks(repo, "install")
    assert run_cli(*claude_argv, input=data, cwd=repo).stdout == ""
    github_argv = _configured_command(repo, GITHUB_FILE, "PreToolUse")
    out = json.loads(run_cli(*github_argv, input=data, cwd=repo).stdout)
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_install_leaves_the_bytecode_the_first_hook_needs(repo: Path, tmp_path: Path) -> None:
    """On a package without bytecode the first session-start compiled every module of the
    plan while the host waited; `hooks install` imports them, so Python's own cache holds
    them (and the state schema's generated check) before the host's first event. A dry run
    writes nothing, bytecode included."""

    def compiled_after(*args: str) -> set[str]:
        cache = tmp_path / f"pycache{len(args)}"
        env = {"PYTHONPYCACHEPREFIX": str(cache), "PYTHONDONTWRITEBYTECODE": ""}
        assert run_cli("hooks", "install", *args, cwd=repo, env=env).returncode == 0
        return {p.name.split(".")[0] for p in cache.rglob("*.pyc") if "session_resume" in str(p)}

    dry = compiled_after("--dry-run")
    real = compiled_after()
    needed = {"resume", "snapshot", "resume_decision", "plan_text", "worklog", "_session_state_3_0"}
    assert needed <= real, sorted(needed - real)
    assert not needed & dry, sorted(needed & dry)
