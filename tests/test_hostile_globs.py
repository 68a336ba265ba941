"""Quoted globs (issue 25, findings 9 and 19): the tool's own expansion never follows a link
to a directory, stays in the repository, ends, and lists each file once.

Every link planted here points at a decoy tree inside the test's temp directory; the decoy is
hashed before and after, and its canary never reaches the output.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from session_resume.storage import discovery

from conftest import apex_state, dump, run_cli, tree_hash

CANARY = "decoy-canary-25g"
STATE = "00-session-state.json"


def make_repo(top: Path) -> tuple[Path, Path]:
    """``top``/repo (a ``.git`` marks the root) with one valid session, and ``top``/decoy
    outside it holding a valid state of its own (the project name is the canary)."""
    repo = top / "repo"
    d = repo / "agent-output" / "demo"
    d.mkdir(parents=True)
    (repo / ".git").mkdir()
    (d / STATE).write_bytes(dump(apex_state()))
    decoy = top / "decoy" / "sub"
    decoy.mkdir(parents=True)
    (decoy / STATE).write_bytes(dump({**apex_state(), "project": CANARY}))
    (decoy / "file.txt").write_text(CANARY)
    return repo, top / "decoy"


def _files(out: str) -> list[str]:
    return [f["path"] for f in json.loads(out)["files"]]


@pytest.mark.parametrize(
    "pattern", ["agent-output/*/00-session-state.json", "agent-output/**/00-session-state.json"]
)
def test_a_glob_never_follows_a_linked_directory_out_of_the_repository(
    tmp_path: Path, pattern: str
) -> None:
    repo, decoy = make_repo(tmp_path)
    os.symlink(decoy / "sub", repo / "agent-output" / "evil")  # a directory link, deep
    os.symlink(decoy, repo / "agent-output" / "demo" / "up")
    before = tree_hash(decoy)
    out = run_cli("validate", "--format", "json", pattern, cwd=repo)
    assert out.returncode == 0, out.stdout + out.stderr
    assert _files(out.stdout) == ["agent-output/demo/00-session-state.json"]
    assert CANARY not in out.stdout + out.stderr
    assert tree_hash(decoy) == before


def test_a_glob_whose_own_directory_links_out_is_refused(tmp_path: Path) -> None:
    repo, decoy = make_repo(tmp_path)
    os.symlink(decoy, repo / "linked")  # the pattern's fixed part is the link
    before = tree_hash(decoy)
    out = run_cli("validate", "--format", "json", "linked/*/00-session-state.json", cwd=repo)
    assert out.returncode == 1
    doc = json.loads(out.stdout)
    assert [d["code"] for f in doc["files"] for d in f["diagnostics"]] == ["SR105"]
    assert CANARY not in out.stdout + out.stderr
    assert tree_hash(decoy) == before
    # the same pattern from a directory outside the repository (the operator's own path)
    # is no containment question: it is expanded there, still following no link below it
    inside = run_cli("validate", "--format", "json", "sub/*.json", cwd=decoy)
    assert inside.returncode == 0 and _files(inside.stdout) == [f"sub/{STATE}"]


def test_two_links_to_dot_are_walked_once(tmp_path: Path) -> None:
    """Finding 19: `**` over two links to `.` enumerated about 2^40 paths (it never ended);
    one link validated the same file 41 times. The walk ends (the subprocess has a generous
    timeout that fails the test) and lists the file once."""
    repo, decoy = make_repo(tmp_path)
    d = repo / "agent-output" / "demo"
    os.symlink(".", d / "l1")
    os.symlink(".", d / "l2")
    os.symlink("..", d / "up")
    before = tree_hash(decoy)
    out = run_cli(
        "validate",
        "--format",
        "json",
        "agent-output/**/00-session-state.json",
        cwd=repo,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert _files(out.stdout) == ["agent-output/demo/00-session-state.json"]
    assert tree_hash(decoy) == before


def test_the_expansion_visits_each_directory_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Linear: a tree of links to `.` and `..` and three `**` in one pattern cost one
    directory listing per real directory (counted, not timed)."""
    repo, _ = make_repo(tmp_path)
    for i in range(6):
        (repo / "agent-output" / f"d{i}" / "x").mkdir(parents=True)
        for j in range(4):
            os.symlink("." if j % 2 else "..", repo / "agent-output" / f"d{i}" / f"l{j}")
    real_dirs = sum(1 for _ in os.walk(repo / "agent-output"))  # os.walk follows no link
    calls: list[str] = []
    real_scandir = os.scandir

    def counting(path: str) -> object:
        calls.append(path)
        return real_scandir(path)

    monkeypatch.chdir(repo)
    monkeypatch.setattr(discovery.os, "scandir", counting)
    found, problem = discovery.expand("agent-output/**/**/**/00-session-state.json", root=repo)
    assert problem is None
    assert found == ["agent-output/demo/00-session-state.json"]
    assert len(calls) == real_dirs  # every real directory once, no link followed


def test_glob_expansion_agrees_with_glob_on_a_tree_without_links(tmp_path: Path) -> None:
    """The walk spells and selects paths as :func:`glob.glob` does where there is no link."""
    import glob

    for rel in ["a/b/c/x.json", "a/.h/x.json", "a/b/x.json", "z/x.json", "a/[e]/x.json"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}")
    os.chdir(tmp_path)
    try:
        for pat in [
            "*/x.json",
            "a/**/x.json",
            "**/x.json",
            "a/*/x.json",
            "a/**",
            "?/x.json",
            "a/[b]/x.json",
            "a/*/*/x.json",
            "**/c/*.json",
            "a/.*/x.json",
        ]:
            want = sorted(glob.glob(pat, recursive=True))
            assert discovery.expand(pat, root=tmp_path) == (want, None), pat
    finally:
        os.chdir(Path(__file__).parent)


# --- one naming rule for globs too (issue 27 must-show 4) -----------------------------------


@pytest.mark.parametrize(
    "pattern", ["agent-output/*/00-session-state.json", "agent-output/**/00-session-state.json"]
)
def test_a_glob_from_a_subdirectory_is_the_repository_roots(tmp_path: Path, pattern: str) -> None:
    """Repository root first, then the current directory: from sub/ the quoted glob names the
    root's agent-output (it was SR100), with the same walk: the links it meets are not
    followed and the decoy outside the root is never read."""
    repo, decoy = make_repo(tmp_path)
    (repo / "sub").mkdir()
    os.symlink(decoy / "sub", repo / "agent-output" / "evil")
    before = tree_hash(decoy)
    out = run_cli("validate", "--format", "json", pattern, cwd=repo / "sub")
    assert out.returncode == 0, out.stdout + out.stderr
    assert _files(out.stdout) == [f"../agent-output/demo/{STATE}"]
    assert CANARY not in out.stdout + out.stderr
    assert tree_hash(decoy) == before
    # a current directory spelled out (`./`) or a wildcard first component is the current
    # directory's, as for a directory name: nothing matches in sub/
    for own in (f"./{pattern}", f"*/demo/{STATE}"):
        proc = run_cli("validate", own, cwd=repo / "sub")
        assert proc.returncode == 2 and "SR100" in proc.stderr, proc.stdout + proc.stderr


def test_a_glob_from_a_subdirectory_whose_directory_links_out_is_refused(
    tmp_path: Path,
) -> None:
    """The root's pattern directory is a link out of the repository: from sub/ too the
    glob is refused (SR105), and nothing of the decoy is read."""
    repo, decoy = make_repo(tmp_path)
    (repo / "sub").mkdir()
    os.symlink(decoy, repo / "linked")
    before = tree_hash(decoy)
    out = run_cli(
        "validate", "--format", "json", "linked/*/00-session-state.json", cwd=repo / "sub"
    )
    assert out.returncode == 1, out.stdout + out.stderr
    doc = json.loads(out.stdout)
    assert [d["code"] for f in doc["files"] for d in f["diagnostics"]] == ["SR105"]
    assert CANARY not in out.stdout + out.stderr
    assert tree_hash(decoy) == before
