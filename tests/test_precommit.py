"""The real pre-commit (the PyPI package) runs our hook from .pre-commit-hooks.yaml on a
temporary git repository. pre-commit builds the hook's own virtualenv from this checkout
(installing dependencies from the package index, as it does for any user)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, apex_state

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def hooks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(hook repository, PRE_COMMIT_HOME). The hook repository is this checkout's working
    tree, committed or not, as a one-commit git repository."""
    dst = tmp_path_factory.mktemp("hook-repo")
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy2(REPO / name, dst / name)
    # what the wheel is built from (pyproject's force-include: the suite and the spec too)
    for name in ("validator", "schema", "templates", "conformance/cases"):
        if (REPO / name).is_dir():
            shutil.copytree(
                REPO / name, dst / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
            )
    (dst / "docs").mkdir()
    shutil.copy2(REPO / "docs" / "spec.md", dst / "docs" / "spec.md")
    _git(dst, "init", "-q")
    _git(dst, "add", ".")
    _git(dst, "commit", "-qm", "hook")
    return dst, tmp_path_factory.mktemp("pre-commit-home")


def _try_repo(
    repo: Path, hooks: tuple[Path, Path], hook_id: str, *files: str
) -> subprocess.CompletedProcess[str]:
    hook_repo, home = hooks
    env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pre_commit",
            "try-repo",
            str(hook_repo),
            hook_id,
            "--verbose",
            "--files",
            *files,
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "project"
    repo.mkdir()
    _git(repo, "init", "-q")
    return repo


def test_validate_hook_passes_valid_and_fails_broken(
    git_repo: Path, hooks: tuple[Path, Path]
) -> None:
    good = git_repo / "agent-output" / "good" / "00-session-state.json"
    bad = git_repo / "agent-output" / "bad" / "00-session-state.json"
    good.parent.mkdir(parents=True)
    bad.parent.mkdir(parents=True)
    good.write_text(json.dumps(apex_state(), indent=2))
    doc = apex_state()
    doc["steps"]["2"]["status"] = "blocked"
    bad.write_text(json.dumps(doc, indent=2))
    _git(git_repo, "add", ".")

    ok = _try_repo(git_repo, hooks, "session-resume-validate", str(good.relative_to(git_repo)))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Passed" in ok.stdout

    fail = _try_repo(git_repo, hooks, "session-resume-validate", str(bad.relative_to(git_repo)))
    assert fail.returncode == 1, fail.stdout + fail.stderr
    assert "Failed" in fail.stdout
    assert "SR309" in fail.stdout


def test_validate_hook_reports_zero_byte_file(git_repo: Path, hooks: tuple[Path, Path]) -> None:
    f = git_repo / "agent-output" / "p" / "00-session-state.json"
    f.parent.mkdir(parents=True)
    f.write_bytes(b"")
    _git(git_repo, "add", ".")
    res = _try_repo(git_repo, hooks, "session-resume-validate", str(f.relative_to(git_repo)))
    assert res.returncode == 1
    assert "SR110" in res.stdout


def test_migrate_check_hook(git_repo: Path, hooks: tuple[Path, Path]) -> None:
    old = git_repo / "agent-output" / "old" / "00-session-state.json"
    old.parent.mkdir(parents=True)
    doc = apex_state()
    doc["schema_version"] = "2.0"
    doc["lock"] = None
    old.write_text(json.dumps(doc, indent=2))
    _git(git_repo, "add", ".")
    before = old.read_bytes()
    res = _try_repo(git_repo, hooks, "session-resume-migrate-check", str(old.relative_to(git_repo)))
    assert res.returncode == 1, res.stdout
    assert "would migrate 2.0 -> 3.0" in res.stdout
    assert old.read_bytes() == before  # --check writes nothing

    current = git_repo / "agent-output" / "new" / "00-session-state.json"
    current.parent.mkdir(parents=True)
    current.write_text(json.dumps(apex_state(), indent=2))
    _git(git_repo, "add", ".")
    res = _try_repo(
        git_repo, hooks, "session-resume-migrate-check", str(current.relative_to(git_repo))
    )
    assert res.returncode == 0, res.stdout
