"""One path style in what the CLI prints: paths inside the repository are written relative
to its root (they were absolute in some outputs and hints, relative in others), and a command
a message names still runs as printed from wherever in the repository the user stands. The
JavaScript CLI prints the same."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, run_cli

NOW = ("--now", "2026-11-22T12:00:00Z")


def _repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    return tmp_path


def test_init_and_its_refusal_name_repository_relative_paths(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    first = run_cli("init", "p", *NOW, cwd=root)
    assert "initialised agent-output/p/00-session-state.json" in first.stdout, first.stdout
    for where in (root, root / "src" / "pkg"):
        proc = run_cli("init", "p", *NOW, cwd=where)
        assert proc.returncode == 1
        assert str(root) not in proc.stderr, proc.stderr
        cmd = proc.stderr.split("to continue it run `")[1].split("`")[0]
        assert cmd == "session-resume resume agent-output/p"
        assert run_cli(*shlex.split(cmd)[1:], *NOW, cwd=where).returncode == 0


@pytest.mark.node
def test_the_javascript_cli_prints_the_same(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed (the node tier needs Node.js >= 20)")
    root = _repo(tmp_path)
    assert run_cli("init", "p", *NOW, cwd=root).returncode == 0
    js = REPO / "conformance" / "js" / "bin" / "session-resume.mjs"
    for where in (root, root / "src" / "pkg"):
        py = run_cli("init", "p", *NOW, cwd=where)
        out = subprocess.run(
            [node, str(js), "init", "p", *NOW], cwd=where, capture_output=True, text=True
        )
        assert (out.returncode, out.stderr) == (py.returncode, py.stderr)
