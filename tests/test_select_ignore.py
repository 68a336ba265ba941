"""`--select`, `--ignore`, `--exit-zero` and the config's `select`, `ignore` and
`per-file-ignores`, with ruff's meaning (issue 27, must-show 6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from session_resume.core.selection import glob_regex

from conftest import apex_state, dump, run_cli

NOW = ("--now", "2026-11-22T00:00:00Z")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Session `a` has an error (SR301) and a warning (SR330); `b` is valid; `c` is corrupt."""
    (tmp_path / ".git").mkdir()
    a = apex_state()
    a["steps"]["2"]["started"] = None
    a["workflow_status"] = "x"
    for name, data in (("a", dump(a)), ("b", dump(apex_state())), ("c", b"{")):
        d = tmp_path / "agent-output" / name
        d.mkdir(parents=True)
        (d / "00-session-state.json").write_bytes(data)
    return tmp_path


def _codes(proc: object) -> dict[str, list[str]]:
    doc = json.loads(proc.stdout)  # type: ignore[attr-defined]
    return {
        Path(f["path"]).parent.name: [d["code"] for d in f["diagnostics"]] for f in doc["files"]
    }


def _validate(repo: Path, *args: str) -> object:
    return run_cli(
        "validate", "--format", "json", *NOW, *args, "agent-output/a", "agent-output/b", cwd=repo
    )


def test_baseline(repo: Path) -> None:
    proc = _validate(repo)
    assert proc.returncode == 1 and sorted(_codes(proc)["a"]) == ["SR301", "SR330"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "args,kept,rc",
    [
        (("--ignore", "SR301"), ["SR330"], 0),  # an ignored error no longer fails the run
        (("--ignore", "SR3"), [], 0),  # a prefix
        (("--select", "SR33"), ["SR330"], 0),
        (("--select", "SR301"), ["SR301"], 1),
        (("--select", "SR4,SR5"), [], 0),
        (("--select", "ALL", "--ignore", "SR330"), ["SR301"], 1),
        (("--ignore", "SR330", "--ignore", "SR301"), [], 0),  # repeatable
        (("--exit-zero",), ["SR301", "SR330"], 0),
    ],
)
def test_options(repo: Path, args: tuple[str, ...], kept: list[str], rc: int) -> None:
    proc = _validate(repo, *args)
    assert proc.returncode == rc, proc.stdout  # type: ignore[attr-defined]
    assert sorted(_codes(proc)["a"]) == kept


def test_read_errors_cannot_be_ignored(repo: Path) -> None:
    proc = run_cli(
        "validate",
        "--format",
        "json",
        "--select",
        "SR3",
        "--ignore",
        "SR1",
        "agent-output/c",
        cwd=repo,
    )
    assert proc.returncode == 1 and _codes(proc)["c"] == ["SR120"]


def test_config_select_ignore_and_per_file_ignores(repo: Path) -> None:
    cfg = repo / ".session-resume.yaml"
    cfg.write_text("ignore: [SR301]\n")
    proc = _validate(repo)
    assert proc.returncode == 0 and _codes(proc)["a"] == ["SR330"]  # type: ignore[attr-defined]
    cfg.write_text("select: [SR33]\n")
    assert _codes(_validate(repo))["a"] == ["SR330"]
    assert _codes(_validate(repo, "--select", "SR30"))["a"] == ["SR301"]  # --select replaces
    cfg.write_text('per-file-ignores:\n  "agent-output/a/*": [SR301]\n  "**/b/*": [SR3]\n')
    proc = _validate(repo)
    assert proc.returncode == 0 and _codes(proc)["a"] == ["SR330"]  # type: ignore[attr-defined]
    cfg.write_text('per-file-ignores:\n  "agent-output/b/*": [SR301]\n')
    assert _validate(repo).returncode == 1  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "text",
    ["ignore: SR301\n", "select: [SR3x]\n", "ignore: [301]\n", 'per-file-ignores: {"a": SR3}\n'],
)
def test_bad_selectors_in_config_are_sr405(repo: Path, text: str) -> None:
    (repo / ".session-resume.yaml").write_text(text)
    proc = run_cli("validate", "agent-output/a", cwd=repo)
    assert (
        proc.returncode == 2 and "SR405" in proc.stderr and ".session-resume.yaml:1" in proc.stderr
    )


def test_bad_selector_option_is_a_usage_error(repo: Path) -> None:
    proc = run_cli("validate", "--ignore", "E501", "agent-output/a", cwd=repo)
    assert proc.returncode == 2 and "--ignore" in proc.stderr


def test_glob_regex() -> None:
    assert glob_regex("agent-output/*/00-session-state.json").fullmatch(
        "agent-output/x/00-session-state.json"
    )
    assert not glob_regex("agent-output/*").fullmatch("agent-output/x/y")
    assert glob_regex("**/x/*").fullmatch("a/b/x/f") and glob_regex("**/x/*").fullmatch("x/f")


def test_a_glob_that_would_backtrack_is_matched_at_once(tmp_path: Path) -> None:
    """`**a**a…**c` was a regular expression that backtracked for hours on a 40-character
    path (`validate` never finished); the real CLI now answers, and the glob still means
    what it says (a pattern that matches is honoured, one that cannot is not)."""
    (tmp_path / ".git").mkdir()
    a = apex_state()
    a["steps"]["2"]["started"] = None  # SR301
    d = tmp_path / "agent-output" / ("a" * 40)
    d.mkdir(parents=True)
    (d / "00-session-state.json").write_bytes(dump(a))
    cfg = tmp_path / ".session-resume.yaml"
    for glob, ignored in (("**a" * 30 + "**c", False), ("**a" * 30 + "**json", True)):
        cfg.write_text(json.dumps({"per-file-ignores": {glob: ["SR301"]}}))
        proc = run_cli("validate", "--format", "json", *NOW, cwd=tmp_path, timeout=30)
        codes = [x["code"] for f in json.loads(proc.stdout)["files"] for x in f["diagnostics"]]
        assert ("SR301" not in codes) == ignored, (glob, codes)


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("**/x", "x", True),
        ("**/x", "a/b/x", True),
        ("**/x", "ax", False),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("a/**/b", "a/xb", False),
        ("a/**", "a/x/y", True),
        ("**/**/x", "x", True),
        ("***/x", "a/b/x", True),
        ("*/x", "a/b/x", False),
        ("a*?", "a", False),
        ("a*?", "ab", True),
        ("?", "/", False),
        ("", "", True),
        ("é*", "éa", True),
    ],
)
def test_path_glob_cases(glob: str, path: str, matches: bool) -> None:
    assert glob_regex(glob).fullmatch(path) is matches
