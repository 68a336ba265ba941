"""Each semantic and workflow rule fires on the smallest document that breaks it, at the
right pointer, and stays quiet on the valid baseline."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from session_resume import Severity, ValidateOptions, validate_document

from conftest import apex_state, dump

NOW = datetime(2026, 3, 3, tzinfo=UTC)


def check(doc: dict[str, Any], **opts: Any) -> list[tuple[str, str]]:
    rep = validate_document(dump(doc), file="s.json", options=ValidateOptions(now=NOW, **opts))
    return [(d.code, d.pointer) for d in rep.diagnostics]


def test_baseline_is_valid() -> None:
    assert check(apex_state()) == []


Mutation = Callable[[dict[str, Any]], None]


def _set(path: list[str], value: Any) -> Mutation:
    def f(doc: dict[str, Any]) -> None:
        node = doc
        for p in path[:-1]:
            node = node[p]
        node[path[-1]] = value

    return f


def _seq(*fs: Mutation) -> Mutation:
    def f(doc: dict[str, Any]) -> None:
        for g in fs:
            g(doc)

    return f


CASES: dict[str, tuple[Mutation, str, str]] = {
    "pending-with-started": (
        _set(["steps", "3", "started"], "2026-03-02T10:00:00Z"),
        "SR301",
        "/steps/3/started",
    ),
    "pending-with-sub-step": (
        _set(["steps", "3", "sub_step"], "phase_1_prereqs"),
        "SR301",
        "/steps/3/sub_step",
    ),
    "in-progress-without-started": (
        _set(["steps", "2", "started"], None),
        "SR301",
        "/steps/2/started",
    ),
    "in-progress-with-completed": (
        _set(["steps", "2", "completed"], "2026-03-02T10:10:00Z"),
        "SR301",
        "/steps/2/completed",
    ),
    "complete-without-completed": (
        _set(["steps", "1", "completed"], None),
        "SR302",
        "/steps/1/completed",
    ),
    "complete-with-sub-step": (
        _set(["steps", "1", "sub_step"], "phase_5_artifact"),
        "SR303",
        "/steps/1/sub_step",
    ),
    "started-after-completed": (
        _set(["steps", "1", "started"], "2026-03-02T09:45:00Z"),
        "SR304",
        "/steps/1/started",
    ),
    "completed-after-updated": (
        _set(["steps", "1", "completed"], "2026-03-02T11:00:00Z"),
        "SR304",
        "/steps/1/completed",
    ),
    "updated-in-future": (_seq(_set(["updated"], "2027-01-01T00:00:00Z")), "SR305", "/updated"),
    "two-in-progress": (
        _seq(
            _set(["steps", "3", "status"], "in_progress"),
            _set(["steps", "3", "started"], "2026-03-02T10:05:00Z"),
        ),
        "SR306",
        "/steps",
    ),
    "current-step-mismatch": (_set(["current_step"], 7), "SR307", "/current_step"),
    "earlier-step-incomplete": (_set(["steps", "1", "status"], "pending"), "SR308", "/steps/2"),
    "duplicate-artifact": (
        _set(["steps", "1", "artifacts"], ["a/b.md", "a/./b.md"]),
        "SR313",
        "/steps/1/artifacts/1",
    ),
    "backslash": (
        _set(["steps", "1", "artifacts"], ["agent-output\\demo\\01.md"]),
        "SR315",
        "/steps/1/artifacts/0",
    ),
    "duplicate-decision-id": (
        _set(
            ["decision_log"],
            [
                {"id": "D001", "title": "a", "choice": "b", "rationale": "c"},
                {"id": "D001", "title": "a", "choice": "b", "rationale": "c"},
            ],
        ),
        "SR320",
        "/decision_log/1/id",
    ),
    "decision-ids-decreasing": (
        _set(
            ["decision_log"],
            [
                {"id": "D002", "title": "a", "choice": "b", "rationale": "c"},
                {"id": "D001", "title": "a", "choice": "b", "rationale": "c"},
            ],
        ),
        "SR321",
        "/decision_log/1/id",
    ),
    "superseded-by-unknown": (
        _set(
            ["decision_log"],
            [
                {
                    "id": "D001",
                    "title": "a",
                    "choice": "b",
                    "rationale": "c",
                    "superseded_by": "D009",
                }
            ],
        ),
        "SR322",
        "/decision_log/0/superseded_by",
    ),
    "unknown-top-level-key": (_set(["workflow_status"], "done"), "SR330", "/workflow_status"),
    "impossible-date": (_set(["updated"], "2026-02-30T10:00:00Z"), "SR340", "/updated"),
    "unknown-step": (
        _set(["steps", "9"], {**apex_state()["steps"]["7"], "name": "Extra"}),
        "SR410",
        "/steps/9",
    ),
    "missing-step": (lambda d: d["steps"].pop("3_5"), "SR411", "/steps"),
    "step-name-mismatch": (_set(["steps", "2", "name"], "Planning"), "SR412", "/steps/2/name"),
    "unknown-agent": (_set(["steps", "2", "agent"], "99-Nobody"), "SR413", "/steps/2/agent"),
    "unknown-checkpoint": (
        _set(["steps", "2", "sub_step"], "approval"),
        "SR414",
        "/steps/2/sub_step",
    ),
    "context-over-budget": (
        _set(["steps", "1", "context_files_used"], ["a", "b", "c"]),
        "SR415",
        "/steps/1/context_files_used",
    ),
    "legacy-checkpoint": (
        _seq(_set(["steps", "2", "sub_step"], "phase_2.5_compacted")),
        "SR416",
        "/steps/2/sub_step",
    ),
    "workflow-field-enum": (_set(["iac_tool"], "Pulumi"), "SR420", "/iac_tool"),
    "workflow-decision-missing": (lambda d: d["decisions"].pop("budget"), "SR420", "/decisions"),
    "workflow-decision-enum": (
        _set(["decisions", "complexity"], "high"),
        "SR420",
        "/decisions/complexity",
    ),
    "review-audit-unreviewed-step": (
        _set(["review_audit"], {"step_3": {}}),
        "SR421",
        "/review_audit/step_3",
    ),
    "schema-missing-property": (lambda d: d["steps"]["2"].pop("agent"), "SR201", "/steps/2"),
    "schema-wrong-type": (_set(["current_step"], "2"), "SR202", "/current_step"),
    "schema-pattern": (_set(["updated"], "2026-03-02 10:15:00"), "SR204", "/updated"),
    "schema-extra-step-property": (
        _set(["steps", "2", "sub-step"], "x"),
        "SR205",
        "/steps/2/sub-step",
    ),
    "schema-unique-findings": (_set(["open_findings"], ["a", "a"]), "SR206", "/open_findings"),
    "schema-step-key": (
        _set(["steps", "3.5"], apex_state()["steps"]["3_5"]),
        "SR207",
        "/steps/3.5",
    ),
    "schema-negative-revision": (_set(["revision"], -1), "SR208", "/revision"),
    "schema-trailing-newline": (_set(["project"], "demo\n"), "SR204", "/project"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_fires(name: str) -> None:
    mutate, code, pointer = CASES[name]
    doc = apex_state()
    mutate(doc)
    found = check(doc)
    assert (code, pointer) in found, found


def test_workflow_mismatch_is_a_warning() -> None:
    rep = validate_document(dump(apex_state()), options=ValidateOptions(workflow="generic"))
    assert [(d.code, d.severity) for d in rep.diagnostics] == [("SR404", Severity.WARNING)]
    assert rep.ok() and not rep.ok(strict=True)


def test_generic_workflow_accepts_free_steps() -> None:
    doc = apex_state()
    doc["workflow"] = "generic"
    doc["steps"]["42"] = {**doc["steps"]["7"], "name": "Anything", "agent": "me"}
    doc["steps"]["2"]["sub_step"] = "whatever-i-like"
    assert check(doc) == []


def test_checkpoint_rule_names_the_valid_ids() -> None:
    doc = apex_state()
    doc["steps"]["2"]["sub_step"] = "approval"
    rep = validate_document(dump(doc), options=ValidateOptions(now=NOW))
    msg = next(d.message for d in rep.diagnostics if d.code == "SR414")
    assert "phase_2_waf" in msg and "phase_3_cost" in msg


def test_failing_file_gets_positions_valid_file_does_not_need_them() -> None:
    doc = apex_state()
    doc["steps"]["2"]["sub_step"] = "approval"
    rep = validate_document(dump(doc), options=ValidateOptions(now=NOW))
    d = next(d for d in rep.diagnostics if d.code == "SR414")
    text = dump(doc).decode().splitlines()
    assert d.line is not None and d.column is not None
    assert text[d.line - 1][d.column - 1 :].startswith('"approval"')


def test_old_version_is_one_migration_diagnostic_not_a_wall() -> None:
    doc = apex_state()
    doc["schema_version"] = "2.0"
    doc["lock"] = None
    rep = validate_document(dump(doc), file="x/00-session-state.json")
    assert rep.codes == ["SR140"]
    assert "session-resume migrate x/00-session-state.json" in rep.diagnostics[0].hint


def test_missing_version_means_v1() -> None:
    doc = {
        "$schema": "session-state-v1",
        "project": "iis-hello-world",
        "steps": {"1": {"name": "Planning", "status": "complete"}},
    }
    rep = validate_document(dump(doc))
    assert rep.codes == ["SR140"] and rep.schema_version == "1.0"


def test_check_artifacts_uses_injected_exists() -> None:
    doc = apex_state()
    seen: list[str] = []

    def exists(p: str) -> bool:
        seen.append(p)
        return False

    rep = validate_document(
        dump(doc), options=ValidateOptions(check_artifacts=True, now=NOW), exists=exists
    )
    assert rep.codes == ["SR314"]
    assert seen == ["agent-output/demo/01-requirements.md"]
