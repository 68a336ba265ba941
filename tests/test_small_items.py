"""Issue 27 point 9's smaller items, each with its test."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli


def test_migrate_never_says_rewritten_as_none(tmp_path: Path) -> None:
    """A step timestamp that is no timestamp is kept under x-legacy (SR151); the note used to
    add that it was "rewritten as None"."""
    (tmp_path / ".git").mkdir()
    d = tmp_path / "agent-output" / "p"
    d.mkdir(parents=True)
    doc = {
        "schema_version": "2.0",
        "project": "p",
        "updated": "2026-03-02T10:15:00Z",
        "current_step": 1,
        "steps": {
            "1": {
                "name": "Requirements",
                "status": "in_progress",
                "started": "last tuesday",
                "completed": None,
                "sub_step": None,
            }
        },
    }
    (d / "00-session-state.json").write_text(json.dumps(doc))
    proc = run_cli("migrate", "--dry-run", "--salvage", "agent-output/p", cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert "last tuesday" in out, out  # the value is named (kept as x-legacy)
    assert "as None" not in out, out
