"""Issue 14: every real upstream state file reaches a valid 3.0 with nothing lost.

The corpus (``tests/fixtures/upstream/``) holds every distinct version of every state file in
the upstream history, byte for byte, listed in MANIFEST.json with the shapes it exhibits and
what the tool did with it when it was measured. Files the tool cannot yet bring to a valid,
lossless 3.0 are strict xfails whose reason names the shape that blocks them: the day
migration handles a shape, its files XPASS and the marker (that is, the MANIFEST's
``blocked_by``/``loses`` entry) must be removed — rerun ``corpus_tool.py --write``.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

# Test tier (README "Test tiers"): the upstream corpus through the CLI.
pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent / "fixtures" / "upstream"

_spec = importlib.util.spec_from_file_location("upstream_corpus_tool", HERE / "corpus_tool.py")
assert _spec and _spec.loader
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)

MANIFEST = corpus.load_manifest()
FILES: list[dict[str, Any]] = MANIFEST["files"]


def _param(entry: dict[str, Any], reasons: list[str]) -> Any:
    marks = []
    if reasons:
        marks.append(pytest.mark.xfail(strict=True, reason="issue 14: " + "; ".join(reasons)))
    return pytest.param(entry, id=entry["file"].removesuffix(".json"), marks=marks)


def test_manifest_lists_every_fixture_once() -> None:
    listed = [e["file"] for e in FILES]
    assert len(listed) == len(set(listed))
    on_disk = sorted(p.name for p in HERE.glob("*.json") if p.name != "MANIFEST.json")
    assert sorted(listed) == on_disk


def test_corpus_counts() -> None:
    """The counts the README reports: 36 session/template files (issue 14's count) + 5 exec-plan."""
    groups: dict[str, int] = {}
    for e in FILES:
        groups[e["group"]] = groups.get(e["group"], 0) + 1
    assert groups == {"session": 30, "template": 6, "exec-plan": 5}
    versions: dict[str, int] = {}
    for e in FILES:
        if e["group"] != "exec-plan":
            v = e["schema_version"] or "none"
            versions[v] = versions.get(v, 0) + 1
    assert versions == {"none": 1, "1.0": 20, "2.0": 4, "3.0": 11}
    assert len({e["project"] for e in FILES if e["group"] == "session"}) == 15


@pytest.mark.parametrize("entry", [_param(e, []) for e in FILES])
def test_fixture_is_the_upstream_blob(entry: dict[str, Any]) -> None:
    data = (HERE / entry["file"]).read_bytes()
    assert corpus.git_blob_sha(data) == entry["blob"]
    assert entry["file"] == f"{entry['project']}--{entry['blob'][:10]}.json"
    doc = json.loads(data)
    assert doc.get("schema_version") == entry["schema_version"]
    # the catalogue stays honest: the recorded shapes are the ones the file exhibits
    assert corpus.shapes_of(doc) == entry["shapes"]


@functools.cache
def _migrated(name: str) -> dict[str, Any]:
    """Migrate one fixture in a scratch repository; the result and what validate says after."""
    entry = next(e for e in FILES if e["file"] == name)
    data = (HERE / name).read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sdir = corpus.make_root(root, entry["project"], data)
        mig = corpus.migrate_dir(sdir, root)
        flags = corpus.salvage_flags(mig)
        if flags:  # a contradiction: the refusal names --salvage, the user's next step
            mig = corpus.migrate_dir(sdir, root, *flags)
        out: dict[str, Any] = {"migrate": mig, "before": json.loads(data)}
        if mig["exit"] == 0:
            state = sdir / "00-session-state.json"
            out["after"] = json.loads(state.read_text(encoding="utf-8"))
            out["validate"] = corpus.validate_file(state, root)
            out["check"] = corpus.migrate_dir(sdir, root, "--check")
        return out


@pytest.mark.parametrize("entry", [_param(e, e["blocked_by"]) for e in FILES])
def test_migrate_reaches_valid_3_0(entry: dict[str, Any]) -> None:
    res = _migrated(entry["file"])
    assert res["migrate"]["exit"] == 0, res["migrate"]
    assert res["after"]["schema_version"] == "3.0"
    assert res["validate"]["error_count"] == 0, res["validate"]
    assert res["check"]["exit"] == 0, res["check"]  # idempotent: nothing left to migrate


@pytest.mark.parametrize("entry", [_param(e, e["loses"]) for e in FILES])
def test_migrate_is_lossless(entry: dict[str, Any]) -> None:
    res = _migrated(entry["file"])
    assert res["migrate"]["exit"] == 0, res["migrate"]
    assert corpus.lost_values(res["before"], res["after"]) == []


def test_lossless_check_sees_a_loss() -> None:
    """Negative control: the comparison notices a dropped value, and accepts documented renames."""
    before = {
        "updated": "2026-03-01T00:00:00Z",
        "steps": {"3.5": {"sub_step": "phase_2"}},
        "x": 3.5,
    }
    renamed = {
        "steps": {"3_5": {"sub_step": "phase_2"}},
        "x-legacy": {"updated": "2026-03-01T00:00:00Z"},
        "x": "3_5",
    }
    assert corpus.lost_values(before, renamed) == []
    dropped = {"steps": {"3_5": {"sub_step": None}}, "updated": "2026-11-22T00:00:00Z", "x": "3_5"}
    assert corpus.lost_values(before, dropped) == [
        ("/updated", "2026-03-01T00:00:00Z"),
        ("/steps/3.5/sub_step", "phase_2"),
    ]


# --------------------------------------------------------------------------- live cases

REPO = Path(__file__).resolve().parents[1]
UPSTREAM_CASES = {
    "upstream-complete-sub-step-kept",
    "upstream-completed-before-started-refused",
    "upstream-completed-before-started-salvage",
    "upstream-current-step-beyond-2-53",
    "upstream-current-step-mismatch",
    "upstream-current-step-number-3-5",
    "upstream-decision-log-empty-texts",
    "upstream-decision-log-key-value",
    "upstream-decision-log-step-decimal",
    "upstream-decision-log-step-integral-float",
    "upstream-finding-status-words-resolved",
    "upstream-later-step-ran-while-earlier-pending",
    "upstream-letter-suffix-step-key",
    "upstream-skipped-pass-name-no-underscore",
    "upstream-skipped-pass-string",
    "upstream-skipped-review-name",
    "upstream-status-words-outside-the-four",
    "upstream-two-in-progress-refused",
    "upstream-two-in-progress-salvage",
    "upstream-updated-kept",
    "upstream-updated-not-a-timestamp",
    "upstream-v3-repair-decision-log-step-decimal",
}


def test_every_upstream_shape_has_a_live_case() -> None:
    """The cases once staged in tests/fixtures/upstream/cases/ pass and live in the suite
    (tests/test_conformance.py runs them), with those written since for the upstream forms
    spec §9.2 and §9.7 name; none is left staged."""
    live = {d.name for d in (REPO / "conformance" / "cases" / "migrate").glob("upstream-*")}
    assert live == UPSTREAM_CASES
    staged = HERE / "cases" / "migrate"
    assert not staged.exists() or not any(staged.iterdir())
