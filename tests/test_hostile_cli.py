"""Hostile command-line values and sources (issue 25, findings 15, 20 and 24): every one a
coded outcome, nothing outside the repository touched.

Every link planted here points at a decoy tree inside the test's temp directory; the decoy is
hashed before and after.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from conftest import apex_state, dump, run_cli, tree_hash

STATE = "00-session-state.json"
SENTINEL = "00-session.active"
CANARY = "decoy-canary-25c"


def make_repo(top: Path) -> tuple[Path, Path, Path]:
    repo = top / "repo"
    d = repo / "agent-output" / "demo"
    d.mkdir(parents=True)
    (repo / ".git").mkdir()
    (d / STATE).write_bytes(dump(apex_state()))
    decoy = top / "decoy"
    decoy.mkdir()
    (decoy / "file.txt").write_text(CANARY)
    return repo, d, decoy


@pytest.mark.parametrize("pid", ["0", "-1", str(2**31), str(2**64)])
def test_an_owner_pid_out_of_range_is_a_usage_error(tmp_path: Path, pid: str) -> None:
    """Finding 24: `session start --pid 0 | -1 | 2^64` exited 0 and wrote a lease the reader
    then called unreadable (SR510). It is SR183, exit 2, and nothing is written."""
    repo, d, decoy = make_repo(tmp_path)
    before, inside = tree_hash(decoy), tree_hash(repo)
    out = run_cli("session", "start", "--session-dir", str(d), "--root", str(repo), "--pid", pid)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "SR183" in out.stderr and "SR900" not in out.stderr
    assert tree_hash(repo) == inside and tree_hash(decoy) == before
    assert not (d / SENTINEL).exists()
    ok = run_cli("session", "start", "--session-dir", str(d), "--root", str(repo), "--pid", "1")
    assert ok.returncode == 0, ok.stderr
    assert json.loads((d / SENTINEL).read_text())["pid"] == 1
    resume = run_cli("resume", str(d), "--root", str(repo), "--format", "json")
    assert "SR510" not in resume.stdout


def _codes_by_format(out: str, fmt: str) -> dict[str, int]:
    """How many findings of each code a validate output lists."""
    counts: dict[str, int] = {}
    if fmt == "json":
        codes = [d["code"] for f in json.loads(out)["files"] for d in f["diagnostics"]]
    elif fmt == "sarif":
        codes = [r["ruleId"] for run in json.loads(out)["runs"] for r in run["results"]]
    elif fmt == "github":
        codes = re.findall(r"title=(SR\d+)::", out)
    else:
        codes = [line.split(": ")[1].split(" ")[0] for line in out.splitlines() if ": SR" in line]
    for c in codes:
        counts[c] = counts.get(c, 0) + 1
    return counts


def test_a_state_with_140000_findings_lists_100_of_each_code_in_every_format(
    tmp_path: Path,
) -> None:
    """Finding 20: a 0.9 MB state with ~140,000 findings took 10-16 s in text and 18-60 s in
    SARIF. Each format lists the first 100 findings of a code and one finding counting the
    rest (same code, so the verdict is the same)."""
    repo, d, decoy = make_repo(tmp_path)
    state = apex_state()
    state["steps"]["2"]["artifacts"] = [f"/{i}" for i in range(140_000)]  # SR310 each
    (d / STATE).write_bytes(dump(state))
    before, state_bytes = tree_hash(decoy), (d / STATE).read_bytes()
    seen = {}
    for fmt in ("text", "json", "github", "sarif"):
        out = run_cli("validate", "--format", fmt, str(d / STATE), cwd=repo, timeout=600)
        assert out.returncode == 1, out.stderr
        counts = _codes_by_format(out.stdout, fmt)
        assert counts["SR310"] == 101, (fmt, counts)
        assert "139,900 more SR310" in out.stdout, fmt
        seen[fmt] = counts
    assert seen["text"] == seen["json"] == seen["github"] == seen["sarif"]
    assert (d / STATE).read_bytes() == state_bytes and tree_hash(decoy) == before


def test_the_rules_build_only_the_findings_they_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bounded work, counted not timed: 140,000 unsafe paths build about 100 findings."""
    from session_resume.core import rules
    from session_resume.core.validation import ValidateOptions, validate_document

    built = []
    real = rules.diag
    monkeypatch.setattr(rules, "diag", lambda *a, **k: built.append(a[0]) or real(*a, **k))
    state = apex_state()
    state["steps"]["2"]["artifacts"] = [f"/{i}" for i in range(140_000)]
    state["steps"]["3"]["artifacts"] = ["../x"] * 500 + ["a\\b"] * 500
    report = validate_document(dump(state), file="s.json", options=ValidateOptions())
    assert built.count("SR310") == 100 and built.count("SR311") == 100
    assert built.count("SR315") == 100 and built.count("SR313") == 100
    listed = [x.code for x in report.diagnostics]
    assert listed.count("SR310") == 101 and listed.count("SR313") == 101


def test_the_schema_check_explains_at_most_a_thousand_errors() -> None:
    """5,000 schema errors: the reference engine (about 1 ms an error) explains the first
    1,000 (counted: the errors it was asked for), 100 are listed and one finding counts the rest
    of those, and one says the check stopped."""
    from session_resume.core import schemas
    from session_resume.services.validation import validate_bytes

    state = apex_state()
    state["steps"]["3"]["artifacts"] = [1] * 5_000  # SR202 each
    report = validate_bytes(dump(state), "s.json")
    listed = [x.code for x in report.diagnostics]
    assert listed.count("SR202") == 101 and listed.count("SR209") == 1
    assert schemas.MAX_EXPLAINED == 1000
    messages = [x.message for x in report.diagnostics]
    assert any(m.startswith("900 more SR202") for m in messages), messages[-3:]
    assert any("the schema check stops after the first 1,000" in m for m in messages)


# --- import sources (finding 15) ---------------------------------------------------------------

FIXTURES = Path(__file__).parent / "fixtures" / "import" / "dotagent"


def _dotagent(repo: Path, name: str) -> Path:
    (inner,) = list((FIXTURES / name).iterdir())
    dst = repo / inner.name
    shutil.copytree(inner, dst)
    return dst


def _everything_written(top: Path) -> str:
    """Every name and byte under ``top``."""
    parts = []
    for p in sorted(top.rglob("*")):
        parts.append(str(p))
        if p.is_file() and not p.is_symlink():
            parts.append(p.read_text(errors="replace"))
    return "\n".join(parts)


@pytest.mark.parametrize("linked", ["reports/designs", "reports"])
def test_a_dotagent_import_never_follows_a_link_out_of_its_source(
    tmp_path: Path, linked: str
) -> None:
    """Finding 15: `import dotagent` followed a linked `reports/designs` out of the source and
    recorded the names of the files there. Nothing behind a link out of the source is listed,
    stat-ed or read: the import proceeds as if it were not there."""
    repo, _, decoy = make_repo(tmp_path)
    mem = _dotagent(repo, "approval-pending")
    target = decoy / "elsewhere"
    (target / "designs").mkdir(parents=True)
    (target / f"{CANARY}.json").write_text(json.dumps({"secret": CANARY}))
    (target / "designs" / f"{CANARY}-design.json").write_text(json.dumps({"secret": CANARY}))
    (target / "demand.json").write_text(json.dumps({"secret": CANARY}))
    src = mem / linked
    if src.exists():
        shutil.rmtree(src)
    src.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, src)
    before = tree_hash(decoy)
    out = run_cli("import", "dotagent", str(mem), "--to", "agent-output/auth", cwd=repo)
    assert out.returncode in (0, 1), out.stdout + out.stderr
    assert "SR900" not in out.stdout + out.stderr
    assert CANARY not in out.stdout + out.stderr
    assert CANARY not in _everything_written(repo / "agent-output" / "auth")
    assert tree_hash(decoy) == before


def test_a_dotagent_state_directory_linked_out_is_refused(tmp_path: Path) -> None:
    repo, _, decoy = make_repo(tmp_path)
    mem = _dotagent(repo, "approval-pending")
    shutil.move(str(mem / "state"), str(decoy / "state"))
    os.symlink(decoy / "state", mem / "state")
    before = tree_hash(decoy)
    out = run_cli("import", "dotagent", str(mem), "--to", "agent-output/auth", cwd=repo)
    assert out.returncode == 1 and "SR105" in out.stderr, out.stdout + out.stderr
    assert not (repo / "agent-output" / "auth").exists()
    assert tree_hash(decoy) == before


@pytest.mark.parametrize("command", ["migrate", "recover"])
@pytest.mark.parametrize("planted", ["other bytes", "link", "directory"])
def test_a_planted_pre_migration_name_keeps_the_original_under_a_free_name(
    tmp_path: Path, command: str, planted: str
) -> None:
    """`migrate` (of a 2.0 state) and `recover` (of a corrupt state from a 2.0 `.bak`) kept
    no copy when `00-session-state.v2.0.json` was planted, yet `migrate` said it was kept;
    the original is now kept as `…v2.0-1.json`, named, and the planted entry untouched."""
    from conftest import REPO

    v2 = (REPO / "tests" / "fixtures" / "migrate" / "v2-test01.json").read_bytes()
    (tmp_path / ".git").mkdir()
    sdir = tmp_path / "agent-output" / "p"
    sdir.mkdir(parents=True)
    decoy = tmp_path / "decoy.json"
    decoy.write_text("decoy")
    if command == "migrate":
        (sdir / "00-session-state.json").write_bytes(v2)
    else:
        (sdir / "00-session-state.json").write_bytes(b"{")
        (sdir / "00-session-state.json.bak").write_bytes(v2)
    name = sdir / "00-session-state.v2.0.json"
    if planted == "other bytes":
        name.write_text("{}")
    elif planted == "link":
        name.symlink_to(decoy)
    else:
        name.mkdir()
    fmt = ["--format", "json"] if command == "recover" else []
    proc = run_cli(command, "agent-output/p", *fmt, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kept = sdir / "00-session-state.v2.0-1.json"
    assert kept.read_bytes() == v2 and not kept.is_symlink()
    if command == "recover":
        assert json.loads(proc.stdout)["pre_migration_kept_as"] == kept.name
    else:
        assert f"the original is kept for good as {kept.name} " in proc.stdout, proc.stdout
    assert decoy.read_text() == "decoy"
    untouched = {"directory": name.is_dir, "link": name.is_symlink}.get(planted)
    assert untouched() if untouched else name.read_text() == "{}"
