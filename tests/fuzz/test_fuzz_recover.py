"""Fuzz group: recover. ``recover`` on random session directories never touches
``.bak`` and never loses the corrupt file.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given

from session_resume.storage import state_repair, store, worklog

from .checks import NOW, assert_coded
from .profiles import DIR_PROFILE, tried
from .sessiondirs import entries, temps, with_dir
from .strategies import SESSION_DIRS

# Test tier (README "Test tiers"): Hypothesis properties (`nox -s fuzz` runs them at scale).
pytestmark = pytest.mark.slow

# --- session directories: recover -----------------------------------------------------------


@DIR_PROFILE
@given(layout=SESSION_DIRS)
def test_recover_never_touches_bak_and_never_loses_the_corrupt_file(
    layout: dict[str, tuple[str, bytes]],
) -> None:
    tried("recover(dir)")

    def check(d: Path, root: Path) -> None:
        before = entries(d)
        loaded = store.load(d, root=root)
        try:
            res = state_repair.recover(d, now=NOW, root=root)
        except store.StoreError as exc:
            assert_coded(exc.diagnostics)
            assert entries(d) == before  # refused: nothing written
            return
        after = entries(d)
        # .bak is never written by recovery
        assert after.get(store.BAK) == before.get(store.BAK)
        if loaded.status == "corrupt" and isinstance(before.get(store.STATE), bytes):
            # the corrupt bytes are still there, as *.corrupt-<stamp>
            assert res.corrupt_kept_as is not None
            assert after[res.corrupt_kept_as] == before[store.STATE]
        # no file that was there is deleted or changed, except the state itself
        for name, content in before.items():
            if name not in (store.STATE, store.LOCK, worklog.WORKLOG):
                assert after.get(name) == content, name
        assert temps(d) == {n for n in before if n in temps(d)}  # no new temp file left
        if res.action == "none":
            assert after.get(store.STATE) == before.get(store.STATE)
        else:
            assert store.load(d, root=root).status == "ok"
            if res.action == "restored_backup" and res.migrated_from is None:
                assert after[store.STATE] == before[store.BAK]  # a 3.0 .bak: byte for byte
            elif res.action == "restored_backup":
                # an older .bak is migrated, then restored (docs/spec.md §5)
                assert store.classify(before[store.BAK]).status != "ok"

    with_dir(layout, check)


# --- regressions: bugs these properties found, since fixed (kept as plain examples) -----
# Each names the commit that fixed it; the properties above would find it again, these keep
# the minimal reproduction in the normal suite whatever the random draw.


@pytest.mark.parametrize("kind", ["directory", "symlink"])
def test_recover_reports_a_worklog_it_cannot_append(session_dir: Path, kind: str) -> None:
    """Was a raw OSError after the state was restored (fixed in 4160f6a): now SR505."""
    root = session_dir.parents[1]
    (session_dir / store.STATE).write_bytes(b"{")
    if kind == "directory":
        (session_dir / worklog.WORKLOG).mkdir()
    else:
        (session_dir / "log.jsonl").write_bytes(b"")
        os.symlink("log.jsonl", session_dir / worklog.WORKLOG)
    if kind == "directory":  # issue 18: refused by the path policy before anything is written
        with pytest.raises(store.StoreError) as exc:
            state_repair.recover(session_dir, now=NOW, root=root)
        assert [d.code for d in exc.value.diagnostics] == ["SR102"]
        assert (session_dir / store.STATE).read_bytes() == b"{"
        return
    state_repair.recover(session_dir, now=NOW, root=root)
    assert store.load(session_dir, root=root).status == "ok"
