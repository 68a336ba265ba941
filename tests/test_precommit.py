"""The real pre-commit (the PyPI package) runs our hook from .pre-commit-hooks.yaml on a
temporary git repository. pre-commit builds the hook's own virtualenv from this checkout
(installing dependencies from the package index, as it does for any user)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from conftest import REPO, apex_state

# Test tier (README "Test tiers"): pre-commit installs the hooks from a copy of the checkout.
pytestmark = [
    pytest.mark.packaging,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]


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
    _git(dst, "tag", f"v{_pyproject()['project']['version']}")  # the release tag scheme
    return dst, tmp_path_factory.mktemp("pre-commit-home")


def _pyproject() -> dict[str, Any]:
    with open(REPO / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)


SUMMARY = re.compile(r"^\d+ file\(s\) checked: .*$", re.MULTILINE)


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


def _states(repo: Path, n_good: int, n_bad: int) -> list[str]:
    paths = []
    for i in range(n_good + n_bad):
        doc = apex_state()
        if i >= n_good:
            doc["steps"]["2"]["sub_step"] = "approval"  # SR414, one error
        f = repo / "agent-output" / f"p{i:02d}" / "00-session-state.json"
        f.parent.mkdir(parents=True)
        f.write_text(json.dumps(doc, indent=2))
        paths.append(str(f.relative_to(repo)))
    _git(repo, "add", ".")
    return paths


def test_validate_hook_prints_one_summary_that_agrees_with_the_exit_code(
    git_repo: Path, hooks: tuple[Path, Path]
) -> None:
    """Many files, one of them invalid (the last, so that a split run ends in a "valid"
    summary): pre-commit must run the hook once, and its one summary says invalid."""
    files = _states(git_repo, 15, 1)
    res = _try_repo(git_repo, hooks, "session-resume-validate", *files)
    assert res.returncode == 1, res.stdout + res.stderr
    summaries = SUMMARY.findall(res.stdout)
    assert summaries == [
        "16 file(s) checked: 15 valid, 1 invalid (1 error(s), 0 warning(s)) - invalid"
    ], res.stdout


def test_validate_hook_one_summary_when_all_valid(git_repo: Path, hooks: tuple[Path, Path]) -> None:
    files = _states(git_repo, 16, 0)
    res = _try_repo(git_repo, hooks, "session-resume-validate", *files)
    assert res.returncode == 0, res.stdout + res.stderr
    assert SUMMARY.findall(res.stdout) == [
        "16 file(s) checked: 16 valid, 0 invalid (0 error(s), 0 warning(s)) - valid"
    ], res.stdout


def test_migrate_check_hook_ends_with_a_summary_and_a_fix_that_works(
    git_repo: Path, hooks: tuple[Path, Path]
) -> None:
    files = _states(git_repo, 3, 0)
    old = []
    for rel in files[:2]:
        p = git_repo / rel
        doc = json.loads(p.read_text())
        doc["schema_version"] = "2.0"
        doc["lock"] = None
        p.write_text(json.dumps(doc, indent=2))
        old.append(rel)
    _git(git_repo, "add", ".")
    res = _try_repo(git_repo, hooks, "session-resume-migrate-check", *files)
    assert res.returncode == 1, res.stdout
    assert SUMMARY.findall(res.stdout) == ["3 file(s) checked: 2 to migrate, 1 current - failed"]
    fix = re.search(r"^fix: run `([^`]*)`", res.stdout, re.MULTILINE)
    assert fix, res.stdout
    argv = shlex.split(fix.group(1))
    assert argv[:2] == ["session-resume", "migrate"] and sorted(argv[2:]) == sorted(old)
    # the fix command, run as printed (through this checkout's CLI), makes the hook pass
    done = subprocess.run(
        [sys.executable, "-m", "session_resume", *argv[1:]],
        cwd=git_repo,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    _git(git_repo, "add", ".")
    res = _try_repo(git_repo, hooks, "session-resume-migrate-check", *files)
    assert res.returncode == 0, res.stdout
    assert SUMMARY.findall(res.stdout) == ["3 file(s) checked: 0 to migrate, 3 current - ok"]
    assert "fix:" not in res.stdout


def _readme_precommit_config() -> dict[str, Any]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    m = re.search(r"^### pre-commit\s*$(.*?)(?=^#)", text, re.MULTILINE | re.DOTALL)
    assert m, "README.md has no `### pre-commit` section"
    block = re.search(r"^```yaml\s*$(.*?)^```\s*$", m.group(1), re.MULTILINE | re.DOTALL)
    assert block, "the README's pre-commit section has no ```yaml snippet"
    config: dict[str, Any] = YAML(typ="safe").load(block.group(1))
    return config


def test_readme_snippet_names_the_repository_and_a_release_tag() -> None:
    config = _readme_precommit_config()
    (entry,) = config["repos"]
    project = _pyproject()["project"]
    assert entry["repo"] == project["urls"]["Repository"]
    assert entry["rev"] == f"v{project['version']}"
    hook_ids = {h["id"] for h in YAML(typ="safe").load(REPO / ".pre-commit-hooks.yaml")}
    assert {h["id"] for h in entry["hooks"]} == hook_ids


def test_readme_snippet_runs_as_copied(git_repo: Path, hooks: tuple[Path, Path]) -> None:
    """The README's snippet as a project's .pre-commit-config.yaml, with only the repository
    URL pointed at this checkout (tagged as a release is): `pre-commit run` uses the tag."""
    hook_repo, home = hooks
    config = _readme_precommit_config()
    config["repos"][0]["repo"] = str(hook_repo)
    (git_repo / ".pre-commit-config.yaml").write_text(json.dumps(config))
    files = _states(git_repo, 2, 1)
    env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    res = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--verbose"],
        cwd=git_repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert res.returncode == 1, res.stdout + res.stderr
    assert "session-resume validate" in res.stdout and "SR414" in res.stdout
    assert files[2] in res.stdout
    assert SUMMARY.findall(res.stdout) == [
        "3 file(s) checked: 2 valid, 1 invalid (1 error(s), 0 warning(s)) - invalid",
        "3 file(s) checked: 0 to migrate, 3 current - ok",
    ], res.stdout
