"""Fuzz group: rendering the handoff. State values are data, never template source."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from session_resume.core.diagnostics import Severity
from session_resume.storage import store

from .checks import NOW, WORKFLOWS
from .profiles import PROFILE, tried
from .strategies import _TEXT, SEED_DOCS, _pointers, dumps

# Test tier (README "Test tiers"): Hypothesis properties (`nox -s fuzz` runs them at scale).
pytestmark = pytest.mark.slow

# --- rendering the handoff from a state -----------------------------------------------------


_TEMPLATE_SYNTAX = st.sampled_from(
    ["{{ 7*7 }}", "{% if true %}X{% endif %}", "{# c #}", "{{ config }}", "{%raw%}", "}}{{"]
)


def _v3_docs() -> st.SearchStrategy[dict[str, Any]]:
    """Schema-valid 3.0 states mostly: apex_state() or a v3 fixture with at most one edit."""
    v3 = [d for d in SEED_DOCS if d.get("schema_version") == "3.0"]

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        doc: dict[str, Any] = copy.deepcopy(draw(st.sampled_from(v3)))
        if draw(st.integers(0, 3)) == 0:  # sometimes another string in a free-text place
            places = [p for p in _pointers(doc) if p and p[0] in ("decisions", "open_findings")]
            places = [p for p in places if isinstance(_get(doc, p), str)]
            if places:
                path = draw(st.sampled_from(places))
                _get(doc, path[:-1])[path[-1]] = draw(_TEXT)
        return doc

    return build()


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _put(doc: dict[str, Any], where: str, value: str) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    if where == "region":
        doc["decisions"]["region"] = value
    elif where == "finding":
        doc["open_findings"].append(value)
    elif where == "artifact":
        doc["steps"]["1"]["artifacts"].append("agent-output/demo/" + value)
    else:
        doc["decision_log"] = [{"id": "D001", "title": value, "choice": "c", "rationale": "r"}]
    return doc


@PROFILE
@given(
    doc=_v3_docs(),
    jinja=st.lists(_TEMPLATE_SYNTAX, min_size=1, max_size=3),
    where=st.sampled_from(["region", "finding", "artifact", "decision_title"]),
)
def test_handoff_of_any_valid_state_renders_and_checks(
    doc: dict[str, Any], jinja: list[str], where: str
) -> None:
    """State values are data, never template source: Jinja syntax in them is printed (escaped),
    never evaluated; any schema-valid state renders into a handoff that passes its checks."""
    from session_resume.core.handoff_rules import check_handoff_text
    from session_resume.rendering.handoff import render_handoff

    tried("render handoff")
    try:
        hostile, benign = _put(doc, where, "".join(jinja)), _put(doc, where, "x")
    except (KeyError, TypeError, AttributeError):
        assume(False)  # the random edit removed the place the value goes
        return
    loaded = store.classify(dumps(hostile))
    assume(loaded.status == "ok" and loaded.document is not None)
    assume(store.classify(dumps(benign)).status == "ok")
    wf = WORKFLOWS.get(str(loaded.document.get("workflow")), WORKFLOWS["apex"])
    text = render_handoff(loaded.document, wf, now=NOW)
    plain = render_handoff(benign, wf, now=NOW)
    if "{{ 7*7 }}" in jinja:
        assert text.count("49") == plain.count("49"), text  # {{ 7*7 }} was not evaluated
    problems = [d for d in check_handoff_text(text, file="h.md") if d.severity is Severity.ERROR]
    assert problems == [], problems
