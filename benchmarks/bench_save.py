"""save-vs-bare-io: store.save() in process against a bare temp write + fsync + replace of
the same bytes; a third contender times only the checks save() makes."""

from __future__ import annotations

import copy
import json
import os
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runner import EXAMPLE, BenchAbort, Prepared, Run, Target, benchmark, fmt_s
from states import STATE_FILE

_SAVE_NOW = datetime(2026, 11, 20, 15, 0, tzinfo=UTC)  # after the example's `updated`
_SAVE, _CHECKS, _BARE = "store.save()", "save()'s checks only", "bare write+fsync+replace"


def _fsync_dir(d: Path) -> None:
    fd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _save_breakdown(med: dict[str, float], info: dict[str, Any]) -> list[str]:
    save, checks, bare = med[_SAVE], med[_CHECKS], med[_BARE]
    rest = save - checks
    return [
        f"breakdown of save()'s median {fmt_s(save)}: checks (parse + schema of the current "
        f"file twice, validation of the new document, two serializations, deepcopy) "
        f"{fmt_s(checks)} = {checks / save:.0%}; the rest (lock + temp + fsync + .bak link + "
        f"replace + directory fsync) ~{fmt_s(rest)} = {rest / bare:.2f}x the bare write",
        f"state file written: {info['bytes']:,} bytes",
    ]


def _session(tmpdir: Path) -> tuple[dict[str, Any], Path]:
    """The bundled example state (without its source-tree ``$schema``) and a copy of its
    session directory, minus the state file, under ``tmpdir``."""
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    doc.pop("$schema", None)  # its relative path points into the source tree
    sdir = tmpdir / "agent-output" / doc["project"]
    sdir.mkdir(parents=True)
    for f in EXAMPLE.parent.iterdir():
        if f.name != STATE_FILE:
            shutil.copyfile(f, sdir / f.name)
    return doc, sdir


def _check_saves(save: Callable[[], None], sdir: Path, tmpdir: Path) -> bytes:
    """Data check: two saves (the second rotates a valid .bak), the file loads as ok and
    validates clean. Returns the bytes saved."""
    from session_resume import ValidateOptions, validate_document
    from session_resume.storage import store

    save()
    save()
    loaded = store.load(sdir, root=tmpdir)
    if loaded.status != "ok" or loaded.revision != 2 or not (sdir / store.BAK).is_file():
        raise BenchAbort(
            f"store.save() did not leave a valid state (status {loaded.status}, "
            f"revision {loaded.revision}): " + "; ".join(d.message for d in loaded.diagnostics)
        )
    data = (sdir / STATE_FILE).read_bytes()
    report = validate_document(data, file=STATE_FILE, options=ValidateOptions(now=_SAVE_NOW))
    if report.diagnostics:
        raise BenchAbort(
            "the saved state is not clean: "
            + "; ".join(f"{d.code} {d.message}" for d in report.diagnostics)
        )
    return data


@benchmark(
    "save-vs-bare-io",
    description="in process, repeated on one session directory: store.save() of the bundled "
    "example state (apex, step 2 in progress) vs a bare O_EXCL temp write of the same bytes + "
    "fsync + os.replace + directory fsync; a third contender times only the checks save() "
    "makes (no lock, no write)",
    contenders=(_SAVE, _CHECKS, _BARE),
    anchor=_BARE,
    target=Target(_SAVE, 1.3),
    runs=300,
    quick_runs=60,
    warmup=5,
    derive=_save_breakdown,
)
def save_vs_bare_io(tmpdir: Path) -> Prepared:
    from session_resume import ValidateOptions, load_workflow, validate_document
    from session_resume.storage import store

    doc, sdir = _session(tmpdir)
    wf = load_workflow(doc["workflow"])
    bare_dir = tmpdir / "bare"
    bare_dir.mkdir()

    # As a writer command calls it (commands/write.py): a Workflow object and the repository
    # root; no worklog event (that append is its own write, not part of the comparison).
    def save() -> None:
        store.save(sdir, doc, now=_SAVE_NOW, workflow=wf, root=tmpdir)

    data = _check_saves(save, sdir, tmpdir)
    bare_state = bare_dir / STATE_FILE
    bare_tmp = bare_dir / f".{STATE_FILE}.bench.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)

    def bare() -> None:
        fd = os.open(bare_tmp, flags, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(bare_tmp, bare_state)
        _fsync_dir(bare_dir)

    # What save() does besides locking and writing, in the order it does it (store.py): load()
    # reads and classifies the current file (parse + 3.0 schema), the document is copied and
    # stamped, serialized and fully validated (_check_writable: schema, semantic and workflow
    # rules), serialized again to be written, and the current file is read and classified once
    # more to decide whether it may become .bak (_replace_state -> is_valid_state_bytes).
    def checks() -> None:
        current = store.load(sdir, root=tmpdir)
        new = copy.deepcopy(doc)
        new["updated"] = "2026-11-20T15:00:00Z"
        new["revision"] = current.revision + 1
        rep = validate_document(
            store.serialize(new),
            file=str(sdir / STATE_FILE),
            options=ValidateOptions(workflow=wf, now=_SAVE_NOW),
        )
        if rep.errors():
            raise BenchAbort("save()'s checks found errors")
        store.serialize(new)
        store.is_valid_state_bytes((sdir / STATE_FILE).read_bytes())

    bare()
    checks()
    if bare_state.read_bytes() != data:
        raise BenchAbort("the bare write did not write the bytes save() wrote")
    return Prepared(
        {
            _SAVE: Run(save, "store.save(dir, doc, now=..., workflow=apex, root=...)"),
            _CHECKS: Run(
                checks,
                "store.load() + deepcopy + validate_document(serialize(doc)) + serialize() + "
                "store.is_valid_state_bytes()",
            ),
            _BARE: Run(
                bare,
                "os.open(O_CREAT|O_EXCL) + write + fsync + close + os.replace + fsync(dir)",
            ),
        },
        notes=[
            f"the bundled example state ({len(data):,} bytes), saved into {sdir.name}/ "
            f"under the temp dir; the bare write goes to a sibling directory"
        ],
        info={"bytes": len(data)},
    )
