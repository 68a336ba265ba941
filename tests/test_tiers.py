"""The test tiers (README "Test tiers", tests/conftest.py): every marker is registered and an
unregistered one is refused; `pytest` alone collects the fast tier, which holds no test of
another tier; every tier has tests; naming what to run, or `--all-tiers`, runs every tier.

Each check is one `pytest --collect-only` in a subprocess, which reports what it kept and what
it deselected with each test's markers (nothing runs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from conftest import FAST_TIER, REPO, SLOW_TIERS

# A plugin for the collecting pytest: every test kept and deselected, with its markers.
COLLECT = """
import json, os, sys
import pytest

class Report:
    def __init__(self):
        self.kept, self.dropped = {}, {}

    def pytest_deselected(self, items):
        self.dropped.update({i.nodeid: sorted({m.name for m in i.iter_markers()}) for i in items})

    def pytest_collection_finish(self, session):
        self.kept = {i.nodeid: sorted({m.name for m in i.iter_markers()}) for i in session.items}
        self.markexpr = session.config.option.markexpr

report = Report()
code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *sys.argv[1:]], [report])
with open(os.environ["TIERS_REPORT"], "w") as f:
    json.dump({"code": int(code), "kept": report.kept, "dropped": report.dropped,
               "markexpr": getattr(report, "markexpr", None)}, f)
"""


# The toy suites below need none of the installed plugins (Hypothesis, xdist, anyio): without
# them pytest starts in a fraction of the time.
NO_PLUGINS = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def _collect(tmp_path: Path, *args: str, cwd: Path = REPO, plugins: bool = True) -> dict[str, Any]:
    out = tmp_path / "tiers.json"
    proc = subprocess.run(
        [sys.executable, "-c", COLLECT, *args],
        cwd=cwd,
        env={**os.environ, "TIERS_REPORT": str(out), **({} if plugins else NO_PLUGINS)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.is_file(), proc.stdout + proc.stderr
    report: dict[str, Any] = json.loads(out.read_text())
    assert report["code"] == 0, proc.stdout[-3000:] + proc.stderr
    return report


def _registered() -> set[str]:
    ini = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "--strict-markers" in ini["addopts"].split()
    return {line.split(":")[0].strip() for line in ini["markers"]}


# The suite's own tiers: one collection of the whole suite (some seconds of CPU), so `slow`.
@pytest.fixture(scope="module")
def default_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What `pytest` with no arguments, in the repository root, would run."""
    return _collect(tmp_path_factory.mktemp("default"))


def test_the_tiers_are_the_registered_markers() -> None:
    assert _registered() == {*SLOW_TIERS, "serial"}


@pytest.mark.slow
def test_pytest_alone_is_the_fast_tier(default_run: dict[str, Any]) -> None:
    kept, dropped = default_run["kept"], default_run["dropped"]
    assert default_run["markexpr"] == FAST_TIER
    assert kept and not set(kept) & set(dropped)
    in_a_tier = {t: marks for t, marks in kept.items() if set(marks) & set(SLOW_TIERS)}
    assert not in_a_tier, f"the fast tier holds tests of other tiers: {in_a_tier}"
    untiered = [t for t, marks in dropped.items() if not set(marks) & set(SLOW_TIERS)]
    assert not untiered, f"left out of the fast tier without a tier: {untiered}"
    assert "tests/test_tiers.py::test_naming_what_to_run_runs_it_whatever_its_tier[nothing]" in kept


@pytest.mark.slow
def test_every_tier_has_tests(default_run: dict[str, Any]) -> None:
    everything = {**default_run["kept"], **default_run["dropped"]}
    used = {m for marks in everything.values() for m in marks}
    assert {*SLOW_TIERS, "serial"} <= used
    timing = [t for t in everything if t.startswith("tests/test_linear_inputs.py::")]
    assert timing and all("timing" in everything[t] for t in timing)


def test_an_unregistered_marker_is_refused(tmp_path: Path) -> None:
    (tmp_path / "test_typo.py").write_text(
        "import pytest\n\n@pytest.mark.sloww\ndef test_x():\n    pass\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        + ["-c", str(REPO / "pyproject.toml"), "--rootdir", str(tmp_path), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **NO_PLUGINS},
    )
    assert proc.returncode != 0
    assert "'sloww' not found in `markers` configuration option" in proc.stdout + proc.stderr


# A suite of three tests under the repository's configuration and conftest.py.
TOY = """
import pytest

def test_fast():
    pass

@pytest.mark.slow
def test_slow():
    pass

@pytest.mark.timing
def test_timing():
    pass
"""


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text((REPO / "pyproject.toml").read_text())
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text((REPO / "tests" / "conftest.py").read_text())
    (tmp_path / "tests" / "test_toy.py").write_text(TOY)
    return tmp_path


@pytest.mark.parametrize(
    ("args", "kept"),
    [
        ([], {"test_fast"}),
        (["--all-tiers"], {"test_fast", "test_slow", "test_timing"}),
        (["tests/test_toy.py"], {"test_fast", "test_slow", "test_timing"}),
        (["-k", "test_"], {"test_fast", "test_slow", "test_timing"}),
        (["-m", "timing"], {"test_timing"}),
    ],
    ids=["nothing", "all-tiers", "a file", "-k", "-m"],
)
def test_naming_what_to_run_runs_it_whatever_its_tier(
    toy: Path, args: list[str], kept: set[str]
) -> None:
    report = _collect(toy, *args, cwd=toy, plugins=False)
    assert {t.rpartition("::")[2] for t in report["kept"]} == kept
    assert (report["markexpr"] == FAST_TIER) == (args == [])


# A test that starts Node, an MCP server or a build without its tier's marker fails.
UNMARKED = """
import subprocess, sys
import pytest

def test_starts_node_unmarked():
    subprocess.run(["node", "--version"], capture_output=True, check=False)

def test_starts_mcp_unmarked():
    argv = [sys.executable, "-m", "session_resume", "mcp", "--root", "."]
    subprocess.run(argv, input=b"", capture_output=True, timeout=120)

def test_asks_mcp_for_help():
    subprocess.run([sys.executable, "-m", "session_resume", "mcp", "--help"], capture_output=True)

def test_builds_unmarked():
    subprocess.run([sys.executable, "-m", "build", "--help"], capture_output=True, check=False)

@pytest.mark.node
def test_starts_node_marked():
    subprocess.run(["node", "--version"], capture_output=True, check=False)

def test_starts_git():
    subprocess.run(["git", "--version"], capture_output=True, check=False)
"""


def test_a_test_that_needs_a_tier_without_its_marker_fails(toy: Path) -> None:
    (toy / "tests" / "test_toy.py").write_text(UNMARKED)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_toy.py"],
        cwd=toy,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **NO_PLUGINS},
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    for name, tier in [("node", "node"), ("mcp", "mcp"), ("builds", "packaging")]:
        test = "test_builds_unmarked" if name == "builds" else f"test_starts_{name}_unmarked"
        assert f"ERROR tests/test_toy.py::{test}" in out, out
        assert f"needs the `{tier}` tier: mark the test" in out, out
    assert "6 passed, 3 errors" in out, out
