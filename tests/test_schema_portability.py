"""The schemas are portable: ajv (Node, strict mode) compiles every one of them, and ajv, the
reference engine (``jsonschema``), the fast engine (``jsonschema_rs``) and the check generated
at build time (``core/compiled/``) give the same verdict on every fixture under
``tests/fixtures/schema/<name>/{valid,invalid}/`` (DESIGN §11).

Node is run once per test session (``tests/node/ajv_check.mjs``). Without node or without
``node_modules/ajv`` the ajv-dependent tests fail with a hint to run ``npm ci``; set
``SESSION_RESUME_NO_NODE=1`` to skip them instead (the Python-engine checks still run first).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
import pytest
from nodetools import NodeAnswer, run_node

from session_resume import ValidateOptions, validate_document
from session_resume.core.schemas import generated_check
from session_resume.core.schemas import reference_for as _project_reference_for

# Test tier (README "Test tiers"): Node and `npm ci` (ajv).
pytestmark = pytest.mark.node

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "schema"
AJV_SCRIPT = "tests/node/ajv_check.mjs"
NODE_TIMEOUT_S = 180

# Fixture directory name → the schema its files are checked against.
FIXTURE_SCHEMAS = {
    "3.0": "schema/session-state/3.0.json",
    "2.0": "schema/session-state/2.0.json",
    "1.0": "schema/session-state/1.0.json",
    "workflow": "schema/workflow/1.json",
}
# Minimum number of fixtures per (directory, verdict).
MIN_FIXTURES = {("3.0", "valid"): 12, ("3.0", "invalid"): 25}
MIN_OTHER = 5

SCHEMA_FILES = sorted(p.relative_to(REPO).as_posix() for p in REPO.glob("schema/**/*.json"))


@dataclass(frozen=True)
class Fixture:
    name: str  # fixture directory: 3.0, 2.0, 1.0, workflow
    verdict: str  # valid | invalid
    path: Path

    @property
    def rel(self) -> str:
        return self.path.relative_to(REPO).as_posix()

    @property
    def schema(self) -> str:
        return FIXTURE_SCHEMAS[self.name]

    @property
    def id(self) -> str:
        return f"{self.name}/{self.verdict}/{self.path.stem}"


def _collect() -> list[Fixture]:
    out = []
    for name in FIXTURE_SCHEMAS:
        for verdict in ("valid", "invalid"):
            for p in sorted((FIXTURES / name / verdict).glob("*.json")):
                out.append(Fixture(name, verdict, p))
    return out


ALL_FIXTURES = _collect()


@cache
def _schema(rel: str) -> Any:
    return json.loads((REPO / rel).read_text(encoding="utf-8"))


@cache
def _reference_validator(rel: str) -> Any:
    schema = _schema(rel)
    jsonschema.Draft202012Validator.check_schema(schema)
    # The project's reference engine: jsonschema with ECMA-262 `$` (see schemas.py).
    return _project_reference_for(schema)


@cache
def _fast_validator(rel: str) -> Any:
    return jsonschema_rs.validator_for(_schema(rel))


# --- the one node run -----------------------------------------------------------------------


@dataclass
class AjvRun:
    """The answer of ``ajv_check.mjs`` for all schemas and fixtures, or why there is none."""

    node: NodeAnswer
    compiled: dict[str, Any] = field(default_factory=dict)
    warnings: dict[str, list[str]] = field(default_factory=dict)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    version: str = ""

    def require(self) -> None:
        """Skip or fail the calling test if ajv could not be run."""
        self.node.require()


def _run_ajv() -> AjvRun:
    request = {
        "schemas": SCHEMA_FILES,
        "cases": [{"schema": f.schema, "instance_file": f.rel} for f in ALL_FIXTURES],
    }
    node = run_node(
        AJV_SCRIPT, request, packages=("ajv", "ajv-formats"), purpose="the schema portability tests"
    )
    if node.answer is None:
        return AjvRun(node)
    answer = node.answer
    return AjvRun(
        node,
        compiled=answer["compiled"],
        warnings=answer.get("warnings", {}),
        results={r["instance_file"]: r for r in answer["results"]},
        version=answer.get("ajv_version", ""),
    )


@pytest.fixture(scope="session")
def ajv_run() -> AjvRun:
    return _run_ajv()


# --- (a) ajv strict mode compiles every schema ---------------------------------------------


def test_schema_files_found() -> None:
    for rel in FIXTURE_SCHEMAS.values():
        assert rel in SCHEMA_FILES, f"{rel} is not under schema/"


@pytest.mark.parametrize("schema", SCHEMA_FILES)
def test_ajv_strict_compiles(schema: str, ajv_run: AjvRun) -> None:
    ajv_run.require()
    compiled = ajv_run.compiled.get(schema)
    assert compiled is True, (
        f"ajv {ajv_run.version} (Ajv2020, strict: true, allowUnionTypes: true) does not "
        f"compile {schema}: {compiled}"
    )
    assert not ajv_run.warnings.get(schema), (
        f"ajv logged warnings for {schema}: {ajv_run.warnings[schema]}"
    )


# --- (b) ajv, jsonschema and jsonschema_rs agree on every fixture --------------------------


def test_fixture_inventory() -> None:
    dirs = {p.name for p in FIXTURES.iterdir() if p.is_dir()}
    assert dirs == set(FIXTURE_SCHEMAS), f"unexpected fixture directories: {sorted(dirs)}"
    for name in FIXTURE_SCHEMAS:
        extra = {p.name for p in (FIXTURES / name).iterdir()} - {"valid", "invalid"}
        assert not extra, f"{name}: unexpected entries {sorted(extra)}"
        for verdict in ("valid", "invalid"):
            n = sum(1 for f in ALL_FIXTURES if f.name == name and f.verdict == verdict)
            want = MIN_FIXTURES.get((name, verdict), MIN_OTHER)
            assert n >= want, f"{name}/{verdict} has {n} fixtures, want at least {want}"


def _reference_errors(fx: Fixture, instance: Any) -> list[str]:
    return [
        f"{'/' + '/'.join(map(str, e.absolute_path))} {e.validator}: {e.message}"
        for e in _reference_validator(fx.schema).iter_errors(instance)
    ]


@pytest.mark.parametrize("fx", ALL_FIXTURES, ids=[f.id for f in ALL_FIXTURES])
def test_engines_agree(fx: Fixture, ajv_run: AjvRun) -> None:
    instance = json.loads(fx.path.read_text(encoding="utf-8"))
    expected = fx.verdict == "valid"
    ref = _reference_validator(fx.schema).is_valid(instance)
    fast = _fast_validator(fx.schema).is_valid(instance)
    generated = generated_check(_schema(fx.schema))
    assert generated is not None, f"no generated check for {fx.schema} (run `nox -s docs`)"
    verdicts = {"jsonschema": ref, "jsonschema_rs": fast, "generated": generated(instance)}
    detail = "\n".join(f"  jsonschema: {e}" for e in _reference_errors(fx, instance))
    assert ref == fast == verdicts["generated"] == expected, (
        f"{fx.rel} is in {fx.verdict}/ but the verdicts are {verdicts}\n{detail}"
    )

    ajv_run.require()
    result = ajv_run.results.get(fx.rel)
    assert result is not None, f"ajv returned no result for {fx.rel}"
    assert result["valid"] is not None, f"ajv could not check {fx.rel}: {result.get('error')}"
    verdicts["ajv"] = result["valid"]
    ajv_detail = "\n".join(
        f"  ajv: {e['instancePath'] or '/'} {e['keyword']}: {e.get('message', '')}"
        for e in result["errors"]
    )
    assert result["valid"] == expected, (
        f"{fx.rel} is in {fx.verdict}/ but the verdicts are {verdicts}\n{detail}\n{ajv_detail}"
    )


# --- (c) valid v3.0 states also pass the full validator (semantic + workflow rules) -------

VALID_STATES = [f for f in ALL_FIXTURES if f.name == "3.0" and f.verdict == "valid"]


@pytest.mark.parametrize("fx", VALID_STATES, ids=[f.id for f in VALID_STATES])
def test_valid_state_passes_full_validator(fx: Fixture) -> None:
    report = validate_document(fx.path.read_bytes(), file=fx.rel, options=ValidateOptions())
    found = "\n".join(
        f"  {d.code} {d.severity} {d.pointer}: {d.message}" for d in report.diagnostics
    )
    assert report.ok(), f"{fx.rel} is a valid fixture but the validator reports:\n{found}"
