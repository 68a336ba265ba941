"""Fuzz group: migrate. ``migrate`` on mutated documents of every version (pure,
idempotent, valid or coded, its JSON Patch exact) and ``migrate_session`` on random
session directories.
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from session_resume.core import schemas
from session_resume.core.jsonread import parse_json_bytes
from session_resume.core.migration import MigrationError, migrate
from session_resume.services.validation import ValidateOptions, validate_document
from session_resume.storage import state_repair, store

from .checks import NOW, WORKFLOWS, assert_coded
from .profiles import DIR_PROFILE, PROFILE, tried
from .sessiondirs import _read, entries, with_dir
from .strategies import SESSION_DIRS, dumps, mutated_docs
from conftest import apex_state

# Test tier (README "Test tiers"): Hypothesis properties (`nox -s fuzz` runs them at scale).
pytestmark = pytest.mark.slow

# --- structured documents: migrate ----------------------------------------------------------


@PROFILE
@given(
    doc=mutated_docs(),
    wf=st.sampled_from([None, "apex", "dotagent", "generic"]),
    now=st.sampled_from([NOW, NOW - timedelta(days=400), NOW + timedelta(days=4000)]),
)
def test_migrate_is_pure_idempotent_and_valid_or_coded(
    doc: dict[str, Any], wf: str | None, now: datetime
) -> None:
    tried("migrate(mutated)")
    parsed = parse_json_bytes(dumps(doc))  # as the reader hands it over (depth ≤ 64, …)
    assume(not parsed.corrupt and isinstance(parsed.value, dict))
    doc = parsed.value
    before = copy.deepcopy(doc)
    workflow = WORKFLOWS[wf] if wf else None
    try:
        res = migrate(doc, now=now, workflow=workflow, file="s.json")
    except MigrationError as exc:
        assert exc.diagnostics
        assert_coded(exc.diagnostics)
        assert {d.code for d in exc.diagnostics} <= {"SR141", "SR142", "SR152"}
        assert doc == before  # pure: the input is untouched
        return
    assert doc == before
    assert_coded(res.notes)
    # every migrated document is a 3.0 document by its schema
    assert res.document.get("schema_version") == "3.0"
    assert schemas.is_valid("session-state/3.0.json", res.document), res.document
    # the dry-run patch is exactly the change
    assert jsonpatch.apply_patch(before, res.patch()) == res.document
    # idempotent: migrating the result changes nothing
    again = migrate(copy.deepcopy(res.document), now=now, workflow=workflow, file="s.json")
    assert again.changed is False, again.patch()
    # and the validator agrees there is nothing left to migrate
    report = validate_document(dumps(res.document), options=ValidateOptions(now=None))
    assert_coded(report.diagnostics)
    assert report.schema_version == "3.0"
    assert not [d for d in report.diagnostics if d.code.startswith(("SR1", "SR2"))]


# --- session directories: migrate_session ---------------------------------------------------


@DIR_PROFILE
@given(layout=SESSION_DIRS, write=st.booleans())
def test_migrate_session_is_total(layout: dict[str, tuple[str, bytes]], write: bool) -> None:
    tried("migrate_session(dir)")

    def check(d: Path, root: Path) -> None:
        before = entries(d)
        old_state = _read(d / store.STATE)  # through a link inside the root, as the store reads
        try:
            out = state_repair.migrate_session(d, now=NOW, write=write, root=root)
        except store.StoreError as exc:
            assert_coded(exc.diagnostics)
            assert entries(d) == before
            return
        assert out.status in ("current", "migrated", "would_migrate", "refused")
        assert_coded(out.notes)
        after = entries(d)
        if out.status != "migrated":
            assert after.get(store.STATE) == before.get(store.STATE)
            assert after.get(store.BAK) == before.get(store.BAK)
        else:
            # the pre-migration content is kept as .bak (a state that was a link to .bak is
            # replaced by a file, the link's target stays), the new state is a 3.0 state
            assert after[store.BAK] == old_state
            assert store.load(d, root=root).version == "3.0"

    with_dir(layout, check)


# --- regressions: bugs these properties found, since fixed (kept as plain examples) -----
# Each names the commit that fixed it; the properties above would find it again, these keep
# the minimal reproduction in the normal suite whatever the random draw.


@pytest.mark.parametrize("version", ["3.0", "2.0"])
@pytest.mark.parametrize("status", [[], {}, ["pending"]])
def test_migrate_unhashable_step_status_is_coded(version: str, status: Any) -> None:
    """Was TypeError (unhashable) out of migrate (fixed in da8c42d)."""
    doc = apex_state()
    doc["schema_version"] = version
    doc["steps"]["1"]["status"] = status
    try:
        res = migrate(doc, now=NOW)
    except MigrationError as exc:
        assert_coded(exc.diagnostics)
        return
    assert schemas.is_valid("session-state/3.0.json", res.document)


# --- once known bugs: minimal reproductions, fixed (issue 14) -----------------------------


def test_migrate_of_an_in_memory_lone_surrogate_is_coded() -> None:
    """Once a bug: UnicodeEncodeError out of jsonschema_rs; now a coded refusal (SR152)."""
    doc = apex_state()
    doc["project"] = "\ud800"
    with pytest.raises(MigrationError):
        migrate(doc, now=NOW)


def test_migration_result_never_exceeds_the_depth_limit(session_dir: Path) -> None:
    """Once a bug: an input at the reader's depth limit (64) migrated into depth 65 (a value
    moved under x-legacy), which the reader refuses (SR123); now refused (SR152), not written."""
    deep: Any = None
    for _ in range(62):
        deep = {"k": deep}
    doc = apex_state()
    doc["steps"]["1"] = deep  # depth 64: readable
    data = dumps(doc)
    parsed = parse_json_bytes(data)
    assert not parsed.diagnostics
    (session_dir / store.STATE).write_bytes(data)
    out = state_repair.migrate_session(session_dir, now=NOW, write=True)
    assert out.status == "refused", out.status
    assert [n.code for n in out.notes] == ["SR152"]
    assert (session_dir / store.STATE).read_bytes() == data


def test_migrated_integral_float_stays_within_the_number_limit() -> None:
    """Once a bug: 1e308 became a 309-digit integer the reader refuses (SR122). Beyond 2^53 a
    float is no step number: kept under x-legacy (docs/spec.md §9.2)."""
    doc = apex_state()
    doc["current_step"] = 1e308
    assert store.classify(dumps(doc)).status == "ok"
    res = migrate(doc, now=NOW)
    assert not parse_json_bytes(dumps(res.document)).corrupt
    assert res.document["x-legacy"]["current_step"] == 1e308
