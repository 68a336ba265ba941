"""``session_resume.records`` behaves as :mod:`dataclasses` does for what the package uses
(issue 19: records without the import and per-class cost of dataclasses). Each property
builds the same class with both and compares."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_resume import records

# (name, kind, value): kind "required", "default" (an immutable value) or "factory" (list)
FIELD_SPECS = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c", "d", "e"]),
        st.sampled_from(["required", "default", "factory"]),
        st.one_of(st.integers(), st.text(max_size=3), st.none(), st.tuples(st.integers())),
        st.booleans(),  # compare
        st.booleans(),  # repr
    ),
    max_size=5,
    unique_by=lambda t: t[0],
).map(lambda fs: sorted(fs, key=lambda f: f[1] != "required"))  # required ones first


def _decorator(module: Any) -> Any:
    """``records.record``, or ``dataclasses.dataclass`` that it stands in for."""
    return module.record if module is records else module.dataclass


def _build(module: Any, specs: list[tuple[str, str, Any, bool, bool]], frozen: bool) -> Any:
    ns: dict[str, Any] = {"__annotations__": {}}
    for name, kind, value, compare, show in specs:
        ns["__annotations__"][name] = "Any"
        if kind == "default":
            ns[name] = module.field(default=value, compare=compare, repr=show)
        elif kind == "factory":
            ns[name] = module.field(default_factory=list, compare=compare, repr=show)
        elif not (compare and show):
            ns[name] = module.field(compare=compare, repr=show)
    cls = type("Rec", (), ns)
    return _decorator(module)(frozen=frozen)(cls)


def _outcome(fn: Any) -> Any:
    try:
        return ("ok", fn())
    except Exception as exc:  # the same exception type is part of the behaviour compared
        return (
            "raised",
            type(exc).__mro__[1] if type(exc).__name__ == "FrozenInstanceError" else type(exc),
        )


@given(specs=FIELD_SPECS, frozen=st.booleans(), data=st.data())
def test_records_behave_as_dataclasses(specs: Any, frozen: bool, data: st.DataObject) -> None:
    ours, std = _build(records, specs, frozen), _build(dataclasses, specs, frozen)
    names = [s[0] for s in specs]
    args = data.draw(st.lists(st.integers(), max_size=len(names) + 1))
    kwargs = data.draw(st.dictionaries(st.sampled_from([*names, "zz"]), st.integers(), max_size=3))
    made_ours = _outcome(lambda: ours(*args, **kwargs))
    made_std = _outcome(lambda: std(*args, **kwargs))
    assert made_ours[0] == made_std[0]
    if made_ours[0] == "raised":
        assert made_ours[1] is made_std[1]
        return
    a, b = made_ours[1], made_std[1]
    assert ours.__match_args__ == std.__match_args__
    assert {n: getattr(a, n) for n in names} == {n: getattr(b, n) for n in names}
    assert repr(a).replace("Rec(", "") == repr(b).split("Rec(", 1)[1]
    twin_a, twin_b = ours(*args, **kwargs), std(*args, **kwargs)
    assert (a == twin_a) == (b == twin_b) and (a != twin_a) == (b != twin_b)
    assert (a == b) is False  # different classes never compare equal
    if frozen:
        h_ours, h_std = _outcome(lambda: hash(a)), _outcome(lambda: hash(b))
        assert h_ours[0] == h_std[0]  # both raise on a list field
        if h_ours[0] == "ok":
            assert h_ours[1] == hash(twin_a)
        assert _outcome(lambda: setattr(a, names[0] if names else "x", 1))[1] is AttributeError
        assert _outcome(lambda: delattr(a, names[0] if names else "x"))[1] is AttributeError
    else:
        assert ours.__hash__ is None and std.__hash__ is None
    for s in specs:
        if s[1] == "factory" and s[0] not in kwargs and len(args) <= names.index(s[0]):
            assert getattr(a, s[0]) is not getattr(twin_a, s[0])  # a fresh list each time
    change = data.draw(st.dictionaries(st.sampled_from([*names, "zz"]), st.integers(), max_size=2))
    r_ours = _outcome(lambda: records.replace(a, **change))
    r_std = _outcome(lambda: dataclasses.replace(b, **change))
    assert r_ours[0] == r_std[0]
    if r_ours[0] == "ok":
        assert {n: getattr(r_ours[1], n) for n in names} == {n: getattr(r_std[1], n) for n in names}


def test_definition_errors_match() -> None:
    for module in (records, dataclasses):
        with pytest.raises(ValueError, match="mutable default"):
            _decorator(module)(type("Bad", (), {"__annotations__": {"x": "list"}, "x": []}))
        with pytest.raises(TypeError, match="non-default argument"):
            _decorator(module)(
                type("Bad", (), {"__annotations__": {"x": "int", "y": "int"}, "x": 1})
            )
