"""Shared helpers: a valid apex state to mutate, and the real CLI as a subprocess; and the test
tiers: ``pytest`` with nothing to select runs the fast tier (README "Test tiers")."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from session_resume.core.workflow import pending_step

REPO = Path(__file__).resolve().parents[1]

# --- test tiers ---------------------------------------------------------------------------
# A module names its tier with `pytestmark = pytest.mark.<tier>` (a test with none is in the
# fast tier); the markers are registered in pyproject.toml, and --strict-markers refuses any
# other. `pytest` alone (no path, node id, -m or -k) runs the fast tier; naming what to run
# runs it whatever its tier; `pytest --all-tiers` and `nox -s tests` run every tier.
SLOW_TIERS = ("slow", "timing", "packaging", "node", "mcp", "stress")
FAST_TIER = "not (" + " or ".join(SLOW_TIERS) + ")"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--all-tiers",
        action="store_true",
        help="run every test tier, not only the fast one (`nox -s tests` runs them all)",
    )


def pytest_configure(config: pytest.Config) -> None:
    # The selection is made here, as a -m expression, so that pytest-xdist's workers get it
    # with the other options.
    asked = config.getoption("all_tiers") or config.option.markexpr or config.option.keyword
    if not asked and config.args_source != pytest.Config.ArgsSource.ARGS:
        config.option.markexpr = FAST_TIER


# --- what a test starts decides its tier -------------------------------------------------
# The fast tier runs in a plain venv with the `test` extra: no Node packages, no MCP SDK, no
# built distribution. So a test that starts Node (node, npm, npx) must carry `node`, one that
# starts `session-resume mcp` `mcp`, one that builds a distribution or installs pre-commit
# hooks `packaging`. Every process a test (or its fixtures) starts goes through
# subprocess.Popen (subprocess.run, asyncio and anyio included); one that needs a tier the test
# does not carry fails the test at its teardown, naming the marker to add.
_PACKAGING_ARGV = (("-m", "build"), ("pip", "wheel"), ("npm", "pack"), ("pre-commit", "install"))
_started: list[tuple[pytest.Item, str, str]] = []
_current: list[pytest.Item] = []


def tier_needed(argv: list[str]) -> str | None:
    """The tier a process started with ``argv`` needs, or None."""
    if not argv:
        return None
    words = [os.path.basename(argv[0]), *argv[1:]]
    pairs = set(zip(words, words[1:], strict=False))
    if any(pair in pairs for pair in _PACKAGING_ARGV):
        return "packaging"
    if words[0] in ("node", "npm", "npx"):
        return "node"
    help_only = "--help" in words or "-h" in words  # argparse answers before any SDK import
    if (
        "mcp" in words
        and not help_only
        and ("session_resume" in words or words[0] == "session-resume")
    ):
        return "mcp"
    return None


_popen_init = subprocess.Popen.__init__


def _watched_init(self: subprocess.Popen[Any], args: Any, *rest: Any, **kw: Any) -> None:
    if _current:
        if isinstance(args, str | bytes | os.PathLike):
            argv = [os.fsdecode(args)] if not kw.get("shell") else os.fsdecode(args).split()
        else:
            argv = [os.fsdecode(a) if isinstance(a, bytes | os.PathLike) else str(a) for a in args]
        tier = tier_needed(argv)
        item = _current[-1]
        if tier is not None and item.get_closest_marker(tier) is None:
            _started.append((item, tier, " ".join(argv)[:200]))
    _popen_init(self, args, *rest, **kw)


subprocess.Popen.__init__ = _watched_init  # type: ignore[method-assign]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    _current.append(item)
    try:
        return (yield)
    finally:
        _current.pop()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    mine = [(tier, argv) for it, tier, argv in _started if it is item]
    _started[:] = [entry for entry in _started if entry[0] is not item]
    if mine:
        tier, argv = mine[0]
        raise pytest.fail.Exception(
            f"{item.nodeid} started `{argv}`, which needs the `{tier}` tier: mark the test "
            f'(or its module) `@pytest.mark.{tier}` (README "Test tiers")',
            pytrace=False,
        )


def pytest_report_header(config: pytest.Config) -> str | None:
    if config.option.markexpr != FAST_TIER:
        return None
    return (
        f"tier: fast (without {', '.join(SLOW_TIERS)}); "
        "`pytest --all-tiers` or `nox -s tests` runs every tier"
    )


_APEX_NAMES = [
    ("1", "Requirements", "02-Requirements"),
    ("2", "Architecture", "03-Architect"),
    ("3", "Design", "04-Design"),
    ("3_5", "Governance", "04g-Governance"),
    ("4", "IaC Plan", ""),
    ("5", "IaC Code", ""),
    ("6", "Deploy", ""),
    ("7", "As-Built", "08-As-Built"),
]


def apex_state() -> dict[str, Any]:
    """A valid apex state: step 1 complete, step 2 in progress at phase_2_waf."""
    steps = {k: pending_step(n, a) for k, n, a in _APEX_NAMES}
    steps["1"].update(
        status="complete",
        started="2026-03-02T09:00:00Z",
        completed="2026-03-02T09:30:00Z",
        artifacts=["agent-output/demo/01-requirements.md"],
        context_files_used=["agent-output/demo/00-session-state.json"],
    )
    steps["2"].update(status="in_progress", sub_step="phase_2_waf", started="2026-03-02T10:00:00Z")
    return {
        "schema_version": "3.0",
        "project": "demo",
        "workflow": "apex",
        "revision": 3,
        "updated": "2026-03-02T10:15:00Z",
        "current_step": 2,
        "decisions": {
            "region": "swedencentral",
            "compliance": "None",
            "budget": "~$50/mo",
            "architecture_pattern": "web app",
            "deployment_strategy": "",
        },
        "open_findings": [],
        "steps": steps,
    }


@pytest.fixture
def state() -> dict[str, Any]:
    return copy.deepcopy(apex_state())


def dump(doc: Any) -> bytes:
    return json.dumps(doc, indent=2).encode()


def run_cli(
    *args: str,
    cwd: Path | str | None = None,
    env: dict[str, str] | None = None,
    input: bytes | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run the installed CLI exactly as a user would (a separate process)."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "session_resume", *args],
        cwd=cwd,
        env=full_env,
        input=input,
        capture_output=True,
        timeout=timeout,
    )
    out = subprocess.CompletedProcess(
        proc.args,
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )
    assert "Traceback" not in out.stderr, out.stderr
    return out


@pytest.fixture
def session_dir(tmp_path: Path) -> Path:
    """An empty repository with agent-output/demo/ (a `.git` marks the root)."""
    (tmp_path / ".git").mkdir()
    d = tmp_path / "agent-output" / "demo"
    d.mkdir(parents=True)
    return d


def tree_hash(top: Path) -> dict[str, str]:
    """Every entry below ``top`` (links not followed): its type, mode and, for a regular file,
    the SHA-256 of its bytes; a decoy compared before and after must be byte-identical."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        for n in sorted(dirnames + filenames):
            p = Path(dirpath) / n
            st = os.lstat(p)
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else ""
            out[str(p.relative_to(top))] = f"{stat.S_IFMT(st.st_mode)}:{st.st_mode:o}:{digest}"
    return out
