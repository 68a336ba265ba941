"""A fresh agent records a checkpoint without `--artifact` while the step's deliverable sits
on disk as a draft; the next chat's answer lists the draft under `read now` (partial: continue
it) and its To-do says to read only that list and redo nothing; following the plan literally,
the draft is continued and recorded, never written over. Both CLIs answer the same text."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Test tier (README "Test tiers"): runs the JavaScript CLI beside the Python one.
pytestmark = pytest.mark.node

REPO = Path(__file__).resolve().parents[1]
CLI_JS = REPO / "conformance" / "js" / "bin" / "session-resume.mjs"
DRAFT = "agent-output/harbor-api/01-requirements.md"


def _run(cmd: list[str], repo: Path) -> str:
    env = {**os.environ, "SESSION_RESUME_SESSION": "", "USER": "tester"}
    res = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def test_a_draft_without_artifact_is_read_and_continued(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("the JavaScript CLI needs node", pytrace=False)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    py = [sys.executable, "-m", "session_resume"]
    s1 = ("--project", "harbor-api", "--session", "s1")
    _run([*py, "init", "harbor-api", "--session", "s1", "--now", "2026-03-02T10:00:00Z"], repo)
    _run([*py, "start", "1", *s1, "--now", "2026-03-02T10:01:00Z"], repo)
    (repo / DRAFT).write_text("# Requirements\n\nDiscovery notes (draft).\n", encoding="utf-8")
    # the first chat records its checkpoint without --artifact, then stops
    _run([*py, "checkpoint", "1", "phase_1_discovery", *s1, "--now", "2026-03-02T10:02:00Z"], repo)
    _run([*py, "session", "end", *s1, "--now", "2026-03-02T10:03:00Z"], repo)
    ask = ["resume", "--project", "harbor-api", "--session", "s2", "--now", "2026-03-02T11:00:00Z"]
    text = _run([*py, *ask], repo)
    assert text == _run([node, str(CLI_JS), *ask], repo)
    lines = text.splitlines()
    at = lines.index("read now:")
    assert lines[at + 1] == f"  {DRAFT} (partial: continue it)"
    (todo,) = [ln for ln in lines if ln.startswith("reason SR703")]
    assert todo.endswith(
        "To do: read only what `read now` lists; redo nothing; next: checkpoint phase_2_workload"
    )
    # following the commands literally: each `after` line once its work is done
    runs = [ln.split("] ", 1)[1] for ln in lines if ln[:1].isdigit() and "] " in ln]
    assert runs[0].startswith("session-resume session start ")
    _run([*py, *shlex.split(runs[0])[1:], "--now", "2026-03-02T11:01:00Z"], repo)
    with (repo / DRAFT).open("a", encoding="utf-8") as fh:  # the draft continued
        fh.write("Workload pattern: web API.\n")
    (nxt,) = [r for r in runs if " checkpoint 1 phase_2_workload " in r]
    _run([*py, *shlex.split(nxt)[1:], "--now", "2026-03-02T11:05:00Z"], repo)
    kept = (repo / DRAFT).read_text(encoding="utf-8")
    assert kept.startswith("# Requirements\n\nDiscovery notes (draft).\n")
