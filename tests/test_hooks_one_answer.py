"""One answer per hook event, whatever reads which file: after `hooks install`, each host
(VS Code, Claude Code, GitHub Copilot CLI) runs the command of every configured file it reads
(services/hook_hosts.py: VS Code and Copilot read .github/hooks and .claude/settings.json,
Claude Code only the latter); fed the host's documented input, those commands give exactly
one answer per event, in that host's output shape, and a compaction writes one worklog note.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from test_hooks import FIXTURES, make_repo, schema, write_artifact

from session_resume.services.hook_hosts import BY_NAME, CLAUDE_FILE, GITHUB_FILE

from conftest import run_cli

# Test tier (README "Test tiers"): many CLI processes.
pytestmark = pytest.mark.slow

EVENTS = {
    "session-start": "SessionStart",
    "pre-tool-use": "PreToolUse",
    "post-tool-use": "PostToolUse",
    "stop": "Stop",
    "pre-compact": "PreCompact",
}
# The input each host sends to a command of a configuration with PascalCase event names
# (what `hooks install` writes): Copilot's then is its VS Code compatible form.
INPUT = {
    "vscode": "{event}",
    "claude": "{event}",
    "copilot": "{event}-vscode-compatible",
}
WORKLOG = "00-worklog.jsonl"


def configured(root: Path, rel: Path, name: str) -> list[str]:
    """The argv (after `session-resume`) of our entry for ``name`` in the file ``rel``."""
    doc = json.loads((root / rel).read_text())
    entry = doc["hooks"][name][0]
    command = entry["hooks"][0]["command"] if "hooks" in entry else entry["bash"]
    argv = shlex.split(command)
    assert argv[0] == "session-resume"
    return argv[1:]


def host_input(host: str, event: str, root: Path, sdir: Path) -> bytes:
    name = INPUT[host].format(event=event)
    text = (FIXTURES / host / f"{name}.json").read_text(encoding="utf-8")
    return text.replace("{REPO}", str(root)).replace("{SESSION_DIR}", str(sdir)).encode()


def notes(sdir: Path) -> int:
    lines = (sdir / WORKLOG).read_text(encoding="utf-8").splitlines()
    return sum(1 for line in lines if '"context_compacted"' in line)


def answers(root: Path, files: tuple[Path, ...], event: str, data: bytes) -> list[Any]:
    out = []
    for rel in files:
        res = run_cli(*configured(root, rel, EVENTS[event]), input=data, cwd=root)
        assert res.returncode == 0 and res.stderr == "", res.stderr
        if res.stdout.strip():
            out.append(json.loads(res.stdout))
    return out


@pytest.fixture
def installed(tmp_path: Path) -> tuple[Path, Path]:
    root, sdir = make_repo(tmp_path)
    assert run_cli("hooks", "install", cwd=root).returncode == 0
    write_artifact(sdir)
    return root, sdir


MATRIX = [(h, e) for h in ("vscode", "claude", "copilot") for e in EVENTS]


@pytest.mark.parametrize(("host", "event"), MATRIX, ids=[f"{h}-{e}" for h, e in MATRIX])
def test_every_file_a_host_reads_gives_one_answer(
    installed: tuple[Path, Path], host: str, event: str
) -> None:
    root, sdir = installed
    files = BY_NAME[host].reads
    data = host_input(host, event, root, sdir)
    before = notes(sdir)
    got = answers(root, files, event, data)
    if event == "pre-compact":
        assert got == []
        assert notes(sdir) == before + 1
        return
    assert len(got) == 1, got
    assert [e.message for e in schema(host).iter_errors(got[0])] == []
    assert notes(sdir) == before


@pytest.mark.parametrize(
    ("host", "rel"),
    [("vscode", GITHUB_FILE), ("vscode", CLAUDE_FILE), ("copilot", GITHUB_FILE)]
    + [("copilot", CLAUDE_FILE), ("claude", CLAUDE_FILE)],
)
def test_each_file_alone_answers_its_readers(tmp_path: Path, host: str, rel: Path) -> None:
    """With only one host's file installed, a host reading that file is answered by it
    (Copilot and VS Code by the .claude/settings.json command when no .github file runs the
    event), in the reader's own shape."""
    root, sdir = make_repo(tmp_path)
    only = "claude" if rel == CLAUDE_FILE else "vscode"
    assert run_cli("hooks", "install", "--host", only, cwd=root).returncode == 0
    write_artifact(sdir)
    for event in ("session-start", "pre-tool-use", "stop"):
        got = answers(root, (rel,), event, host_input(host, event, root, sdir))
        assert len(got) == 1, (event, got)
        assert [e.message for e in schema(host).iter_errors(got[0])] == []


def test_a_file_whose_event_entry_was_removed_leaves_the_other_to_answer(
    installed: tuple[Path, Path],
) -> None:
    """Deleting the Stop entry of the .github file (its own way to turn a hook off) hands
    VS Code's and Copilot's stops to the .claude/settings.json command: still one answer."""
    root, sdir = installed
    doc = json.loads((root / GITHUB_FILE).read_text())
    del doc["hooks"]["Stop"]
    (root / GITHUB_FILE).write_text(json.dumps(doc))
    for host in ("vscode", "copilot"):
        got = answers(root, (CLAUDE_FILE,), "stop", host_input(host, "stop", root, sdir))
        assert len(got) == 1
        assert [e.message for e in schema(host).iter_errors(got[0])] == []
