"""The JavaScript package's README: its command-line block runs as written with bash in a
fresh repository, as the Python README's blocks are run (tests/test_readme_quickstart.py).
It once failed at its third line: `init demo --session s1` takes an explicit lease, and the
next write named no session (SR511)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO

# Test tier (README "Test tiers"): Node and `npm ci`.
pytestmark = pytest.mark.node

JS_README = REPO / "conformance" / "js" / "README.md"
CLI = REPO / "conformance" / "js" / "bin" / "session-resume.mjs"


def cli_block() -> str:
    text = JS_README.read_text(encoding="utf-8")
    section = text[text.index("## Command line") :]
    start = section.index("```sh\n") + len("```sh\n")
    return section[start : section.index("\n```", start)]


def test_js_readme_cli_block_runs_as_written(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None or not (REPO / "node_modules").is_dir():
        pytest.fail("the node tier needs Node.js >= 20 and `npm ci` at the repository root")
    block = cli_block()
    first, rest = block.split("\n", 1)
    assert first.startswith('SR="node /path/to/session-resume/conformance/js/bin/')
    # the one line the reader adapts: where their checkout is
    block = first.replace("/path/to/session-resume", str(REPO)) + "\n" + rest
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": f"{Path(node).parent}:/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "SR511" not in out and "Error:" not in out, out
    assert '"ok": true' in out.replace('"ok":true', '"ok": true') or "valid" in out, out
    assert (tmp_path / "agent-output" / "demo" / "00-session-state.json").is_file()
