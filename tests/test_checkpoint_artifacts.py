"""A checkpoint that lists a file not on disk is recorded with a coded warning (SR714) saying
to write it: a fresh agent recorded a checkpoint naming a deliverable it had deleted, and
nothing told it (fresh-agent review). A file that exists gives no warning."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import run_cli

NOW = ("--now", "2026-03-02T12:00:00Z")
S = ("--project", "demo", "--session", "s1")


def _repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for argv in (["init", "demo", "--session", "s1"], ["session", "start", *S], ["start", "1", *S]):
        assert run_cli(*argv, *NOW, cwd=tmp_path).returncode == 0
    return tmp_path


def test_a_checkpoint_listing_a_missing_file_warns_sr714(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    proc = run_cli(
        "checkpoint",
        "1",
        "phase_1_discovery",
        "--artifact",
        "01-requirements.md",
        *S,
        "--format",
        "json",
        *NOW,
        cwd=repo,
    )
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    (w,) = answer["warnings"]
    assert w["code"] == "SR714"
    assert "agent-output/demo/01-requirements.md" in w["message"] and "not on disk" in w["message"]
    assert "Write agent-output/demo/01-requirements.md" in w["hint"]
    text = run_cli(
        "checkpoint",
        "1",
        "phase_2_workload",
        "--artifact",
        "01-requirements.md",
        *S,
        *NOW,
        cwd=repo,
    )
    assert text.returncode == 0 and "SR714 warning" in text.stderr, text.stderr


def test_a_checkpoint_listing_files_on_disk_has_no_warning(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "agent-output" / "demo" / "01-requirements.md").write_text("# req\n")
    proc = run_cli(
        "checkpoint",
        "1",
        "phase_1_discovery",
        "--artifact",
        "agent-output/demo/01-requirements.md",
        *S,
        "--format",
        "json",
        *NOW,
        cwd=repo,
    )
    assert proc.returncode == 0, proc.stderr
    assert "warnings" not in json.loads(proc.stdout)
