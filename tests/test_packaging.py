"""The distributions: the sdist holds everything its tests use, the wheel is typed and carries
its licence and data, and ``twine check --strict`` passes both.

``python -m build --no-isolation`` (PyPA build, with the hatchling backend installed from the
test extra, so nothing is downloaded) builds the sdist and then the wheel *from the sdist*, as
a packager does. The sdist is unpacked, and a representative part of the test suite runs from
it: its own ``validator/`` first on ``PYTHONPATH`` (the test checks that this is the code that
runs), its own schemas, templates, docs, examples, conformance cases and hook catalogue.
"""

from __future__ import annotations

import email
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

from conftest import REPO

# Test tier (README "Test tiers"): builds the sdist and the wheel.
pytestmark = pytest.mark.packaging

with open(REPO / "pyproject.toml", "rb") as _fh:
    PROJECT = tomllib.load(_fh)["project"]
NAME = PROJECT["name"].replace("-", "_")
VERSION = PROJECT["version"]

# What the sdist must hold beyond the package: each is read by a test or a nox session.
SDIST_MUST_HOLD = [
    "LICENSE",
    "README.md",
    "pyproject.toml",
    "noxfile.py",
    ".pre-commit-hooks.yaml",  # tests/test_precommit.py, docgen check
    "action.yml",  # tests/test_github_action.py
    "benchmarks/run.py",  # nox -s bench
    "package.json",  # npm ci, for the ajv and VS Code tests
    "package-lock.json",
    "validator/session_resume/py.typed",
    "schema/session-state/3.0.json",
    "schema/report/validate-1.json",
    "templates/SKILL.md.j2",
    "docs/spec.md",
    "docs/codes/README.md",
    "docs/skills/apex/SKILL.md",
    "examples/lifecycle.sh",
    "conformance/README.md",
    "tests/conftest.py",
    "tests/fixtures/sarif/sarif-schema-2.1.0.json",
    "tests/fixtures/sarif/NOTICE.md",
]
# Run from the unpacked sdist: the CLI, every JSON output's schema, the skill docs against
# skills-ref, and (inside test_cli_validate) docgen's freshness check of the generated docs.
SDIST_TESTS = [
    "tests/test_cli_validate.py",
    "tests/test_output_schemas.py",
    "tests/test_skills_ref.py",
]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    src = tmp_path_factory.mktemp("src") / "checkout"
    # Build from a copy, so that the build can leave nothing behind in the working tree.
    shutil.copytree(
        REPO,
        src,
        # what .gitignore lists (and .git): never part of a distribution
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv",
            ".ci-venv",
            ".nox",
            "node_modules",
            "__pycache__",
            "dist",
            "build",
            "*.egg-info",
            ".pytest_cache",
            ".mypy_cache",
            ".ruff_cache",
            ".hypothesis",
        ),
    )
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def _sdist(dist: Path) -> Path:
    return dist / f"{NAME}-{VERSION}.tar.gz"


def _wheel(dist: Path) -> Path:
    return dist / f"{NAME}-{VERSION}-py3-none-any.whl"


def test_twine_check_strict(dist: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(_sdist(dist)), str(_wheel(dist))],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("PASSED") == 2, proc.stdout


def test_sdist_holds_what_its_tests_need(dist: Path) -> None:
    prefix = f"{NAME}-{VERSION}/"
    with tarfile.open(_sdist(dist)) as tar:
        names = {n.removeprefix(prefix) for n in tar.getnames()}
    missing = [p for p in SDIST_MUST_HOLD if p not in names]
    assert missing == []
    assert not [n for n in names if "__pycache__" in n or n.startswith(".venv/")]


def test_wheel_is_typed_licensed_and_has_its_data(dist: Path) -> None:
    with zipfile.ZipFile(_wheel(dist)) as zf:
        names = set(zf.namelist())
        meta = email.message_from_bytes(zf.read(f"{NAME}-{VERSION}.dist-info/METADATA"))
    assert "session_resume/py.typed" in names
    assert f"{NAME}-{VERSION}.dist-info/licenses/LICENSE" in names
    assert "session_resume/_data/schema/report/validate-1.json" in names
    assert "session_resume/_data/templates/SKILL.md.j2" in names
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]
    classifiers = meta.get_all("Classifier") or []
    assert "Typing :: Typed" in classifiers
    assert "Programming Language :: Python :: 3.11" in classifiers
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert urls["Repository"] == "https://github.com/session-resume/session-resume"
    assert meta["Description-Content-Type"] == "text/markdown"


def test_licence_file_is_mit() -> None:
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "session-resume contributors" in text


def test_test_suite_runs_from_the_unpacked_sdist(dist: Path, tmp_path: Path) -> None:
    with tarfile.open(_sdist(dist)) as tar:
        tar.extractall(tmp_path, filter="data")
    root = tmp_path / f"{NAME}-{VERSION}"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(root / "validator"), *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    where = subprocess.run(
        [sys.executable, "-c", "import session_resume; print(session_resume.__file__)"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(root / "validator"), where
    docs = subprocess.run(
        [sys.executable, "-m", "session_resume.docgen", "check", "--root", str(root)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert docs.returncode == 0, docs.stdout + docs.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SDIST_TESTS],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and " failed" not in proc.stdout
