"""`session-resume setup vscode` (issue 27, editor set-up in one command), through the real
CLI: the merge into .vscode/settings.json keeps every other setting and entry and is
idempotent; a file with comments or trailing commas, or that is not a JSON object, is refused
(SR184) and kept byte for byte; a symbolic link on the way is refused (SR105 leading out, SR102
inside) without touching its decoy target. VS Code's own language service reading the written
mapping is tests/test_vscode.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import REPO, run_cli, tree_hash

SETTINGS = Path(".vscode") / "settings.json"
COPY = Path(".vscode") / "session-resume" / "session-state-3.0.json"
URL = "./.vscode/session-resume/session-state-3.0.json"


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def _ours(settings: dict[str, object]) -> list[dict[str, object]]:
    entries = settings["json.schemas"]
    assert isinstance(entries, list)
    return [e for e in entries if e.get("url") == URL]


def test_merge_keeps_everything_else_and_is_idempotent(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / ".vscode").mkdir()
    other = {"fileMatch": ["x.json"], "url": "./x.schema.json"}
    original = {"editor.tabSize": 4, "json.schemas": [other], "files.eol": "\n"}
    (root / SETTINGS).write_text(json.dumps(original, indent=4) + "\n", encoding="utf-8")
    (root / "docs").mkdir()
    proc = run_cli("setup", "vscode", cwd=root / "docs")  # from a subdirectory
    assert proc.returncode == 0, proc.stderr
    assert f"{SETTINGS.as_posix()}: updated" in proc.stdout
    assert f"{COPY.as_posix()}: created" in proc.stdout
    text = (root / SETTINGS).read_text(encoding="utf-8")
    settings = json.loads(text)
    assert settings["editor.tabSize"] == 4 and settings["files.eol"] == "\n"
    assert settings["json.schemas"][0] == other
    assert _ours(settings) == [{"fileMatch": ["agent-output/*/00-session-state.json"], "url": URL}]
    assert text.splitlines()[1].startswith('    "')  # the file's own indentation
    assert (root / COPY).read_bytes() == (REPO / "schema/session-state/3.0.json").read_bytes()
    assert not (root / "docs" / ".vscode").exists()

    before = tree_hash(root)
    again = run_cli("setup", "vscode", cwd=root)
    assert again.returncode == 0
    assert f"{SETTINGS.as_posix()}: unchanged" in again.stdout
    assert f"{COPY.as_posix()}: unchanged" in again.stdout
    assert tree_hash(root) == before

    # the session root moves: our one entry follows it, never doubled
    (root / ".session-resume.yaml").write_text("session_root: sessions\n", encoding="utf-8")
    assert run_cli("setup", "vscode", cwd=root).returncode == 0
    settings = json.loads((root / SETTINGS).read_text(encoding="utf-8"))
    assert _ours(settings) == [{"fileMatch": ["sessions/*/00-session-state.json"], "url": URL}]
    assert settings["json.schemas"][0] == other


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    before = tree_hash(root)
    proc = run_cli("setup", "vscode", "--dry-run", cwd=root)
    assert proc.returncode == 0
    assert f"{SETTINGS.as_posix()}: would be created" in proc.stdout and URL in proc.stdout
    assert tree_hash(root) == before


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ('{\n  // my tab size\n  "editor.tabSize": 4\n}\n', "comments or trailing commas"),
        ('{\n  "editor.tabSize": 4,\n}\n', "comments or trailing commas"),
        ('{"a": /* x */ 1}', "comments or trailing commas"),
        ('{"editor.tabSize": }', "it is not JSON"),
        ("[1, 2]", "it is not a JSON object"),
        ('{"json.schemas": {"x": 1}}', "`json.schemas` is not a list"),
        # what JSON cannot write back (SR900, or Infinity/NaN written, before)
        ('{"files.exclude": {"\\ud800": true}}', "lone surrogate"),
        ('{"a": "x\\udc80y"}', "lone surrogate"),
        ('{"editor.fontSize": 1e400}', "beyond any float"),
        ('{"editor.fontSize": NaN}', "NaN"),
        ('{"editor.fontSize": -Infinity}', "-Infinity"),
    ],
)
def test_a_file_it_would_not_rewrite_is_refused_and_kept(
    tmp_path: Path, content: str, why: str
) -> None:
    root = _repo(tmp_path)
    (root / ".vscode").mkdir()
    (root / SETTINGS).write_text(content, encoding="utf-8")
    before = tree_hash(root)
    proc = run_cli("setup", "vscode", cwd=root)
    assert proc.returncode == 1
    assert "SR184" in proc.stderr and why in proc.stderr, proc.stderr
    # the entry to add by hand, as JSON, and what to do
    snippet = proc.stderr.split("The entry to add to its `json.schemas` list: ", 1)[1]
    entry, _end = json.JSONDecoder().raw_decode(snippet)
    assert entry["url"] == URL
    assert "hint: Add the entry" in proc.stderr
    assert tree_hash(root) == before  # nothing written, not even the schema copy


@pytest.mark.parametrize("link", ["settings", "vscode", "inside"])
def test_a_symbolic_link_on_the_way_is_refused(tmp_path: Path, link: str) -> None:
    root = _repo(tmp_path)
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    (decoy / "settings.json").write_text('{"decoy": true}\n', encoding="utf-8")
    if link == "settings":
        (root / ".vscode").mkdir()
        os.symlink(decoy / "settings.json", root / SETTINGS)
        code = "SR105"
    elif link == "vscode":
        os.symlink(decoy, root / ".vscode")
        code = "SR105"
    else:
        (root / ".vscode").mkdir()
        (root / "shared.json").write_text("{}\n", encoding="utf-8")
        os.symlink(root / "shared.json", root / SETTINGS)
        code = "SR102"
    before, decoy_before = tree_hash(root), tree_hash(decoy)
    proc = run_cli("setup", "vscode", cwd=root)
    assert proc.returncode == 1, proc.stdout
    assert code in proc.stderr and "nothing was written" in proc.stderr, proc.stderr
    assert tree_hash(root) == before and tree_hash(decoy) == decoy_before


def test_a_huge_first_indentation_is_not_copied(tmp_path: Path) -> None:
    """A 120 KB settings file whose first indentation is 120,000 spaces became 55 MB on disk
    (the indentation copied once per level and line); an indentation over 8 characters is
    replaced by two spaces, the keys and values kept."""
    root = _repo(tmp_path)
    (root / ".vscode").mkdir()
    text = "{\n" + " " * 120_000 + '"editor.tabSize": 4,\n  "a": {"b": {"c": [1, 2, 3]}}\n}\n'
    (root / SETTINGS).write_text(text, encoding="utf-8")
    proc = run_cli("setup", "vscode", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout) < 10_000
    written = (root / SETTINGS).read_text(encoding="utf-8")
    assert len(written) < 2_000 and '\n  "editor.tabSize": 4,' in written
    doc = json.loads(written)
    assert doc["a"] == {"b": {"c": [1, 2, 3]}} and len(_ours(doc)) == 1
