"""Every JSON output has a JSON Schema under schema/, and what the commands print follows it.

Each command runs as a user runs it (a separate process, ``--format json``) over the session
directories that exercise its branches; its stdout is validated against its schema with the
reference engine (draft 2020-12, format checking on), with every schema under schema/
registered by its ``$id`` so that cross-file ``$ref``s resolve locally.

| command | schema |
| --- | --- |
| validate | schema/report/validate-1.json |
| migrate | schema/report/migrate-1.json |
| recover | schema/report/recover-1.json |
| report | schema/report/session-report-1.json |
| budget | schema/report/budget-1.json |
| resume | schema/decision/2.json |
| conformance | schema/conformance/report.json |
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

from conftest import REPO, apex_state, dump, run_cli

# Test tier (README "Test tiers"): every JSON output of the CLI against its schema.
pytestmark = pytest.mark.slow

NOW = ("--now", "2026-11-22T00:00:00Z")
EXAMPLE = REPO / "examples" / "agent-output" / "contoso-portal"


@cache
def _registry() -> Registry:
    resources = []
    for p in sorted((REPO / "schema").rglob("*.json")):
        doc = json.loads(p.read_text(encoding="utf-8"))
        resources.append((doc["$id"], Resource.from_contents(doc)))
    return Registry().with_resources(resources)


def _check(output: str, schema_rel: str) -> dict[str, Any]:
    instance: dict[str, Any] = json.loads(output)
    schema = json.loads((REPO / schema_rel).read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(
        schema, registry=_registry(), format_checker=jsonschema.FormatChecker()
    )
    errors = [f"{e.json_path}: {e.message}" for e in validator.iter_errors(instance)]
    assert errors == [], errors
    return instance


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    """A repository with sessions in every state the commands tell apart."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    out = root / "agent-output"
    shutil.copytree(EXAMPLE, out / "good")
    bad = apex_state()
    bad["steps"]["2"]["sub_step"] = "approval"
    bad["workflow_status"] = "x"  # and a warning
    (out / "bad").mkdir()
    (out / "bad" / "00-session-state.json").write_bytes(dump(bad))
    old = apex_state()
    old["schema_version"] = "2.0"
    old["lock"] = None
    (out / "old").mkdir()
    (out / "old" / "00-session-state.json").write_bytes(dump(old))
    (out / "corrupt").mkdir()
    (out / "corrupt" / "00-session-state.json").write_bytes(b'{"schema_version": "3.')
    (out / "corrupt" / "00-session-state.json.bak").write_bytes(dump(apex_state()))
    (out / "zero").mkdir()
    (out / "zero" / "00-session-state.json").write_bytes(b"")
    (out / "empty").mkdir()
    return root


def test_validate_json(sessions: Path) -> None:
    proc = run_cli("validate", "--format", "json", *NOW, "agent-output", cwd=sessions)
    assert proc.returncode == 1
    rep = _check(proc.stdout, "schema/report/validate-1.json")
    codes = {d["code"] for f in rep["files"] for d in f["diagnostics"]}
    assert {"SR414", "SR330", "SR140", "SR120", "SR110"} <= codes
    assert any(d["line"] for f in rep["files"] for d in f["diagnostics"])
    # a directory with no state file, and a missing path given beside a good one
    proc = run_cli("validate", "--format", "json", *NOW, "agent-output/empty", cwd=sessions)
    rep = _check(proc.stdout, "schema/report/validate-1.json")
    assert rep["files"][0]["diagnostics"][0]["code"] == "SR101"
    proc = run_cli("validate", "--format", "json", *NOW, "agent-output/good", cwd=sessions)
    assert proc.returncode == 0
    assert _check(proc.stdout, "schema/report/validate-1.json")["valid"] is True


@pytest.mark.parametrize("mode", [[], ["--dry-run"], ["--check"]])
def test_migrate_json(sessions: Path, mode: list[str]) -> None:
    dirs = ["agent-output/old", "agent-output/good", "agent-output/zero", "agent-output/empty"]
    proc = run_cli("migrate", *mode, "--format", "json", *NOW, *dirs, cwd=sessions)
    rep = _check(proc.stdout, "schema/report/migrate-1.json")
    statuses = {Path(f["path"]).parent.name: f["status"] for f in rep["files"]}
    assert statuses["good"] == "current" and statuses["zero"] == "refused"
    assert statuses["old"] == ("migrated" if not mode else "would_migrate")
    assert rep["problems"][0]["code"] == "SR101"
    old = next(f for f in rep["files"] if f["status"] in ("migrated", "would_migrate"))
    assert {"op": "replace", "path": "/schema_version", "value": "3.0"} in old["patch"]


@pytest.mark.parametrize(
    ("name", "action"),
    [("good", "none"), ("corrupt", "restored_backup"), ("zero", "recreated")],
)
def test_recover_json(sessions: Path, name: str, action: str) -> None:
    proc = run_cli("recover", "--format", "json", *NOW, f"agent-output/{name}", cwd=sessions)
    rep = _check(proc.stdout, "schema/report/recover-1.json")
    assert rep["action"] == action
    assert (rep["corrupt_kept_as"] is None) == (action == "none")


def test_report_json(sessions: Path) -> None:
    d = sessions / "agent-output" / "good"
    started = run_cli("session", "start", "--session-dir", str(d), "--session", "s1", *NOW)
    assert started.returncode == 0, started.stderr
    # an hour later the lease is stale: a crash report with an orphan and events
    later = ("--now", "2026-11-22T01:00:00Z")
    proc = run_cli("report", "--format", "json", *later, "agent-output/good", cwd=sessions)
    assert proc.returncode == 0, proc.stderr
    rep = _check(proc.stdout, "schema/report/session-report-1.json")
    assert rep["crashed"] is True and rep["orphan"]["session"] == "s1"
    assert rep["last_events"]
    for name in ("bad", "corrupt", "zero", "empty"):
        proc = run_cli("report", "--format", "json", *NOW, f"agent-output/{name}", cwd=sessions)
        assert proc.returncode == 0, proc.stderr
        _check(proc.stdout, "schema/report/session-report-1.json")


@pytest.mark.parametrize("step", ["1", "2", "3_5"])
def test_budget_json(sessions: Path, step: str) -> None:
    proc = run_cli(
        "budget", step, "--session-dir", "agent-output/good", "--format", "json", cwd=sessions
    )
    assert proc.returncode == 0, proc.stderr
    rep = _check(proc.stdout, "schema/report/budget-1.json")
    assert rep["step"] == step and rep["workflow"] == "apex"


def test_resume_json(sessions: Path) -> None:
    for name in ("good", "old", "corrupt", "empty"):
        proc = run_cli("resume", "--format", "json", *NOW, f"agent-output/{name}", cwd=sessions)
        _check(proc.stdout, "schema/decision/2.json")


def test_conformance_json() -> None:
    adapter = shlex.join([sys.executable, "-m", "session_resume.conformance.adapter"])
    proc = run_cli(
        "conformance",
        "--adapter",
        adapter,
        "--cases",
        "semantic/*",
        "--format",
        "json",
        cwd=REPO,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    rep = _check(proc.stdout, "schema/conformance/report.json")
    assert rep["summary"]["passed"] > 0


def test_negative_control_schemas_reject_wrong_output(sessions: Path) -> None:
    """The schemas are strict (closed objects, enums): a renamed key or a value outside an
    enum fails, so the checks above can fail."""
    proc = run_cli("validate", "--format", "json", *NOW, "agent-output/bad", cwd=sessions)
    rep = json.loads(proc.stdout)
    rep["files"][0]["diagnostics"][0]["severity"] = "fatal"
    with pytest.raises(AssertionError):
        _check(json.dumps(rep), "schema/report/validate-1.json")
    rep = json.loads(proc.stdout)
    rep["files"][0]["diagnostics"][0]["loc"] = rep["files"][0]["diagnostics"][0].pop("line")
    with pytest.raises(AssertionError):
        _check(json.dumps(rep), "schema/report/validate-1.json")
