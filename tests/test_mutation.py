"""The mutation harness itself (`nox -s mutation` runs the whole list; it is slow, so here only
two mutants on a few cases): a deviation is applied to a copy, never to the working tree, the
suite kills it, and a mutant no selected case can see is reported as a survivor."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from session_resume.conformance import mutation

# Test tier (README "Test tiers"): the mutation harness on a copy of the package.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]


def _tree_hash(pkg: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(pkg.rglob("*.py")):
        h.update(p.relative_to(pkg).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def _mutate(tmp_path: Path, *args: str) -> tuple[int, dict[str, object], str]:
    out = tmp_path / "mutation.json"
    proc = subprocess.run(
        [sys.executable, "-m", "session_resume.conformance.mutation", "--jobs", "1",
         "--json", str(out), *args],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    report = json.loads(out.read_text()) if out.exists() else {}
    return proc.returncode, report, proc.stdout + proc.stderr


def test_every_mutant_of_the_list_is_found_in_the_package() -> None:
    mutants = mutation.load_mutants(mutation.default_mutants_file())
    assert len(mutants) >= 50
    for m in mutants:
        assert mutation.locate(mutation.package_dir(), m).is_file()


def test_the_harness_detects_a_kill_and_a_survivor(tmp_path: Path) -> None:
    pkg = mutation.package_dir()
    before = _tree_hash(pkg)
    code, report, text = _mutate(
        tmp_path,
        "--only", "empty-file-not-corrupt", "--only", "restored-bak-reserialised",
        "--cases", "read/zero-bytes", "--cases", "recover/restored-bak-byte-for-byte",
    )  # fmt: skip
    assert code == 0, text
    results = {r["id"]: r for r in report["results"]}  # type: ignore[attr-defined]
    assert results["empty-file-not-corrupt"]["status"] == "killed"
    assert "read/zero-bytes" in results["empty-file-not-corrupt"]["killed_by"]
    # the byte-for-byte comparison is what kills a re-serialised .bak
    assert results["restored-bak-reserialised"]["killed_by"] == [
        "recover/restored-bak-byte-for-byte"
    ]
    assert "score: 100.0% (2 killed, 0 survived)" in text
    assert _tree_hash(pkg) == before, "a mutant touched the working tree"

    # the same deviation on a case that cannot see it survives, and the score says so
    code, report, text = _mutate(
        tmp_path, "--only", "empty-file-not-corrupt", "--cases", "read/bom-valid-state"
    )
    assert code == 1, text
    assert report["survived"] == 1
    line = next(ln for ln in text.splitlines() if ln.startswith("SURVIVED empty-file-not-corrupt"))
    assert line.endswith("(no case sees it)"), line  # the file is named: modules move
    assert "freedom: none recorded" in text


def test_the_harness_runs_sequence_cases(tmp_path: Path) -> None:
    """A rule only a sequence of writes shows (a step handed over at a gate starts without
    costing an attempt, even after an orphan: spec §4, §10) is killed by its sequence case;
    `--timeout` gives a loaded machine's adapter more time per case."""
    code, report, text = _mutate(
        tmp_path, "--only", "handover-start-costs-attempt",
        "--cases", "sequence/gate-handover-orphaned-costs-no-attempt", "--timeout", "60",
    )  # fmt: skip
    assert code == 0, text
    (result,) = report["results"]  # type: ignore[misc]
    assert result["killed_by"] == ["sequence/gate-handover-orphaned-costs-no-attempt"]


def test_bad_mutant_lists_are_usage_errors(tmp_path: Path) -> None:
    bad = tmp_path / "mutants.yaml"
    bad.write_text(
        "mutants:\n  - id: x\n    description: d\n    module: session_resume.rules\n"
        "    find: 'this text is nowhere in the package'\n    replace: 'y'\n"
    )
    code, _, text = _mutate(tmp_path, "--mutants", str(bad))
    assert code == 2
    assert "the snippet is not in session_resume.rules nor anywhere in the package" in text
    assert "Traceback" not in text


@pytest.mark.parametrize("body", ["[]", "mutants: []", "mutants:\n  - id: x\n"])
def test_malformed_lists_are_refused(tmp_path: Path, body: str) -> None:
    bad = tmp_path / "mutants.yaml"
    bad.write_text(body)
    code, _, text = _mutate(tmp_path, "--mutants", str(bad))
    assert code == 2, text
    assert text.startswith("mutation: ")


def test_covers_lists_numbered_rules_of_the_spec(tmp_path: Path) -> None:
    """Each mutant of the list names the rules of docs/spec.md it breaks (`covers`), and each
    resolves to a numbered rule of the spec."""
    # lazy: only this test reads the spec's rules
    from session_resume.conformance.spec_lint import spec_sections

    rules = spec_sections((mutation.package_dir().parents[1] / "docs/spec.md").read_text("utf-8"))
    mutants = mutation.load_mutants(mutation.default_mutants_file())
    assert [m.id for m in mutants if not m.covers] == []
    assert {c.lstrip("§") for m in mutants for c in m.covers} <= set(rules)
    for prefix in ("xlegacy-", "seq-", "complexity-", "core-"):
        assert all(m.covers for m in mutants if m.id.startswith(prefix)), prefix
    bad = tmp_path / "mutants.yaml"
    bad.write_text(
        "mutants:\n  - id: x\n    description: d\n    module: session_resume.core.jsonread\n"
        "    find: 'MAX_DEPTH = 64'\n    replace: 'MAX_DEPTH = 65'\n    covers: [section 9]\n"
    )
    with pytest.raises(mutation.MutationError, match="covers is a list of spec rules"):
        mutation.load_mutants(bad)
