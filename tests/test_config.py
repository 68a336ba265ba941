"""The project configuration (`.session-resume.yaml`, `[tool.session-resume]`): one definition
of the keys (docs/config.md is generated from it), every value checked against it, errors
against the file and line, and a planted configuration never leads the tool outside the
repository (issue 25 findings 12, 13, 14, 18, 25; issue 27 point 8)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from session_resume.storage.config import KEYS, MAX_CONFIG_BYTES, key_line

from conftest import REPO, apex_state, dump, run_cli

DECOY = b'{"secret_key_name": "decoy contents", "workflow": "x"}\n'


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    """A repository with one valid session, and a decoy directory outside it."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / ".git").mkdir(parents=True)
    (repo / "agent-output" / "p").mkdir(parents=True)
    (repo / "agent-output" / "p" / "00-session-state.json").write_bytes(dump(apex_state()))
    outside.mkdir()
    (outside / "decoy.yaml").write_bytes(DECOY)
    (outside / "sessions" / "q").mkdir(parents=True)
    (outside / "sessions" / "q" / "00-session-state.json").write_bytes(dump(apex_state()))
    return repo, outside


def _snapshot(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def _refused(proc: object, code: str, decoys: Path, before: dict[str, bytes]) -> str:
    out = proc.stdout + proc.stderr  # type: ignore[attr-defined]
    assert proc.returncode == 2, out  # type: ignore[attr-defined]
    assert code in out and "SR900" not in out, out
    assert "secret_key_name" not in out and "decoy contents" not in out, out
    assert _snapshot(decoys) == before
    return str(out)


# --- issue 25, finding 12: a bare workflow name is a file inside the repository -----------


def test_bare_workflow_name_linked_outside_is_refused(world: tuple[Path, Path]) -> None:
    repo, outside = world
    before = _snapshot(outside)
    (repo / "evil").symlink_to(outside / "decoy.yaml")
    (repo / ".session-resume.yaml").write_text("workflow: evil\n")
    out = _refused(run_cli("validate", cwd=repo), "SR105", outside, before)
    assert ".session-resume.yaml:1" in out, out


def test_bare_workflow_name_is_looked_up_beside_the_config_not_in_cwd(
    world: tuple[Path, Path],
) -> None:
    """From a subdirectory, `workflow: mine` is the repository's `mine`, never the current
    directory's file of that name."""
    repo, outside = world
    sub = repo / "sub"
    sub.mkdir()
    (sub / "mine").symlink_to(outside / "decoy.yaml")  # a decoy where cwd lookup would look
    before = _snapshot(outside)
    (repo / ".session-resume.yaml").write_text("session_root: agent-output\nworkflow: mine\n")
    out = _refused(run_cli("validate", cwd=sub), "SR405", outside, before)
    assert ".session-resume.yaml:2" in out and "no built-in workflow named 'mine'" in out, out


def test_misspelt_workflow_is_reported_against_the_config_file(world: tuple[Path, Path]) -> None:
    repo, _ = world
    (repo / ".session-resume.yaml").write_text("# ours\nmax_size: 100000\nworkflow: generci\n")
    proc = run_cli("validate", "--format", "json", cwd=repo)
    assert proc.returncode == 2
    assert ".session-resume.yaml:3" in proc.stderr, proc.stderr
    assert "generci:" not in proc.stderr  # not reported as if `generci` were a file
    assert "apex" in proc.stderr and "docs/config.md" in proc.stderr


# --- finding 13: session_root stays inside the repository ----------------------------------


@pytest.mark.parametrize("value", ["../outside/sessions", "{outside}/sessions", "a/../../x"])
def test_session_root_outside_is_refused(world: tuple[Path, Path], value: str) -> None:
    repo, outside = world
    before = _snapshot(outside)
    (repo / ".session-resume.yaml").write_text(
        f"session_root: {json.dumps(value.format(outside=outside))}\n"
    )
    out = _refused(run_cli("validate", cwd=repo), "SR405", outside, before)
    assert ".session-resume.yaml:1" in out and "sessions/q" not in out, out


def test_session_root_linked_outside_is_refused(world: tuple[Path, Path]) -> None:
    repo, outside = world
    before = _snapshot(outside)
    (repo / "linked").symlink_to(outside / "sessions")
    (repo / ".session-resume.yaml").write_text("session_root: linked\n")
    out = _refused(run_cli("validate", cwd=repo), "SR105", outside, before)
    assert "00-session-state.json" not in out, out


# --- finding 14: the configuration file itself --------------------------------------------


@pytest.mark.parametrize("name", [".session-resume.yaml", "pyproject.toml"])
def test_config_linked_outside_is_not_followed(world: tuple[Path, Path], name: str) -> None:
    repo, outside = world
    text = (
        "secret_key_name: 1\n"
        if name.endswith(".yaml")
        else '[tool.session-resume]\nsecret_key_name = "decoy contents"\n'
    )
    (outside / "planted").write_text(text)
    before = _snapshot(outside)
    (repo / name).symlink_to(outside / "planted")
    out = _refused(run_cli("validate", cwd=repo), "SR105", outside, before)
    assert name in out, out


def test_config_link_inside_its_directory_is_read(world: tuple[Path, Path]) -> None:
    repo, _ = world
    (repo / "shared.yaml").write_text("workflow: apex\n")
    (repo / ".session-resume.yaml").symlink_to("shared.yaml")
    proc = run_cli("validate", "--now", "2026-11-22T00:00:00Z", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_oversized_config_is_refused_unread(world: tuple[Path, Path]) -> None:
    repo, outside = world
    before = _snapshot(outside)
    (repo / ".session-resume.yaml").write_bytes(
        b"secret_key_name: 1\n" + b"#" * (MAX_CONFIG_BYTES + 1)
    )
    out = _refused(run_cli("validate", cwd=repo), "SR405", outside, before)
    assert f"{MAX_CONFIG_BYTES:,}" in out, out


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_config_that_is_no_regular_file_is_refused(world: tuple[Path, Path], kind: str) -> None:
    repo, outside = world
    before = _snapshot(outside)
    target = repo / ".session-resume.yaml"
    if kind == "fifo":
        os.mkfifo(target)  # opened non-blocking: no writer, no hang
    else:
        target.mkdir()
    out = _refused(run_cli("validate", cwd=repo), "SR405", outside, before)
    assert "not a regular file" in out, out


# --- finding 18: every number range-checked --------------------------------------------------


INT_KEYS = [k for k in KEYS if k.type == "integer"]


@pytest.mark.parametrize("key", INT_KEYS, ids=lambda k: k.name)
@pytest.mark.parametrize("value", ["1e20", "-1", "99999999999999999999999", "true", "1.5"])
def test_numbers_out_of_range_are_sr405(world: tuple[Path, Path], key: object, value: str) -> None:
    repo, outside = world
    before = _snapshot(outside)
    (repo / ".session-resume.yaml").write_text(f"{key.name}: {value}\n")  # type: ignore[attr-defined]
    out = _refused(run_cli("validate", cwd=repo), "SR405", outside, before)
    assert key.allowed in out and "docs/config.md" in out, out  # type: ignore[attr-defined]


def test_toml_int64_limit_is_sr405(world: tuple[Path, Path]) -> None:
    repo, outside = world
    before = _snapshot(outside)
    (repo / "pyproject.toml").write_text(
        "[tool.session-resume]\n\nclock_skew_seconds = 9223372036854775807\n"
    )
    out = _refused(run_cli("validate", cwd=repo), "SR405", outside, before)
    assert "pyproject.toml:3" in out, out


# --- finding 25: docs_url is a URI --------------------------------------------------------


@pytest.mark.parametrize("bad", ['https://x.example/"q', "https://x.example/<a>", "https://x/{a}"])
def test_docs_url_with_non_uri_characters_is_sr405(world: tuple[Path, Path], bad: str) -> None:
    repo, outside = world
    before = _snapshot(outside)
    (repo / ".session-resume.yaml").write_text(f"docs_url: {json.dumps(bad)}\n")
    _refused(run_cli("validate", "--format", "sarif", cwd=repo), "SR405", outside, before)
    (repo / ".session-resume.yaml").unlink()
    proc = run_cli("validate", "--format", "sarif", "--docs-url", bad, cwd=repo)
    assert proc.returncode == 2 and "--docs-url" in proc.stderr


# --- issue 27 point 8: one definition, documented ---------------------------------------------


def test_docs_config_md_lists_every_key_from_the_definition() -> None:
    text = (REPO / "docs" / "config.md").read_text(encoding="utf-8")
    for k in KEYS:
        assert f"## `{k.name}`" in text
        assert f"- default: {k.default_text}" in text and f"- allowed: {k.allowed}" in text
        assert f"{k.name}: {k.example}" in text


def test_every_documented_example_is_accepted(tmp_path: Path) -> None:
    """The examples of docs/config.md, all at once, are a configuration the loader takes."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "generic").mkdir()  # a decoy directory named like the workflow: not a file
    (tmp_path / ".session-resume.yaml").write_text(
        "".join(f"{k.name}: {k.example}\n" for k in KEYS)
    )
    (tmp_path / "agent-output" / "p").mkdir(parents=True)
    (tmp_path / "agent-output" / "p" / "00-session-state.json").write_bytes(dump(apex_state()))
    proc = run_cli("validate", "--now", "2026-11-22T00:00:00Z", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_unknown_key_is_named_with_its_line(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.session-resume]\nworkflow = "apex"\nsesion_root = "a"\n'
    )
    proc = run_cli("validate", cwd=tmp_path)
    assert proc.returncode == 2
    assert "pyproject.toml:6" in proc.stderr and "'sesion_root'" in proc.stderr, proc.stderr


def test_key_line_finds_yaml_and_toml_spellings() -> None:
    assert key_line("a: 1\n'workflow': x\n", "yaml", "workflow") == 2
    assert (
        key_line('workflow = 1\n[tool.session-resume]\nworkflow = "x"\n', "toml", "workflow") == 3
    )
    assert key_line("tool.session-resume.max_size = 3\n", "toml", "max_size") == 1
    assert key_line("a: 1\n", "yaml", "workflow") is None
