"""`session-resume validate` as a user runs it: discovery, config, workflows, formats, exits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REPO, apex_state, dump, run_cli

NOW = ("--now", "2026-11-22T00:00:00Z")


def _write(path: Path, doc: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dump(doc))
    return path


def test_example_session_is_valid_with_artifacts() -> None:
    proc = run_cli(
        "validate",
        "examples/agent-output/contoso-portal",
        "--root",
        "examples",
        "--check-artifacts",
        "--strict",
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stdout
    assert "1 valid, 0 invalid" in proc.stdout


def test_no_path_discovers_configured_session_root(tmp_path: Path) -> None:
    (tmp_path / ".session-resume.yaml").write_text("session_root: sessions\nworkflow: apex\n")
    _write(tmp_path / "sessions" / "a" / "00-session-state.json", apex_state())
    bad = apex_state()
    bad["current_step"] = 5
    _write(tmp_path / "sessions" / "b" / "00-session-state.json", bad)
    proc = run_cli("validate", "--format", "json", *NOW, cwd=tmp_path / "sessions" / "a")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    by_dir = {Path(f["path"]).parent.name: f for f in report["files"]}
    assert sorted(by_dir) == ["a", "b"]
    assert by_dir["a"]["valid"] and not by_dir["b"]["valid"]
    assert [d["code"] for d in by_dir["b"]["diagnostics"]] == ["SR307"]


def test_pyproject_config_selects_workflow(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.session-resume]\nworkflow = "generic"\n')
    doc = apex_state()
    del doc["workflow"]
    doc["steps"]["2"]["sub_step"] = "free-form-checkpoint"  # fine under generic, not apex
    _write(tmp_path / "agent-output" / "p" / "00-session-state.json", doc)
    proc = run_cli("validate", "--format", "json", *NOW, cwd=tmp_path)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stdout
    assert report["files"][0]["workflow"] == "generic"
    # without the config, apex applies and the checkpoint is rejected
    (tmp_path / "pyproject.toml").unlink()
    (tmp_path / ".git").mkdir()
    proc = run_cli("validate", "--format", "json", *NOW, cwd=tmp_path)
    assert proc.returncode == 1
    assert "SR414" in proc.stdout


def test_invalid_config_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / ".session-resume.yaml").write_text("workflow: apex\nworkflow: generic\n")
    _write(tmp_path / "s" / "00-session-state.json", apex_state())
    proc = run_cli("validate", "s", cwd=tmp_path)
    assert proc.returncode == 2
    assert "SR405" in proc.stderr


def test_workflow_by_path(tmp_path: Path) -> None:
    src = (REPO / "schema" / "workflows" / "generic.yaml").read_text()
    wf = tmp_path / "mine.yaml"
    wf.write_text(src.replace("id: generic", "id: mine"))
    doc = apex_state()
    doc["workflow"] = "mine"
    p = _write(tmp_path / "00-session-state.json", doc)
    proc = run_cli("validate", "--workflow", str(wf), *NOW, str(p), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout


@pytest.mark.parametrize(
    "text,code",
    [
        ("id: x\nid: y\n", "SR401"),
        ("a: &a [1, 2]\nb: *a\n", "SR402"),
        ("lol: &l1 [x, x]\nlol2: &l2 [*l1, *l1, *l1, *l1]\nlol3: [*l2, *l2, *l2, *l2]\n", "SR402"),
        ("id: [unclosed\n", "SR400"),
        ("id: x\nversion: 1\n", "SR400"),
        ("!!python/object:os.system {}\n", "SR400"),
    ],
)
def test_bad_workflow_files(tmp_path: Path, text: str, code: str) -> None:
    wf = tmp_path / "wf.yaml"
    wf.write_text(text)
    p = _write(tmp_path / "00-session-state.json", apex_state())
    proc = run_cli("validate", "--workflow", str(wf), str(p), cwd=tmp_path)
    assert proc.returncode == 2
    assert code in proc.stderr


def test_migrate_refuses_a_bad_workflow_file(tmp_path: Path) -> None:
    """`migrate --workflow PATH` with a broken file: the findings at their place and exit 2,
    as validate and resume refuse it (it was SR900, an internal error), nothing written."""
    wf = tmp_path / "wf.yaml"
    wf.write_text("id: x\nid: y\n")
    p = _write(tmp_path / "00-session-state.json", apex_state())
    before = p.read_bytes()
    for extra in ([], ["--dry-run"], ["--format", "json"]):
        proc = run_cli("migrate", "--workflow", str(wf), str(p), *extra, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert "wf.yaml:2:1: SR401 error: duplicate key 'id'" in proc.stderr
        assert "SR900" not in proc.stderr + proc.stdout
    assert p.read_bytes() == before


def test_unknown_workflow_name(tmp_path: Path) -> None:
    p = _write(tmp_path / "00-session-state.json", apex_state())
    proc = run_cli("validate", "--workflow", "apexx", str(p), cwd=tmp_path)
    assert proc.returncode == 2 and "SR403" in proc.stderr


def test_workflow_schema_error_has_yaml_position(tmp_path: Path) -> None:
    src = (REPO / "schema" / "workflows" / "generic.yaml").read_text()
    wf = tmp_path / "wf.yaml"
    wf.write_text(src.replace("free_steps: true", "free_steps: maybe"))
    p = _write(tmp_path / "00-session-state.json", apex_state())
    proc = run_cli("validate", "--workflow", str(wf), str(p), cwd=tmp_path)
    assert proc.returncode == 2
    line_no = next(
        i for i, line in enumerate(wf.read_text().splitlines(), 1) if line.startswith("free_steps")
    )
    assert f"wf.yaml:{line_no}:" in proc.stderr


def test_strict_turns_warnings_into_failure(tmp_path: Path) -> None:
    doc = apex_state()
    doc["workflow_status"] = "x"  # SR330 warning
    p = _write(tmp_path / "00-session-state.json", doc)
    assert run_cli("validate", *NOW, str(p), cwd=tmp_path).returncode == 0
    proc = run_cli("validate", "--strict", *NOW, str(p), cwd=tmp_path)
    assert proc.returncode == 1 and "SR330" in proc.stdout


def test_check_artifacts_against_root(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    p = _write(tmp_path / "agent-output" / "demo" / "00-session-state.json", apex_state())
    proc = run_cli("validate", "--check-artifacts", *NOW, str(p), cwd=tmp_path)
    assert proc.returncode == 1 and "SR314" in proc.stdout
    art = tmp_path / "agent-output" / "demo" / "01-requirements.md"
    art.write_text("x")
    assert run_cli("validate", "--check-artifacts", *NOW, str(p), cwd=tmp_path).returncode == 0


def test_artifact_symlink_out_of_root_counts_as_missing(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    p = _write(tmp_path / "agent-output" / "demo" / "00-session-state.json", apex_state())
    (tmp_path / "agent-output" / "demo" / "01-requirements.md").symlink_to("/etc/hostname")
    proc = run_cli("validate", "--check-artifacts", *NOW, str(p), cwd=tmp_path)
    assert proc.returncode == 1 and "SR314" in proc.stdout


def test_corrupt_file_with_good_backup_suggests_recover(tmp_path: Path) -> None:
    p = tmp_path / "s" / "00-session-state.json"
    p.parent.mkdir()
    p.write_bytes(b'{"schema_version": "3.0", "proj')
    (tmp_path / "s" / "00-session-state.json.bak").write_bytes(dump(apex_state()))
    proc = run_cli("validate", *NOW, str(p), cwd=tmp_path)
    assert proc.returncode == 1
    assert "SR120" in proc.stdout and "SR130" in proc.stdout
    assert "session-resume recover" in proc.stdout


def _bad_file(tmp_path: Path) -> Path:
    doc = apex_state()
    doc["steps"]["2"]["sub_step"] = "approval"
    return _write(tmp_path / "00-session-state.json", doc)


def test_json_format(tmp_path: Path) -> None:
    p = _bad_file(tmp_path)
    proc = run_cli("validate", "--format", "json", *NOW, str(p), cwd=tmp_path)
    rep = json.loads(proc.stdout)
    assert rep["valid"] is False and rep["summary"]["errors"] == 1
    d = rep["files"][0]["diagnostics"][0]
    assert {k: d[k] for k in ("code", "severity", "pointer")} == {
        "code": "SR414",
        "severity": "error",
        "pointer": "/steps/2/sub_step",
    }
    assert isinstance(d["line"], int) and isinstance(d["column"], int)


def test_github_format_and_step_summary(tmp_path: Path) -> None:
    p = _bad_file(tmp_path)
    summary = tmp_path / "summary.md"
    proc = run_cli(
        "validate",
        "--format",
        "github",
        *NOW,
        str(p),
        cwd=tmp_path,
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert proc.returncode == 1
    line = proc.stdout.splitlines()[0]
    assert line.startswith("::error file=") and ",title=SR414::" in line
    assert ",line=" in line and ",col=" in line
    assert "SR414" in summary.read_text()


def test_sarif_format(tmp_path: Path) -> None:
    p = _bad_file(tmp_path)
    proc = run_cli("validate", "--format", "sarif", *NOW, str(p), cwd=tmp_path)
    sarif = json.loads(proc.stdout)
    assert sarif["version"] == "2.1.0"
    run = sarif["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["SR414"]
    res = run["results"][0]
    assert res["ruleId"] == "SR414" and res["level"] == "error"
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] > 1


def test_text_format_is_compiler_style(tmp_path: Path) -> None:
    p = _bad_file(tmp_path)
    proc = run_cli("validate", *NOW, str(p), cwd=tmp_path)
    first = proc.stdout.splitlines()[0]
    assert first.startswith(f"{p}:") and " SR414 error: " in first
    assert proc.stdout.rstrip().endswith("invalid")


def test_help_lists_exit_codes() -> None:
    proc = run_cli("--help")
    assert proc.returncode == 0 and "Exit codes" in proc.stdout


def test_every_code_has_a_docs_page() -> None:
    from session_resume import CATALOGUE

    for code in CATALOGUE:
        page = REPO / "docs" / "codes" / f"{code}.md"
        assert page.is_file(), code
        text = page.read_text()
        assert "## Fix" in text and code in text


def test_generated_docs_are_fresh() -> None:
    from session_resume.docgen.generate import stale_files

    assert stale_files(REPO) == []
