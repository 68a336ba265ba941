"""The schema checks generated at build time (``core/compiled/``, docgen/compiled.py) are the
ones a cold command uses, answer exactly as jsonschema_rs does, and are never used for a
schema they were not made from (issue 19: no schema engine on a cold path)."""

from __future__ import annotations

import ast
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_resume.core import schemas
from session_resume.core.workflow import BUILTINS, load_workflow
from session_resume.docgen.compiled import SCHEMA_FILES
from session_resume.resources import load_schema

REPO = Path(__file__).resolve().parents[1]
COMPILED = REPO / "validator" / "session_resume" / "core" / "compiled"
FIXTURES = REPO / "tests" / "fixtures" / "schema"
FIXTURE_DIRS = {
    "session-state/3.0.json": "3.0",
    "session-state/2.0.json": "2.0",
    "session-state/1.0.json": "1.0",
    "workflow/1.json": "workflow",
}


def _hot_schemas() -> dict[str, dict[str, Any]]:
    out = {rel: load_schema(rel) for rel in SCHEMA_FILES}
    out.update({f"fragment:{wf}": load_workflow(wf).state_fragment() for wf in BUILTINS})
    return out


HOT = _hot_schemas()


@pytest.mark.parametrize("name", sorted(HOT))
def test_every_hot_schema_has_its_generated_check(name: str) -> None:
    check = schemas.generated_check(HOT[name])
    assert check is not None, f"{name}: no generated check; run `nox -s docs`"
    assert check.__module__.startswith("session_resume.core.compiled.")
    assert schemas.fast_check(HOT[name]) is check


def test_an_edited_schema_never_meets_the_stale_check() -> None:
    edited = copy.deepcopy(load_schema("session-state/3.0.json"))
    edited["properties"]["project"]["maxLength"] = 3  # stricter than the generated check
    assert schemas.generated_check(edited) is None
    check = schemas.fast_check(edited)  # falls back to jsonschema_rs
    state = json.loads((FIXTURES / "3.0" / "valid" / _first("3.0")).read_text(encoding="utf-8"))
    assert schemas.generated_check(load_schema("session-state/3.0.json"))(state)
    assert not check(state), "the edited schema's maxLength was not applied"


def _first(d: str) -> str:
    return sorted(p.name for p in (FIXTURES / d / "valid").glob("*.json"))[0]


def test_generated_modules_import_nothing_but_re() -> None:
    modules = sorted(p for p in COMPILED.glob("*.py") if p.name != "__init__.py")
    assert len(modules) >= len(SCHEMA_FILES) + 1
    for path in modules:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        }
        froms = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert names <= {"re"} and not froms, f"{path.name} imports {names | froms}"


# --- differential: random documents near the fixtures ------------------------------------

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(["", "3", "3_1", "D001", "2026-11-22T10:00:00Z", "x-a", "pending", "True"])
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


def _seeds() -> list[tuple[str, Any]]:
    out = []
    for rel, d in FIXTURE_DIRS.items():
        for verdict in ("valid", "invalid"):
            for p in sorted((FIXTURES / d / verdict).glob("*.json")):
                out.append((rel, json.loads(p.read_text(encoding="utf-8"))))
    return out


SEEDS = _seeds()


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


def _mutate(doc: Any, path: tuple[Any, ...], value: Any, drop: bool) -> Any:
    doc = copy.deepcopy(doc)
    if not path:
        return value
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    if drop and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_generated_checks_answer_as_jsonschema_rs(data: st.DataObject) -> None:
    rel, seed = data.draw(st.sampled_from(SEEDS))
    path = data.draw(st.sampled_from(_paths(seed)))
    doc = _mutate(seed, path, data.draw(JSON_VALUES), data.draw(st.booleans()))
    schema = load_schema(rel)
    generated = schemas.generated_check(schema)
    assert generated is not None
    before = copy.deepcopy(doc)
    assert generated(doc) == schemas.engine_check(schema)(doc), json.dumps(doc)[:2000]
    assert doc == before, "the generated check changed the document"


@settings(max_examples=200, deadline=None)
@given(wf=st.sampled_from(sorted(BUILTINS)), decisions=JSON_VALUES, extra=JSON_VALUES)
def test_generated_fragments_answer_as_jsonschema_rs(wf: str, decisions: Any, extra: Any) -> None:
    fragment = load_workflow(wf).state_fragment()
    doc = {"decisions": decisions, "iac_tool": extra, "region": extra, "complexity": extra}
    generated = schemas.generated_check(fragment)
    assert generated is not None
    before = copy.deepcopy(doc)
    assert generated(doc) == schemas.engine_check(fragment)(doc)
    assert doc == before, "the generated check changed the document (a schema default?)"


@pytest.mark.parametrize("name", sorted(HOT))
def test_a_generated_check_never_fills_in_defaults(name: str) -> None:
    """fastjsonschema writes a schema's `default` into the data unless told not to; the
    apex fragment has defaults (region, iac_tool), and a check must be read-only."""
    check = schemas.generated_check(HOT[name])
    assert check is not None
    for doc in ({}, {"decisions": {}}, {"steps": {"1": {}}}):
        before = copy.deepcopy(doc)
        check(doc)
        assert doc == before, f"{name} filled in {doc}"
