"""The release a user can pin (.github/workflows/release.yml, README "Versions and tags"): on a
version tag the workflow checks the tag against pyproject.toml, runs what CI runs, builds the
sdist, the wheel and the npm tarball, attaches them to the tag's GitHub release and moves the
major tag, which README's `uses:` line names. actionlint checks the workflow in `nox -s lint`;
here the file is read with a YAML parser and each `run` script parsed by bash, and the major
tag's move is played in a scratch git repository.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from conftest import REPO

RELEASE = REPO / ".github" / "workflows" / "release.yml"
# The Node 24 majors of the actions the workflows and action.yml use.
CURRENT = {
    "actions/checkout": "v5",
    "actions/setup-python": "v6",
    "actions/setup-node": "v5",
    "github/codeql-action/upload-sarif": "v4",
}


def load(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))
    return doc


def project() -> dict[str, Any]:
    doc: dict[str, Any] = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return doc["project"]


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = job["steps"]
    return out


def test_a_version_tag_triggers_tests_then_the_release() -> None:
    wf = load(RELEASE)
    # ruamel reads the key `on` as the string "on" (YAML 1.2)
    (pattern,) = wf["on"]["push"]["tags"]
    assert set(wf["on"]) == {"push"}
    assert re.fullmatch(pattern.replace(".", r"\.").replace("+", "+"), "v0.1.0")
    assert not re.fullmatch(pattern.replace(".", r"\."), "v0"), "the major tag is no release"
    assert wf["permissions"] == {"contents": "read"}
    test, release = wf["jobs"]["test"], wf["jobs"]["release"]
    assert release["needs"] == "test"
    assert release["permissions"] == {"contents": "write"}
    runs = "\n".join(s.get("run", "") for s in steps(test))
    assert "nox -s tests lint docs_check" in runs  # what .ci/run runs
    assert "pyproject.toml" in runs and '"v$version"' in runs  # the tag names the version


def test_the_release_builds_and_attaches_three_artefacts_and_moves_the_major_tag() -> None:
    runs = "\n".join(s.get("run", "") for s in steps(load(RELEASE)["jobs"]["release"]))
    assert "python -m build --sdist --wheel --outdir dist" in runs
    assert "npm pack --workspace conformance/js --pack-destination dist" in runs
    assert 'gh release create "$TAG" dist/*' in runs
    assert 'major="${TAG%%.*}"' in runs and 'git push --force origin "refs/tags/$major"' in runs


def test_every_run_script_parses_and_takes_inputs_through_the_environment() -> None:
    for job in load(RELEASE)["jobs"].values():
        for step in steps(job):
            if "run" not in step:
                continue
            assert step.get("shell") == "bash"
            assert "${{" not in step["run"], step.get("name")  # no expression in a script
            proc = subprocess.run(
                ["bash", "-n"], input=step["run"], capture_output=True, text=True, timeout=30
            )
            assert proc.returncode == 0, (step.get("name"), proc.stderr)


def test_the_actions_used_are_their_node_24_majors() -> None:
    used = [
        s["uses"]
        for path in (RELEASE, REPO / "action.yml")
        for job in (load(path)["jobs"].values() if "jobs" in load(path) else [load(path)["runs"]])
        for s in steps(job)
        if "uses" in s
    ]
    assert used
    for ref in used:
        name, _, version = ref.partition("@")
        assert CURRENT.get(name) == version, ref


def test_the_major_tag_move_points_it_at_the_release(tmp_path: Path) -> None:
    """The move step's script, run in a scratch repository with a bare `origin`: `v0` names
    the first release, then moves to the second; the version tags stay where they were."""
    script = next(
        s["run"]
        for s in steps(load(RELEASE)["jobs"]["release"])
        if s.get("name") == "Move the major tag to this release"
    )
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    git = ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q", "--bare", str(origin)], check=True)
    subprocess.run([*git, "init", "-q", str(work)], check=True)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "HOME": str(tmp_path)}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}

    def sh(*args: str, **extra: str) -> str:
        return subprocess.run(
            args, cwd=work, env={**env, **extra}, capture_output=True, text=True, check=True
        ).stdout.strip()

    sh("git", "remote", "add", "origin", str(origin))
    shas = []
    for version in ("v0.1.0", "v0.2.0"):
        sh("git", "commit", "-q", "--allow-empty", "-m", version)
        sha = sh("git", "rev-parse", "HEAD")
        sh("git", "tag", version)
        sh("git", "push", "-q", "origin", "HEAD:main", version)
        sh("bash", "-eo", "pipefail", "-c", script, TAG=version, GITHUB_SHA=sha)
        shas.append(sha)
        remote = sh("git", "ls-remote", str(origin), "refs/tags/v0^{}")
        assert remote.split()[0] == sha
    assert sh("git", "rev-parse", "v0.1.0^{commit}") == shas[0]


def test_readme_pins_the_action_by_the_major_tag_and_shows_the_sha_form() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    repo = project()["urls"]["Repository"].removeprefix("https://github.com/")
    major = "v" + project()["version"].split(".")[0]
    assert f"uses: {repo}@{major}\n" in text
    assert re.search(rf"uses: {re.escape(repo)}@COMMIT # v\d+\.\d+\.\d+\n", text)
    assert "'refs/tags/v0.1.0^{}'" in text  # how to find COMMIT, as a command that runs
    assert "tags are never moved" not in text


# Test tier (README "Test tiers"): two check-jsonschema processes, about 4 s of CPU.
@pytest.mark.slow
def test_the_workflow_meets_schemastores_github_workflow_schema(tmp_path: Path) -> None:
    """check-jsonschema's vendored SchemaStore schema for workflows (the `bench` extra) accepts
    release.yml and refuses a copy with a job missing its `runs-on` (the check can fail)."""
    exe = Path(sys.executable).parent / "check-jsonschema"
    if not exe.is_file() and shutil.which("check-jsonschema") is None:
        pytest.skip("check-jsonschema is not installed: pip install -e '.[bench]'")
    cmd = [str(exe) if exe.is_file() else "check-jsonschema", "--builtin-schema"]
    cmd.append("vendor.github-workflows")
    ok = subprocess.run([*cmd, str(RELEASE)], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    broken = tmp_path / "release.yml"
    broken.write_text(RELEASE.read_text().replace("    runs-on: ubuntu-latest\n", "", 1))
    bad = subprocess.run([*cmd, str(broken)], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1, bad.stdout + bad.stderr
