"""Fuzz group: writers. ``save`` on random session directories either succeeds or
leaves state and ``.bak`` byte for byte as they were.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_resume.storage import state_repair, store

from .checks import NOW, assert_coded
from .profiles import DIR_PROFILE, tried
from .sessiondirs import entries, temps, with_dir
from .strategies import SEED_DOCS, SESSION_DIRS, _seed, dumps
from conftest import apex_state

# Test tier (README "Test tiers"): Hypothesis properties (`nox -s fuzz` runs them at scale).
pytestmark = pytest.mark.slow

# --- session directories: save --------------------------------------------------------------


@DIR_PROFILE
@given(layout=SESSION_DIRS, event=st.sampled_from([None, "note", "checkpoint"]))
def test_save_either_succeeds_or_leaves_everything_as_it_was(
    layout: dict[str, tuple[str, bytes]], event: str | None
) -> None:
    tried("save(dir)")
    doc = apex_state()

    def check(d: Path, root: Path) -> None:
        before = entries(d)
        try:
            res = store.save(d, doc, now=NOW, root=root, event=event, lock_timeout=5)
        except store.StoreError as exc:
            assert_coded(exc.diagnostics)
            after = entries(d)
            if [x.code for x in exc.diagnostics] == ["SR505"]:
                # documented: the state was written, only its worklog event failed
                assert store.load(d, root=root).status == "ok"
                return
            assert after.get(store.STATE) == before.get(store.STATE)
            assert after.get(store.BAK) == before.get(store.BAK)
            assert temps(d) == {n for n in before if n.endswith(".tmp")} & temps(d)
            return
        after = entries(d)
        loaded = store.load(d, root=root)
        assert loaded.status == "ok" and loaded.document == res.document
        if after.get(store.BAK) != before.get(store.BAK):
            # .bak changed: it is now exactly the previous state, which was valid
            assert after[store.BAK] == before[store.STATE]
            assert isinstance(before[store.STATE], bytes)
            assert store.is_valid_state_bytes(before[store.STATE])
        assert temps(d) <= {n for n in before if n.endswith(".tmp")}

    with_dir(layout, check)


# --- regressions: bugs these properties found, since fixed (kept as plain examples) -----
# Each names the commit that fixed it; the properties above would find it again, these keep
# the minimal reproduction in the normal suite whatever the random draw.


@pytest.mark.parametrize("kind", ["directory", "symlink"])
def test_lock_path_not_a_regular_file_is_coded(session_dir: Path, kind: str) -> None:
    """Was a raw IsADirectoryError / ELOOP out of filelock (fixed in 4160f6a). Issue 18: the
    path policy refuses a directory before anything is opened (SR102); a link, even inside
    the root, is never opened as the lock (O_NOFOLLOW: SR160)."""
    root = session_dir.parents[1]  # the repository (the fixture's .git marks it)
    if kind == "directory":
        (session_dir / store.LOCK).mkdir()
    else:
        (session_dir / "elsewhere.lock").write_bytes(b"")
        os.symlink("elsewhere.lock", session_dir / store.LOCK)  # inside the root: allowed
    with pytest.raises(store.StoreError) as exc:
        store.save(session_dir, apex_state(), now=NOW, root=root)
    assert [d.code for d in exc.value.diagnostics] == ["SR102" if kind == "directory" else "SR160"]


def test_bak_is_a_directory_is_coded(session_dir: Path) -> None:
    """Was a raw IsADirectoryError out of save() (fixed in 3e71b51: SR163, nothing changed)."""
    root = session_dir.parents[1]
    before = dumps(apex_state())
    (session_dir / store.STATE).write_bytes(before)
    (session_dir / store.BAK).mkdir()
    (session_dir / store.BAK / "x").write_bytes(b"x")
    with pytest.raises(store.StoreError) as exc:
        store.save(session_dir, apex_state(), now=NOW, root=root)
    assert_coded(exc.value.diagnostics)
    assert (session_dir / store.STATE).read_bytes() == before
    assert temps(session_dir) == set()


@pytest.mark.parametrize("op", ["save", "migrate"])
def test_bak_symlink_to_state_keeps_the_previous_version(session_dir: Path, op: str) -> None:
    """Was data loss: os.path.samefile followed the link, the rotation was skipped and the
    previous (or pre-migration) version was gone (fixed in 3e71b51)."""
    root = session_dir.parents[1]
    old = dumps(SEED_DOCS[0] if op == "save" else _seed("v2-test01.json"))
    (session_dir / store.STATE).write_bytes(old)
    os.symlink(store.STATE, session_dir / store.BAK)
    try:
        if op == "save":
            store.save(session_dir, apex_state(), now=NOW, root=root)
        else:
            outcome = state_repair.migrate_session(session_dir, now=NOW, write=True, root=root)
            assert outcome.status == "migrated"
    except store.StoreError:
        return  # refusing is as good: nothing was lost
    kept = [p for p in session_dir.iterdir() if p.is_file() and p.read_bytes() == old]
    assert kept, "the previous state is nowhere in the session directory"
