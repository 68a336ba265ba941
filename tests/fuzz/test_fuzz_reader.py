"""Fuzz group: bytes. The strict JSON reader, ``validate_document`` and the store's
classification on random bytes and bytes near a valid file.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_resume.core.jsonread import parse_json_bytes
from session_resume.services.validation import ValidateOptions, validate_document
from session_resume.storage import store

from .checks import NOW, STATUSES, assert_coded
from .profiles import PROFILE, tried
from .strategies import ANY_BYTES, dumps
from conftest import apex_state, run_cli

# Test tier (README "Test tiers"): Hypothesis properties (`nox -s fuzz` runs them at scale).
pytestmark = pytest.mark.slow

# --- bytes: parse, validate, classify -------------------------------------------------------


@PROFILE
@given(data=ANY_BYTES)
def test_parse_json_bytes_is_total_and_agrees_with_json(data: bytes) -> None:
    tried("parse_json_bytes")
    parsed = parse_json_bytes(data, file="s.json")
    assert_coded(parsed.diagnostics)
    if parsed.value is not None:
        assert isinstance(parsed.value, dict)
    if not parsed.diagnostics:
        # Strict parsing accepted it: Python's own parser reads the same value.
        assert json.loads(data.decode("utf-8")) == parsed.value
    else:
        assert parsed.corrupt or parsed.value is not None


@PROFILE
@given(data=ANY_BYTES, now=st.sampled_from([NOW, None]))
def test_validate_document_never_raises_on_bytes(data: bytes, now: datetime | None) -> None:
    tried("validate(bytes)")
    report = validate_document(data, file="s.json", options=ValidateOptions(now=now))
    assert_coded(report.diagnostics)
    loaded = store.classify(data, file="s.json")
    assert loaded.status in STATUSES
    assert_coded(loaded.diagnostics)
    if parse_json_bytes(data).corrupt:
        assert loaded.status == "corrupt" and not report.ok()
    if report.ok() and report.schema_version == "3.0":
        # what the validator accepts, the store reads as a usable state
        assert loaded.status == "ok"


# --- regressions: bugs these properties found, since fixed (kept as plain examples) -----
# Each names the commit that fixed it; the properties above would find it again, these keep
# the minimal reproduction in the normal suite whatever the random draw.


@pytest.mark.parametrize("where", ["project", "decision-value", "cli"])
def test_lone_surrogate_escape_is_corrupt_not_a_crash(where: str, tmp_path: Path) -> None:
    """Was UnicodeEncodeError out of jsonschema_rs and out of the CLI's output (SR900 on a
    44-byte file), and out of save(); since 3e71b51 a \\u escape of a lone surrogate is SR116."""
    if where == "cli":
        state = tmp_path / store.STATE
        state.write_bytes(b'{"schema_version":"3.0","project":"\\ud800"}')
        proc = run_cli("validate", str(state), "--now", "2026-03-03T12:00:00Z", cwd=tmp_path)
        assert proc.returncode == 1 and "SR116" in proc.stdout, proc.stderr
        return
    doc = apex_state()
    if where == "project":
        doc["project"] = "\ud800"
    else:
        doc["decisions"]["region"] = "a\udfffb"
    data = dumps(doc)  # the file holds the escape: valid JSON text, not a Unicode string
    report = validate_document(data, options=ValidateOptions(now=NOW))
    assert "SR116" in [d.code for d in report.diagnostics]
    assert store.classify(data).status == "corrupt"


_KEYS = st.sampled_from(["a", "b", "c", "a~b", "x/y"])
_OBJECT_TEXT = st.recursive(
    st.sampled_from(["1", "null", '"s"', "[]"]),
    lambda kids: (
        st.lists(st.tuples(_KEYS, kids), max_size=5).map(
            lambda pairs: "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in pairs) + "}"
        )
        | st.lists(kids, max_size=3).map(lambda items: "[" + ",".join(items) + "]")
    ),
    max_leaves=12,
)


def _duplicates_by_scan(text: str) -> list[tuple[str, str]]:
    """Every repeated key as (the object's pointer, key), by a plain scan of the pairs of every
    object the value read holds (an object that a repeated key's later value replaced is not
    in it): the definition the reader's C-built objects must keep."""
    out: list[tuple[str, str]] = []

    def walk(pairs_or_list: object, ptr: str) -> None:
        if isinstance(pairs_or_list, list) and all(isinstance(p, tuple) for p in pairs_or_list):
            seen: set[str] = set()
            for k, _v in pairs_or_list:
                if k in seen:
                    out.append((ptr, k))
                seen.add(k)
            for k, v in dict(pairs_or_list).items():  # a value a later one replaced is gone
                walk(v, ptr + "/" + k.replace("~", "~0").replace("/", "~1"))
        elif isinstance(pairs_or_list, list):
            for i, v in enumerate(pairs_or_list):
                walk(v, f"{ptr}/{i}")

    walk(json.loads(text, object_pairs_hook=lambda pairs: [tuple(p) for p in pairs]), "")
    return out


@PROFILE
@given(text=_OBJECT_TEXT.filter(lambda t: t.startswith("{")))
def test_duplicate_keys_are_each_reported_and_the_last_value_wins(text: str) -> None:
    """SR121 names every repeated key of every object (its pointer), and the value read is
    Python's (the last of a repeated key wins), whatever the nesting."""
    tried("duplicate keys")
    parsed = parse_json_bytes(text.encode(), file="s.json")
    found = sorted(d.pointer for d in parsed.diagnostics if d.code == "SR121")
    want = _duplicates_by_scan(text)
    assert found == sorted(f"{ptr}/{k.replace('~', '~0').replace('/', '~1')}" for ptr, k in want)
    if not want:
        assert parsed.value == json.loads(text)
