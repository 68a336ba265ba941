"""A mistyped command or option names the nearest one (`valdate`: did you mean `validate`?),
and `--ignore` naming read errors (SR1xx, which are always reported) says it changes
nothing instead of silently doing nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import run_cli


def test_a_mistyped_command_names_the_nearest(tmp_path: Path) -> None:
    proc = run_cli("valdate", "x", cwd=tmp_path)
    assert proc.returncode == 2
    assert "did you mean `validate`?" in proc.stderr, proc.stderr


def test_a_mistyped_option_names_the_nearest(tmp_path: Path) -> None:
    proc = run_cli("resume", "--projct", "p", cwd=tmp_path)
    assert proc.returncode == 2
    assert "did you mean `--project` for `--projct`?" in proc.stderr, proc.stderr
    proc = run_cli("validate", "--zzzzzz", cwd=tmp_path)
    assert proc.returncode == 2 and "did you mean" not in proc.stderr


def test_ignoring_a_read_error_says_it_cannot(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert run_cli("init", "p", "--now", "2026-11-22T12:00:00Z", cwd=tmp_path).returncode == 0
    proc = run_cli("validate", "agent-output/p", "--ignore", "SR140,SR301", cwd=tmp_path)
    assert "note: --ignore SR140: read errors (SR1xx) cannot be ignored" in proc.stderr
    proc = run_cli("validate", "agent-output/p", "--ignore", "SR301", cwd=tmp_path)
    assert "note:" not in proc.stderr
