"""Fuzz group: validate. ``validate_document`` on documents mutated field by field, and
what their content can do to every output format.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_resume.services.validation import ValidateOptions, validate_document
from session_resume.storage import store

from .checks import NOW, STATUSES, assert_coded
from .profiles import PROFILE, tried
from .strategies import dumps, mutated_docs
from conftest import apex_state, run_cli

# Test tier (README "Test tiers"): Hypothesis properties (`nox -s fuzz` runs them at scale).
pytestmark = pytest.mark.slow

# --- structured documents: validate ---------------------------------------------------------


@PROFILE
@given(doc=mutated_docs(), wf=st.sampled_from([None, "apex", "dotagent", "generic"]))
def test_validate_document_never_raises_on_mutated_documents(
    doc: dict[str, Any], wf: str | None
) -> None:
    tried("validate(mutated)")
    data = dumps(doc)
    report = validate_document(data, file="s.json", options=ValidateOptions(now=NOW, workflow=wf))
    assert_coded(report.diagnostics)
    assert all(d.pointer == "" or d.pointer.startswith("/") for d in report.diagnostics)
    loaded = store.classify(data)
    assert loaded.status in STATUSES
    if report.ok() and report.schema_version == "3.0":
        assert loaded.status == "ok"
    check_output_formats(report)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def check_output_formats(report: Any) -> None:
    """What a state file's content can do to the output a CI log shows: the GitHub format is
    one workflow command per line, JSON and SARIF parse, the text format has no line a
    runner would take for a workflow command and no terminal escape."""
    from session_resume.reporters import renderer

    # Runners and terminals split lines on LF (and CR); U+2028, U+0085 and the like are text.
    github = renderer("github")([report], False)
    for line in github.split("\n")[:-1]:
        assert re.match(r"^::(error|warning|notice) file=[^\n]*::", line), line
    json.loads(renderer("json")([report], False))
    json.loads(renderer("sarif")([report], False))
    text = renderer("text")([report], False)
    for line in text.split("\n"):
        assert not line.startswith("::"), line
        assert not _CONTROL.search(line), line


# --- regressions: bugs these properties found, since fixed (kept as plain examples) -----
# Each names the commit that fixed it; the properties above would find it again, these keep
# the minimal reproduction in the normal suite whatever the random draw.


def test_validate_now_at_the_end_of_time(session_dir: Path) -> None:
    """Was SR900 (OverflowError in now + skew), fixed in 4160f6a."""
    (session_dir / store.STATE).write_bytes(dumps(apex_state()))
    proc = run_cli("validate", str(session_dir), "--now", "9999-12-31T23:59:59Z")
    assert proc.returncode in (0, 1) and "SR900" not in proc.stderr, proc.stderr


def test_text_output_escapes_control_characters() -> None:
    """A key holding '\\n::error …::' made the text format print a line GitHub Actions takes
    for a workflow command, and ESC sequences reached the terminal (fixed in 3e71b51)."""
    from session_resume.reporters import renderer

    doc = apex_state()
    doc["x\n::error file=README.md::pwned\x1b[2J"] = 1  # SR330: an unknown top-level key
    report = validate_document(
        dumps(doc), file="s\n::warning::x.json", options=ValidateOptions(now=NOW)
    )
    text = renderer("text")([report], False)
    assert not [ln for ln in text.splitlines() if ln.startswith("::") or "\x1b" in ln], text
    check_output_formats(report)
