"""Checks shared by the fuzz properties, and the fixed inputs they use."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import jsonschema

from session_resume.core.codes import CATALOGUE
from session_resume.core.diagnostics import Diagnostic, Severity
from session_resume.core.workflow import load_workflow

from conftest import REPO

NOW = datetime(2026, 3, 3, 12, 0, tzinfo=UTC)
WORKFLOWS = {name: load_workflow(name) for name in ("apex", "dotagent", "generic")}
DECISION_SCHEMA = jsonschema.Draft202012Validator(
    json.loads((REPO / "schema" / "decision" / "2.json").read_text())
)
STATUSES = {
    "absent",
    "ok",
    "invalid",
    "corrupt",
    "needs_migration",
    "too_new",
    "bad_version",
    "refused",
}


# --- checks shared by the properties -------------------------------------------------------

_CODE = re.compile(r"^SR[1-9][0-9]{2}$")


def assert_coded(diags: list[Diagnostic]) -> None:
    """Every finding is a catalogued code with a severity and a message; never SR900."""
    for d in diags:
        assert _CODE.match(d.code) and d.code in CATALOGUE, d
        assert d.code != "SR900", d
        assert isinstance(d.severity, Severity), d
        assert isinstance(d.message, str) and d.message, d
        assert d.line is None or (isinstance(d.line, int) and d.line >= 1), d
        assert d.column is None or (isinstance(d.column, int) and d.column >= 1), d


def assert_coded_list(codes: list[str]) -> None:
    for c in codes:
        assert c in CATALOGUE and c != "SR900", c
