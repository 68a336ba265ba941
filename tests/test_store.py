"""The state store API (DESIGN §5): load, save, recover, migrate_session; and the migrate and
recover commands as a user runs them."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from session_resume.storage import state_repair, store, worklog

from conftest import apex_state, dump, run_cli

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
FIXTURES = Path(__file__).parent / "fixtures" / "migrate"


def _state(d: Path) -> dict[str, object]:
    return json.loads((d / store.STATE).read_text())


def test_load_absent(session_dir: Path) -> None:
    assert store.load(session_dir).status == "absent"


@pytest.mark.parametrize(
    "data,status",
    [
        (b"", "corrupt"),
        (b"{", "corrupt"),
        (b"[]", "corrupt"),
        (b'{"a":1,"a":2}', "corrupt"),
        (dump({**apex_state(), "schema_version": "2.0"}), "needs_migration"),
        (dump({**apex_state(), "schema_version": "9.0"}), "too_new"),
        (dump({**apex_state(), "schema_version": 3}), "bad_version"),
        (dump({**apex_state(), "current_step": "x"}), "invalid"),
        (dump(apex_state()), "ok"),
    ],
)
def test_load_classifies(session_dir: Path, data: bytes, status: str) -> None:
    (session_dir / store.STATE).write_bytes(data)
    assert store.load(session_dir).status == status


def test_save_refreshes_updated_and_revision(session_dir: Path) -> None:
    res = store.save(session_dir, apex_state(), now=NOW)
    assert res.revision == 1
    doc = _state(session_dir)
    assert doc["updated"] == "2026-11-22T12:00:00Z" and doc["revision"] == 1
    res = store.save(session_dir, doc, now=NOW)
    assert res.revision == 2 and _state(session_dir)["revision"] == 2


def test_save_rotates_valid_current_to_bak(session_dir: Path) -> None:
    store.save(session_dir, apex_state(), now=NOW)
    first = (session_dir / store.STATE).read_bytes()
    store.save(session_dir, _state(session_dir), now=NOW)
    assert (session_dir / store.BAK).read_bytes() == first


def test_corrupt_current_never_becomes_bak(session_dir: Path) -> None:
    store.save(session_dir, apex_state(), now=NOW)
    store.save(session_dir, _state(session_dir), now=NOW)
    good_bak = (session_dir / store.BAK).read_bytes()
    (session_dir / store.STATE).write_bytes(b'{"schema_version": "3.0", "pro')
    with pytest.raises(store.StoreError) as exc:
        store.save(session_dir, apex_state(), now=NOW)
    assert "SR120" in str(exc.value)
    assert (session_dir / store.BAK).read_bytes() == good_bak


def test_invalid_document_is_never_written(session_dir: Path) -> None:
    store.save(session_dir, apex_state(), now=NOW)
    before = (session_dir / store.STATE).read_bytes()
    bad = apex_state()
    bad["steps"]["1"]["completed"] = None  # complete without completed: SR302
    with pytest.raises(store.StoreError) as exc:
        store.save(session_dir, bad, now=NOW)
    assert [d.code for d in exc.value.diagnostics] == ["SR161"]
    assert "SR302" in exc.value.diagnostics[0].message
    assert (session_dir / store.STATE).read_bytes() == before
    assert not list(session_dir.glob(".*.tmp"))


def test_expected_revision_detects_lost_update(session_dir: Path) -> None:
    store.save(session_dir, apex_state(), now=NOW)
    mine = store.load(session_dir)
    theirs = store.load(session_dir)
    store.save(session_dir, theirs.document or {}, now=NOW, expected_revision=theirs.revision)
    with pytest.raises(store.ConflictError) as exc:
        store.save(session_dir, mine.document or {}, now=NOW, expected_revision=mine.revision)
    assert exc.value.diagnostics[0].code == "SR162"
    assert _state(session_dir)["revision"] == 2


def test_save_refuses_file_needing_migration(session_dir: Path) -> None:
    (session_dir / store.STATE).write_bytes(dump({**apex_state(), "schema_version": "2.0"}))
    with pytest.raises(store.StoreError) as exc:
        store.save(session_dir, apex_state(), now=NOW)
    assert "SR140" in str(exc.value)


def test_save_appends_worklog_event(session_dir: Path) -> None:
    store.save(
        session_dir,
        apex_state(),
        now=NOW,
        event="checkpoint",
        event_step="2",
        event_sub_step="phase_2_waf",
    )
    store.save(session_dir, _state(session_dir), now=NOW, event="note")
    tail = worklog.read_tail(session_dir / worklog.WORKLOG, 10)
    assert [(e["seq"], e["event"]) for e in tail.events] == [(1, "checkpoint"), (2, "note")]
    assert tail.events[0]["step"] == "2" and tail.events[0]["sub_step"] == "phase_2_waf"


# --- symlinks ------------------------------------------------------------------------------


def test_state_symlink_out_of_root_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    d = root / "agent-output" / "p"
    d.mkdir(parents=True)
    outside = tmp_path / "outside.json"
    outside.write_bytes(dump(apex_state()))
    (d / store.STATE).symlink_to(outside)
    assert store.load(d, root=root).status == "refused"
    with pytest.raises(store.StoreError) as exc:
        store.save(d, apex_state(), now=NOW, root=root)
    assert exc.value.diagnostics[0].code == "SR105"
    assert outside.read_bytes() == dump(apex_state())


def test_bak_symlink_out_of_root_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    d = root / "p"
    d.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (d / store.BAK).symlink_to(victim)
    with pytest.raises(store.StoreError):
        store.save(d, apex_state(), now=NOW, root=root)
    assert victim.read_text() == "keep me"


def test_session_dir_through_link_out_of_root_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / "agent-output").symlink_to(elsewhere)
    (elsewhere / "p").mkdir()
    with pytest.raises(store.StoreError) as exc:
        store.save(root / "agent-output" / "p", apex_state(), now=NOW, root=root)
    assert exc.value.diagnostics[0].code == "SR105"
    assert not (elsewhere / "p" / store.STATE).exists()


def test_temp_file_is_never_read_as_state(session_dir: Path) -> None:
    (session_dir / f"{store.TMP_PREFIX}deadbeef{store.TMP_SUFFIX}").write_bytes(dump(apex_state()))
    assert store.load(session_dir).status == "absent"


# --- recover -------------------------------------------------------------------------------


def _two_saves(d: Path) -> bytes:
    store.save(d, apex_state(), now=NOW)
    store.save(d, _state(d), now=NOW)
    return (d / store.BAK).read_bytes()


@pytest.mark.parametrize("corrupt", [b"", b"   ", b'{"schema_version":', b"\xff\xfe{"])
def test_recover_restores_bak_and_keeps_corrupt(session_dir: Path, corrupt: bytes) -> None:
    bak = _two_saves(session_dir)
    (session_dir / store.STATE).write_bytes(corrupt)
    res = state_repair.recover(session_dir, now=NOW)
    assert res.action == "restored_backup"
    assert (session_dir / store.STATE).read_bytes() == bak
    assert (session_dir / store.BAK).read_bytes() == bak  # the good .bak is untouched
    kept = session_dir / (res.corrupt_kept_as or "")
    assert kept.name.startswith(store.STATE + ".corrupt-") and kept.read_bytes() == corrupt
    ev = worklog.read_tail(session_dir / worklog.WORKLOG, 1).events[-1]
    assert ev["event"] == "recovered" and ev["detail"]["corrupt_kept_as"] == kept.name


def test_recover_without_usable_bak_recreates(session_dir: Path) -> None:
    (session_dir / store.STATE).write_bytes(b"{oops")
    (session_dir / store.BAK).write_bytes(b"also broken")
    res = state_repair.recover(session_dir, now=NOW, workflow="apex")
    assert res.action == "recreated"
    doc = _state(session_dir)
    assert doc["project"] == "demo" and doc["workflow"] == "apex"
    assert {s["status"] for s in doc["steps"].values()} == {"pending"}
    assert (session_dir / store.BAK).read_bytes() == b"also broken"  # kept, not replaced
    assert store.load(session_dir).status == "ok"
    ev = worklog.read_tail(session_dir / worklog.WORKLOG, 1).events[-1]
    assert ev["event"] == "recreated"


def test_recover_leaves_healthy_state_alone(session_dir: Path) -> None:
    _two_saves(session_dir)
    before = (session_dir / store.STATE).read_bytes()
    assert state_repair.recover(session_dir, now=NOW).action == "none"
    assert (session_dir / store.STATE).read_bytes() == before
    assert not (session_dir / worklog.WORKLOG).exists()


def test_recover_cli(session_dir: Path) -> None:
    bak = _two_saves(session_dir)
    (session_dir / store.STATE).write_bytes(b"")
    proc = run_cli("recover", str(session_dir), "--now", "2026-11-22T12:00:00Z", cwd=session_dir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "restored 00-session-state.json from .bak" in proc.stdout
    assert (session_dir / store.STATE).read_bytes() == bak
    proc = run_cli("validate", "--now", "2026-11-22T12:00:00Z", str(session_dir), cwd=session_dir)
    assert proc.returncode == 0, proc.stdout


# --- migrate on disk -------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("*.json")))
def test_migrate_cli_real_world_variants(session_dir: Path, name: str) -> None:
    original = (FIXTURES / f"{name}.json").read_bytes()
    state = session_dir / store.STATE
    state.write_bytes(original)

    salvage = ["--salvage"] if name == "v2-nordic-fresh-foods" else []  # contradictions
    check = run_cli("migrate", "--check", *salvage, str(session_dir), cwd=session_dir)
    assert check.returncode == 1 and state.read_bytes() == original
    assert sorted(os.listdir(session_dir)) == [store.STATE]  # --check writes nothing at all

    dry = run_cli(
        "migrate", "--dry-run", *salvage, "--format", "json", str(session_dir), cwd=session_dir
    )
    assert dry.returncode == 0 and state.read_bytes() == original
    patch = json.loads(dry.stdout)["files"][0]["patch"]
    assert patch and all(op["op"] in ("add", "remove", "replace", "move", "copy") for op in patch)

    run = run_cli(
        "migrate", "--now", "2026-11-22T12:00:00Z", *salvage, str(session_dir), cwd=session_dir
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert (session_dir / store.BAK).read_bytes() == original  # pre-migration file kept
    migrated = json.loads(state.read_text())
    assert migrated["schema_version"] == "3.0"
    assert store.load(session_dir).status == "ok"

    again = run_cli("migrate", "--check", str(session_dir), cwd=session_dir)
    assert again.returncode == 0, again.stdout  # idempotent
    assert worklog.read_tail(session_dir / worklog.WORKLOG, 1).events[-1]["event"] == "migrated"


def _leaves(value: object) -> set[str]:
    out: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, str) and v:
            out.add(v)
        elif isinstance(v, int) and not isinstance(v, bool):
            out.add(str(v))  # "2" -> 2 (review_audit pass numbers) is not a loss
    return out


@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("*.json")))
def test_migration_drops_no_string_value(name: str) -> None:
    """Every non-empty string of the original survives somewhere in the migrated document
    (renamed keys and rewritten versions aside), so nothing is dropped silently."""
    from session_resume.core.migration import migrate

    doc = json.loads((FIXTURES / f"{name}.json").read_text())
    res = migrate(doc, now=NOW, salvage=True)  # v2-nordic-fresh-foods holds contradictions
    lost = _leaves(doc) - _leaves(res.document)
    # what migration rewrites on purpose, each with an SR150 note
    lost -= {
        "1.0",
        "2.0",
        "session-state-v1",
        "blocked",
        "high",
        "3.5",
        "phase_3.5_strategy",
        "phase_5_artifact",
    }
    # upstream's 3.0 rules delete stale_threshold_ms and the (empty) claims: noted as SR150
    lost -= {"300000", "0"}
    assert not lost, lost


def test_migrate_refuses_newer_version_without_writing(session_dir: Path) -> None:
    data = dump({**apex_state(), "schema_version": "9.0"})
    (session_dir / store.STATE).write_bytes(data)
    proc = run_cli("migrate", str(session_dir), cwd=session_dir)
    assert proc.returncode == 1 and "SR141" in proc.stdout
    assert (session_dir / store.STATE).read_bytes() == data
    assert not (session_dir / store.BAK).exists()


def test_migrate_refuses_corrupt_file(session_dir: Path) -> None:
    (session_dir / store.STATE).write_bytes(b"{")
    proc = run_cli("migrate", str(session_dir), cwd=session_dir)
    assert proc.returncode == 1 and "SR152" in proc.stdout and "recover" in proc.stdout


def test_migrated_file_keeps_unmappable_values(session_dir: Path) -> None:
    doc = json.loads((FIXTURES / "v1-contoso-service-hub-run-3.json").read_text())
    (session_dir / store.STATE).write_bytes(dump(doc))
    proc = run_cli("migrate", "--now", "2026-11-22T12:00:00Z", str(session_dir), cwd=session_dir)
    assert "SR151" in proc.stdout
    migrated = _state(session_dir)
    legacy = migrated["x-legacy"]
    assert isinstance(legacy, dict)
    assert legacy["resolved_findings"][0]["id"] == "OF-001"
    assert migrated["open_findings"] == ["No private DNS zone for Key Vault"]
    assert "3_5" in migrated["steps"] and "step_3_5" in migrated["review_audit"]


def test_chain_is_one_pure_function_per_step() -> None:
    from session_resume.core.migration import chain

    assert [(a, b) for a, b, _ in chain()] == [("1.0", "2.0"), ("2.0", "3.0")]
    doc = json.loads((FIXTURES / "v2-test01.json").read_text())
    frozen = json.dumps(doc, sort_keys=True)
    from session_resume.core.migration import migrate

    migrate(doc, now=NOW)
    assert json.dumps(doc, sort_keys=True) == frozen  # the input is not mutated


def test_versions_compare_as_numbers() -> None:
    from session_resume.core.migration import MigrationError, migrate

    with pytest.raises(MigrationError) as exc:
        migrate({**apex_state(), "schema_version": "10.0"}, now=NOW)
    assert exc.value.diagnostics[0].code == "SR141"


def test_lock_file_is_separate_from_the_replaced_file(session_dir: Path) -> None:
    store.save(session_dir, apex_state(), now=NOW)
    ino = os.stat(session_dir / store.LOCK).st_ino
    store.save(session_dir, _state(session_dir), now=NOW)
    assert os.stat(session_dir / store.LOCK).st_ino == ino


def test_save_refuses_when_state_missing_but_bak_is_good(session_dir: Path) -> None:
    good = _two_saves(session_dir)
    (session_dir / store.STATE).unlink()
    with pytest.raises(store.StoreError) as exc:
        store.save(session_dir, apex_state(), now=NOW)
    assert exc.value.diagnostics[0].code == "SR161" and "recover" in str(exc.value)
    assert (session_dir / store.BAK).read_bytes() == good


def test_worklog_failure_after_write_is_coded(session_dir: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text("")
    (session_dir / worklog.WORKLOG).symlink_to(elsewhere)
    with pytest.raises(store.StoreError) as exc:
        store.save(session_dir, apex_state(), now=NOW, event="note")
    # issue 18: the path policy refuses the link before anything is written
    assert exc.value.diagnostics[0].code == "SR105"
    assert store.load(session_dir).status == "absent"
    assert elsewhere.read_text() == ""  # the link was not followed


def test_sentinel_temp_files_are_not_state_temp_files(session_dir: Path) -> None:
    from session_resume.core import lease
    from session_resume.storage import lease_file as sentinel

    sentinel.write(session_dir, lease.make("s-1", owner="me", now=NOW))
    assert sentinel.TMP_PREFIX != store.TMP_PREFIX
    assert sentinel.read(session_dir)[0]["session"] == "s-1"  # type: ignore[index]


def test_unreadable_lease_is_not_mistaken_for_no_lease(session_dir: Path) -> None:
    from session_resume.core import lease
    from session_resume.storage import lease_file as sentinel

    (session_dir / sentinel.SENTINEL).write_text("not json")
    value, diags = sentinel.read(session_dir)
    assert value == {} and [d.code for d in diags] == ["SR510"]
    assert lease.lease_state(value, now=NOW, ended=False, owner_alive=None).state == ("unreadable")


def test_layout_names_agree() -> None:
    """validate.py spells the session's file names itself (to import nothing on its cold path);
    they must be the names the owning modules write."""
    import importlib

    from session_resume.storage import archive
    from session_resume.storage import lease_file as sentinel

    validate = importlib.import_module(
        "session_resume.services.validation"
    )  # the name is also a function

    assert validate._TMP_PREFIX == store.TMP_PREFIX and validate._TMP_SUFFIX == store.TMP_SUFFIX
    assert validate._WORKLOG == worklog.WORKLOG
    assert validate._SENTINEL == sentinel.SENTINEL
    assert validate._HANDOFF == archive.HANDOFF
    assert validate.STATE_FILE == store.STATE


def test_recover_restores_a_bak_with_a_bom(session_dir: Path) -> None:
    good = b"\xef\xbb\xbf" + dump(apex_state())  # usable: parses, passes the 3.0 schema
    (session_dir / store.BAK).write_bytes(good)
    (session_dir / store.STATE).write_bytes(b"")
    res = state_repair.recover(session_dir, now=NOW)
    assert res.action == "restored_backup" and res.document is not None
    assert res.document["project"] == "demo"
    assert (session_dir / store.STATE).read_bytes() == good


def test_recreated_state_gets_a_valid_project_name(tmp_path: Path) -> None:
    d = tmp_path / "my project (copy)"
    d.mkdir()
    (d / store.STATE).write_bytes(b"{")
    res = state_repair.recover(d, now=NOW)
    assert res.action == "recreated" and res.document is not None
    assert res.document["project"] == "my-project--copy-"
    assert store.load(d).status == "ok"


def test_recover_reports_a_worklog_it_cannot_append(session_dir: Path) -> None:
    (session_dir / worklog.WORKLOG).mkdir()
    (session_dir / store.STATE).write_bytes(b"")
    # issue 18: the path policy refuses before anything is written (was: recreated + SR505)
    with pytest.raises(store.StoreError) as exc:
        state_repair.recover(session_dir, now=NOW)
    assert [d.code for d in exc.value.diagnostics] == ["SR102"]
    assert (session_dir / store.STATE).read_bytes() == b""
