"""The state file's encoder (``storage.indented``) writes exactly what
``json.dumps(value, indent=2, ensure_ascii=False)`` writes, and fails as it fails."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_resume.storage import indented, store

from conftest import apex_state

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()  # every code point, lone surrogates and control characters included
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=8), inner, max_size=5)
        | st.dictionaries(st.integers() | st.booleans() | st.none(), inner, max_size=3)
    ),
    max_leaves=40,
)


def _reference(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


@settings(max_examples=600, deadline=None)
@given(_VALUES)
def test_the_same_text_as_json_dumps(value: Any) -> None:
    assert indented.dumps(value) == _reference(value)


def test_the_example_state_and_its_bytes() -> None:
    doc = apex_state()
    assert indented.dumps(doc) == _reference(doc)
    doc["notes"] = "a lone surrogate \ud800"
    assert store.serialize(doc) == (json.dumps(doc, indent=2) + "\n").encode("ascii")


class _Str(str):
    pass


@pytest.mark.parametrize(
    "value",
    [
        {"nan": float("nan"), "inf": [float("inf"), -float("inf")]},
        {1: "a", "1": "b", None: 2, 2.5: 3},
        {"s": _Str("sub"), "t": (1, [2, ()])},
        [[[[{}]]]],
    ],
)
def test_unusual_values_are_left_to_json_dumps(value: Any) -> None:
    assert indented.dumps(value) == _reference(value)


def test_the_same_errors_as_json_dumps() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    for bad in (cycle, {"x": object()}, {"x": {1, 2}}):
        with pytest.raises((ValueError, TypeError)) as ours:
            indented.dumps(bad)
        with pytest.raises((ValueError, TypeError)) as theirs:
            _reference(bad)
        assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))
