"""Messages describe the file in the file's own words: over every state of the conformance
suite, the text output of `validate`, `resume`, `report` and `migrate` (check, dry run,
salvage) never shows Python's ``None`` (it printed "current_step None became 0"), and a
migration refused on a current (3.0) file names what the file itself holds, not only a
contradiction of the repaired intermediate."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from test_printed_commands import NOW, _case_states, _run

from conftest import run_cli

# Test tier (README "Test tiers"): thousands of in-process CLI calls.
pytestmark = pytest.mark.slow

# Python's None outside quotes (a quoted "None" is a value the file holds, as it holds it)
NONE = re.compile(r"(?<![\"'])\bNone\b(?![\"'])")


def _outputs(files: dict[str, bytes], base: Path) -> list[tuple[list[str], str]]:
    root = base / "repo"
    sdir = root / "agent-output" / "demo"
    sdir.mkdir(parents=True)
    (root / ".git").mkdir()
    for name, data in files.items():
        (sdir / name).write_bytes(data)
    out = []
    for argv in (
        ["validate", "agent-output/demo"],
        ["resume", "agent-output/demo"],
        ["report", "agent-output/demo"],
        ["migrate", "--check", "agent-output/demo"],
        ["migrate", "--dry-run", "agent-output/demo"],
        ["migrate", "--dry-run", "--salvage", "agent-output/demo"],
    ):
        rc, stdout, stderr = _run([*argv, *NOW], root)
        text = stdout + stderr
        if "JSON Patch" in text:  # the patch is JSON: its null is the value it writes
            text = text[: text.index("JSON Patch")]
        out.append((argv, text))
    return out


@pytest.mark.parametrize("files", _case_states())
def test_no_python_none_in_text_output(files: dict[str, bytes], tmp_path: Path) -> None:
    bad = [
        (argv, line)
        for argv, text in _outputs(files, tmp_path)
        for line in text.splitlines()
        if NONE.search(line)
    ]
    assert not bad, "\n".join(f"{' '.join(a)}: {line}" for a, line in bad[:10])


def test_migrate_check_names_the_files_own_finding(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert run_cli("init", "m", *NOW, cwd=tmp_path).returncode == 0
    p = tmp_path / "agent-output" / "m" / "00-session-state.json"
    doc = json.loads(p.read_text())
    doc["steps"]["1"]["status"] = "done-ish"
    doc["steps"]["1"]["started"] = "2026-11-22T11:00:00Z"
    p.write_text(json.dumps(doc, indent=2))
    proc = run_cli("migrate", "--check", "agent-output/m", *NOW, cwd=tmp_path)
    assert proc.returncode == 1
    assert "'done-ish'" in proc.stdout, proc.stdout
