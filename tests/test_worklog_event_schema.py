"""``schema/worklog-event/1.json`` (docs/spec.md §1, §6) describes every record both
implementations write: every worklog record of the conformance cases (their ``files/``, what
the cases start from, and their ``expected/``, what both implementations must write) is valid
against it, with the reference engine and with ajv in strict mode; records the writers of
this repository append are too."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from nodetools import run_node

from session_resume.storage import worklog

REPO = Path(__file__).resolve().parents[1]
SCHEMA = "schema/worklog-event/1.json"
CASES = REPO / "conformance" / "cases"


def _records() -> list[tuple[str, dict[str, Any]]]:
    """(label, record) for every line of a case's worklog that is a JSON object; torn records
    and garbage lines (SR502, SR503: what a reader tolerates) are not records."""
    out = []
    for path in sorted(CASES.glob("*/*/*/**/*.jsonl")):
        if path.relative_to(CASES).parts[2] not in ("files", "expected"):
            continue
        for n, line in enumerate(path.read_bytes().split(b"\n"), start=1):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                out.append((f"{path.relative_to(REPO).as_posix()}:{n}", value))
    return out


RECORDS = _records()


@cache
def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((REPO / SCHEMA).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_cases_hold_records_of_every_kind_both_write() -> None:
    events = {r["event"] for _, r in RECORDS}
    assert len(RECORDS) >= 150
    assert {"migrated", "recovered", "recreated", "session_start", "checkpoint"} <= events
    assert any("detail" in r for _, r in RECORDS)
    assert any("sub_step" in r for _, r in RECORDS)


@pytest.mark.parametrize(("label", "record"), RECORDS, ids=[lbl for lbl, _ in RECORDS])
def test_case_record_is_valid(label: str, record: dict[str, Any]) -> None:
    errors = [e.message for e in _validator().iter_errors(record)]
    assert errors == [], label


_GOOD = {"v": 1, "ts": "2026-03-02T12:00:00Z", "seq": 1, "session": "", "event": "note"}


@pytest.mark.parametrize(
    "record",
    [
        {**_GOOD, "v": 2},
        {**_GOOD, "ts": "2026-03-02T12:00:00+01:00"},
        {**_GOOD, "seq": 0},
        {k: v for k, v in _GOOD.items() if k != "session"},
        {**_GOOD, "event": "done"},
        {**_GOOD, "step": "3.5"},
        {**_GOOD, "x": 1},
    ],
    ids=["v2", "offset-ts", "seq-0", "no-session", "unknown-event", "dotted-step", "extra-key"],
)
def test_schema_refuses_what_no_writer_writes(record: dict[str, Any]) -> None:
    assert list(_validator().iter_errors(_GOOD)) == []
    assert list(_validator().iter_errors(record)) != []


def test_the_schema_names_every_event_the_writer_knows() -> None:
    schema = json.loads((REPO / SCHEMA).read_text(encoding="utf-8"))
    assert schema["properties"]["event"]["enum"] == list(worklog.EVENTS)


def test_appended_records_are_valid(tmp_path: Path) -> None:
    ts = datetime(2026, 3, 2, 12, tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    worklog.append(tmp_path, "step_start", ts=ts, session="s1", step="3_5")
    worklog.append(tmp_path, "checkpoint", ts=ts, step="3_5", sub_step="a", detail={"k": 1})
    lines = (tmp_path / worklog.WORKLOG).read_bytes().splitlines()
    assert len(lines) == 2
    for line in lines:
        assert line.startswith(b'{"v":')
        assert list(_validator().iter_errors(json.loads(line))) == []


# ajv runs in Node: the node tier, so the fast tier needs nothing beyond the venv
@pytest.mark.node
def test_ajv_strict_agrees_on_every_case_record() -> None:
    request = {
        "schemas": [SCHEMA],
        "cases": [{"schema": SCHEMA, "instance_file": lbl, "instance": r} for lbl, r in RECORDS],
    }
    answer = run_node(
        "tests/node/ajv_check.mjs",
        request,
        packages=("ajv", "ajv-formats"),
        purpose="the worklog-event schema check with ajv",
    ).require()
    assert answer["compiled"][SCHEMA] is True
    invalid = [(r["instance_file"], r["errors"]) for r in answer["results"] if not r["valid"]]
    assert invalid == []
    assert len(answer["results"]) == len(RECORDS)
