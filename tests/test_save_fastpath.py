"""save() without its waste (issue 19 point 3) keeps the durability contract (docs/spec.md §4):
the current file is still judged by its bytes under the lock, so a file changed behind the
process's back (a hand edit, another writer) is never taken for the one it wrote or read."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from session_resume.storage import known_ok, store

from conftest import apex_state

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def _same_size(data: bytes, old: bytes, new: bytes) -> bytes:
    """``data`` with ``old`` replaced by ``new`` (of the same length): same size, new bytes."""
    assert len(old) == len(new) and old in data
    return data.replace(old, new, 1)


def test_an_invalid_edit_of_the_same_size_is_not_rotated_to_bak(session_dir: Path) -> None:
    store.save(session_dir, apex_state(), now=NOW)
    store.save(session_dir, apex_state(), now=NOW)
    good_bak = (session_dir / store.BAK).read_bytes()
    state = session_dir / store.STATE
    edited = _same_size(state.read_bytes(), b'"current_step": 2', b'"current_step":-2')
    state.write_bytes(edited)
    assert store.load(session_dir).status == "invalid"
    store.save(session_dir, apex_state(), now=NOW)
    assert (session_dir / store.BAK).read_bytes() == good_bak  # .bak only from a valid state


def test_another_writers_revision_of_the_same_size_is_a_conflict(session_dir: Path) -> None:
    store.save(session_dir, apex_state(), now=NOW)
    res = store.save(session_dir, apex_state(), now=NOW, expected_revision=1)
    state = session_dir / store.STATE
    state.write_bytes(_same_size(state.read_bytes(), b'"revision": 2', b'"revision": 7'))
    with pytest.raises(store.ConflictError):
        store.save(session_dir, res.document, now=NOW, expected_revision=2)
    assert store.save(session_dir, res.document, now=NOW, expected_revision=7).revision == 8


def test_the_remembered_bytes_answer_as_classify_does(session_dir: Path) -> None:
    """A load of the bytes save() wrote gives what classifying them gives, a fresh copy."""
    store.save(session_dir, apex_state(), now=NOW)
    data = (session_dir / store.STATE).read_bytes()
    assert known_ok.holds(str(session_dir / store.STATE), data)
    first, second = store.load(session_dir), store.load(session_dir)
    expected = store.classify(data, file=str(session_dir / store.STATE))
    assert (first.status, first.document, first.diagnostics) == (
        expected.status,
        expected.document,
        expected.diagnostics,
    )
    assert first.document is not second.document


def test_bytes_with_a_finding_are_not_remembered(session_dir: Path) -> None:
    state = session_dir / store.STATE
    state.write_bytes(b"\xef\xbb\xbf" + json.dumps(apex_state(), indent=2).encode())
    loaded = store.load(session_dir)
    assert loaded.status == "ok" and [d.code for d in loaded.diagnostics] == ["SR113"]
    assert [d.code for d in store.load(session_dir).diagnostics] == ["SR113"]


def test_save_changes_neither_the_document_given_nor_shares_it(session_dir: Path) -> None:
    doc = apex_state()
    before = copy.deepcopy(doc)
    res = store.save(session_dir, doc, now=NOW)
    assert doc == before
    assert res.document == json.loads((session_dir / store.STATE).read_bytes())
    res.document["steps"]["1"]["artifacts"].append("x")
    assert doc == before


def test_the_memory_is_bounded(tmp_path: Path) -> None:
    for i in range(known_ok.MAX_FILES * 3):
        known_ok.remember(str(tmp_path / str(i)), b"{}")
    assert len(known_ok._known) <= known_ok.MAX_FILES
    known_ok.remember("big", b" " * (known_ok.MAX_BYTES + 1))
    assert not known_ok.holds("big", b" " * (known_ok.MAX_BYTES + 1))
