"""Fuzz group: the resume decision. ``decide`` on random snapshots: total,
deterministic, pure, its output follows ``schema/decision/2.json``.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_resume.core.resume_decision import ACTIONS, Options, Snapshot, decide
from session_resume.storage import store

from .checks import DECISION_SCHEMA, NOW, STATUSES, WORKFLOWS, assert_coded_list
from .profiles import PROFILE, tried
from .strategies import _EVENTS, _SENTINELS, dumps, mutated_docs
from conftest import apex_state

# Test tier (README "Test tiers"): Hypothesis properties (`nox -s fuzz` runs them at scale).
pytestmark = pytest.mark.slow

# --- decide ---------------------------------------------------------------------------------


@st.composite
def snapshots(draw: st.DrawFn) -> tuple[Snapshot, str | None]:
    """A snapshot as ``snapshot.take`` builds one (the document only when it is ``ok``), with
    a random lease, worklog tail, artifact times and temp files; and a step to ask about."""
    doc = draw(mutated_docs())
    loaded = store.classify(dumps(doc))
    real = draw(st.booleans())  # the status the bytes really have, or any other
    status = loaded.status if real else draw(st.sampled_from(sorted(STATUSES)))
    document = loaded.document if status == "ok" and loaded.status == "ok" else None
    if status == "ok" and document is None:
        status = "invalid"
    steps = list((document or {}).get("steps", {}))
    step = draw(
        st.one_of(
            st.none(),
            st.sampled_from(steps) if steps else st.none(),
            st.sampled_from(["1", "2", "3_5", "7", "99", "3.5"]),
            st.text(max_size=6),
        )
    )
    snap = Snapshot(
        state_status=status,
        document=document,
        state_codes=tuple(d.code for d in loaded.diagnostics),
        backup_usable=draw(st.booleans()),
        sentinel=draw(_SENTINELS),
        session_ended=draw(st.booleans()),
        owner_alive=draw(st.sampled_from([None, True, False])),
        last_events=tuple(draw(_EVENTS)),
        artifacts=draw(
            st.dictionaries(
                st.text(max_size=12),
                st.one_of(st.none(), st.floats(0, 4e9, allow_nan=False)),
                max_size=3,
            )
        ),
        temp_files=tuple(draw(st.lists(st.text(max_size=10), max_size=2))),
    )
    return snap, step


_NOWS = st.datetimes(
    min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
)


@PROFILE
@given(
    case=snapshots(),
    now=st.one_of(st.just(NOW), _NOWS),
    wf=st.sampled_from(sorted(WORKFLOWS)),
    opts=st.builds(
        Options,
        session=st.sampled_from([None, "s1", "s2"]),
        stale_seconds=st.integers(0, 10**6),
        takeover=st.booleans(),
    ),
)
def test_decide_is_total_deterministic_and_pure(
    case: tuple[Snapshot, str | None], now: datetime, wf: str, opts: Options
) -> None:
    tried("decide(snapshot)")
    snap, step = case
    frozen = copy.deepcopy(snap)
    out = decide(snap, step, now, WORKFLOWS[wf], opts)
    assert out["action"] in ACTIONS
    assert decide(snap, step, now, WORKFLOWS[wf], opts) == out  # deterministic
    assert snap == frozen  # pure: the snapshot is not modified
    DECISION_SCHEMA.validate(out)
    json.dumps(out, allow_nan=False)  # JSON-ready
    assert_coded_list([e["code"] for e in out["reasons"] + out["warnings"]])


# --- regressions: bugs these properties found, since fixed (kept as plain examples) -----
# Each names the commit that fixed it; the properties above would find it again, these keep
# the minimal reproduction in the normal suite whatever the random draw.


def test_decision_with_odd_lease_fields_follows_its_schema() -> None:
    """decide() copied the lease's owner/host/started/pid as found (fixed in 3e71b51)."""
    sentinel = {"v": 1, "session": "s1", "owner": 5, "host": ["h"], "pid": ""}
    sentinel.update(started=7, heartbeat="2026-03-01T00:00:00Z")
    snap = Snapshot("ok", document=apex_state(), sentinel=sentinel)
    DECISION_SCHEMA.validate(decide(snap, None, NOW, WORKFLOWS["apex"]))
