"""One rule names a session in every command (docs/config.md): a directory, looked up under
the repository root first and then the current directory, or `--project NAME`; the
repository root and its configuration are found from the session directory, not from the
current directory (issue 27 point 6 / must-show 4, issue 25 finding 22)."""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, run_cli

# Test tier (README "Test tiers"): many CLI processes.
pytestmark = pytest.mark.slow

FIXTURES = REPO / "tests" / "fixtures" / "migrate"
NOW = ("--now", "2026-11-22T00:00:00Z")


def _snapshot(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with session P at step 2, checkpointed with an artifact on disk."""
    r = tmp_path / "repo"
    (r / "sub" / "deeper").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(r)], check=True)
    (r / "docs").mkdir()
    (r / "docs" / "requirements.md").write_text("partial\n")
    for cmd in (
        ("init", "P"),
        ("start", "1", "--project", "P"),
        (
            "checkpoint",
            "1",
            "phase_1_discovery",
            "--project",
            "P",
            "--artifact",
            "docs/requirements.md",
        ),
    ):
        proc = run_cli(*cmd, *NOW, cwd=r)
        assert proc.returncode == 0, proc.stderr
    return r


@pytest.fixture
def decoy_cwd(tmp_path: Path) -> Path:
    """A directory outside the repository that is itself a repository with its own config
    (another workflow) and a same-named but different artifact: a command run from here about
    the repository's session must use neither."""
    d = tmp_path / "elsewhere"
    (d / ".git").mkdir(parents=True)
    (d / ".session-resume.yaml").write_text("workflow: generic\nstale_after_seconds: 1\n")
    (d / "docs").mkdir()
    (d / "agent-output" / "P").mkdir(parents=True)
    (d / "agent-output" / "P" / "decoy.txt").write_text("not a session\n")
    return d


def test_absolute_session_path_from_outside_uses_the_sessions_repository(
    repo: Path, decoy_cwd: Path
) -> None:
    """Issue 25 finding 22: the artifact is on disk in the session's repository; from another
    directory with an absolute path it is still found (no SR314, not "listed but not on
    disk"), and the outside directory's config is not applied."""
    before = _snapshot(decoy_cwd)
    session = str(repo / "agent-output" / "P")
    proc = run_cli("validate", "--check-artifacts", *NOW, session, cwd=decoy_cwd)
    assert proc.returncode == 0 and "SR314" not in proc.stdout, proc.stdout + proc.stderr
    res = run_cli("resume", session, "--format", "json", *NOW, cwd=decoy_cwd)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["action"] == "resume_from_checkpoint", doc
    artifacts = (doc.get("briefing") or {}).get("artifacts") or []
    assert artifacts and all(a["exists"] for a in artifacts), artifacts
    assert "generic" not in json.dumps(doc.get("workflow")), doc.get("workflow")
    # and a write from outside lands in the session's repository, under its workflow
    w = run_cli(
        "checkpoint", "1", "phase_2_workload", "--session-dir", session, *NOW, cwd=decoy_cwd
    )
    assert w.returncode == 0, w.stderr
    assert _snapshot(decoy_cwd) == before


@pytest.mark.parametrize(
    "argv",
    [
        ("resume", "{dir}"),
        ("report", "{dir}"),
        ("validate", "{dir}"),
        ("render", "handoff", "{dir}", "--out", "-"),
        ("migrate", "--check", "{dir}"),
        ("budget", "1", "--session-dir", "{dir}"),
        ("checkpoint", "1", "phase_2_workload", "--session-dir", "{dir}"),
        ("resume", "--project", "P"),
        ("report", "--project", "P"),
        ("validate", "--project", "P"),
        ("render", "handoff", "--project", "P", "--out", "-"),
        ("migrate", "--check", "--project", "P"),
        ("budget", "1", "--project", "P"),
        ("recover", "--project", "P"),
        ("archive", "--prune-only", "--project", "P"),
        ("checkpoint", "1", "phase_2_workload", "--project", "P"),
    ],
    ids=lambda a: " ".join(a),
)
def test_every_command_finds_the_session_from_a_subdirectory(
    repo: Path, argv: tuple[str, ...]
) -> None:
    """From `sub/deeper`, `agent-output/P` and `--project P` name the same session in every
    command (issue 27 point 6: `resume agent-output/P` was SR100 there)."""
    args = [a.replace("{dir}", "agent-output/P") for a in argv]
    now = () if args[0] == "budget" else NOW  # budget reads no clock
    proc = run_cli(*args, *now, cwd=repo / "sub" / "deeper")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SR100" not in proc.stdout + proc.stderr


def test_explicitly_relative_names_are_the_current_directorys(repo: Path) -> None:
    """`.` inside the session directory is that directory, not the repository root (which
    also exists); `./agent-output/P` from a subdirectory is the subdirectory's (missing)."""
    inside = repo / "agent-output" / "P"
    proc = run_cli("resume", ".", "--format", "json", *NOW, cwd=inside)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["action"] == "resume_from_checkpoint", proc.stdout
    # the subdirectory's, which does not exist: a session still to create there (fresh
    # start, its `init` naming that directory), never the root's
    miss = run_cli("resume", "./agent-output/P", *NOW, cwd=repo / "sub")
    assert miss.returncode == 0 and miss.stdout.startswith("action: fresh_start")
    assert "--session-dir ./agent-output/P" in miss.stdout


def test_dir_and_project_together_are_a_usage_error(repo: Path) -> None:
    proc = run_cli("resume", "agent-output/P", "--project", "P", cwd=repo)
    assert proc.returncode == 2 and "not both" in proc.stderr


def test_every_command_taking_a_session_directory_takes_project() -> None:
    """Introspected from the parser: a command with a DIR or --session-dir has --project
    (`init` names it by its PROJECT argument; `import`'s --to is the directory it creates)."""
    from session_resume.cli.main import build_parser
    from session_resume.docgen.generate import _subcommands

    lacking = []
    for name, sub in _subcommands(build_parser(), "session-resume"):
        dests = {a.dest for a in sub._actions if not isinstance(a, argparse._SubParsersAction)}
        if name.endswith(" init"):
            continue
        if ({"dir", "session_dir"} & dests or name.endswith(("validate", "migrate"))) and (
            "--project" not in sub._option_string_actions
        ):
            lacking.append(name)
    assert lacking == []


def test_migrate_dry_run_salvage_suggests_a_command_that_runs(tmp_path: Path) -> None:
    """Issue 27 point 3: `migrate --salvage --dry-run` ended with a command without
    --salvage, which was then refused; the suggested command keeps it, and runs."""
    (tmp_path / ".git").mkdir()
    d = tmp_path / "agent-output" / "demo"
    d.mkdir(parents=True)
    shutil.copy(FIXTURES / "v2-nordic-fresh-foods.json", d / "00-session-state.json")
    dry = run_cli("migrate", "--salvage", "--dry-run", "agent-output/demo", *NOW, cwd=tmp_path)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    line = next(x for x in dry.stdout.splitlines() if x.startswith("to write it: run `"))
    cmd = line.split("`")[1]
    assert "--salvage" in cmd.split(), cmd
    import shlex

    argv = shlex.split(cmd)
    assert argv[:2] == ["session-resume", "migrate"]
    real = run_cli(*argv[1:], cwd=tmp_path)
    assert real.returncode == 0, real.stdout + real.stderr
    again = run_cli("migrate", "--check", "agent-output/demo", cwd=tmp_path)
    assert again.returncode == 0, again.stdout
    by_project = run_cli("migrate", "--salvage", "--dry-run", "--project", "demo", cwd=tmp_path)
    assert by_project.returncode == 0


# --- `--project NAME` beyond agent-output/NAME (issue 27 must-show 4) -----------------------


def _bare_repo(tmp_path: Path) -> Path:
    r = tmp_path / "bare"
    (r / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(r)], check=True)
    return r


def test_project_finds_a_dotagent_session_in_memory(tmp_path: Path) -> None:
    """No workflow configured: `decide … --project demo` from a subdirectory writes the
    dotagent session under memory/demo; no apex session appears under agent-output/demo."""
    r = _bare_repo(tmp_path)
    assert run_cli("init", "demo", "--workflow", "dotagent", *NOW, cwd=r).returncode == 0
    proc = run_cli("decide", "region", "x", "--project", "demo", *NOW, cwd=r / "sub")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    state = json.loads((r / "memory" / "demo" / "00-session-state.json").read_text())
    assert state["decisions"]["region"] == "x"
    assert not (r / "agent-output").exists()
    res = run_cli("resume", "--project", "demo", "--format", "json", *NOW, cwd=r / "sub")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["action"] != "init", res.stdout


def test_project_in_two_workflows_directories_is_refused_with_runnable_commands(
    tmp_path: Path,
) -> None:
    """Sessions of the project under agent-output/ and memory/: SR185 lists both, each as the
    user's command with the directory in place of --project; each printed command runs."""
    r = _bare_repo(tmp_path)
    assert run_cli("init", "demo", "--workflow", "dotagent", *NOW, cwd=r).returncode == 0
    assert run_cli("init", "demo", "--workflow", "generic", *NOW, cwd=r).returncode == 0
    before = _snapshot(r / "memory"), _snapshot(r / "agent-output")
    for argv, form in (
        (("decide", "region", "x", "--project", "demo", *NOW), "--session-dir ../"),
        (("resume", "--project", "demo", *NOW), "resume ../"),
    ):
        proc = run_cli(*argv, cwd=r / "sub")
        assert proc.returncode == 2 and "SR185" in proc.stderr, proc.stdout + proc.stderr
        assert "../memory/demo" in proc.stderr and "../agent-output/demo" in proc.stderr
        printed = re.findall(r"`(session-resume [^`]+)`", proc.stderr.split("hint:")[0])
        assert len(printed) == 2 and all(form in c for c in printed), printed
        for command in printed:
            words = shlex.split(command)[1:]
            ran = run_cli(*words, cwd=r / "sub")
            assert ran.returncode == 0, command + "\n" + ran.stdout + ran.stderr
    assert (
        json.loads((r / "memory/demo/00-session-state.json").read_text())["decisions"]["region"]
        == "x"
    )
    assert before != (_snapshot(r / "memory"), _snapshot(r / "agent-output"))
    proc = run_cli("decide", "region", "y", "--project", "demo", "--format", "json", cwd=r)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 2 and doc["diagnostics"][0]["code"] == "SR185", doc


def test_no_session_suggests_init_with_the_configured_workflow(tmp_path: Path) -> None:
    """The config names dotagent: --project looks in memory/NAME, and the refusal's `init`
    carries `--workflow dotagent`, which then creates the session the write finds."""
    r = _bare_repo(tmp_path)
    (r / ".session-resume.yaml").write_text("workflow: dotagent\n")
    proc = run_cli("decide", "region", "x", "--project", "demo", *NOW, cwd=r / "sub")
    assert proc.returncode != 0 and "SR161" in proc.stderr, proc.stderr
    (command,) = re.findall(r"`(session-resume init [^`]+)`", proc.stderr)
    assert command == "session-resume init demo --workflow dotagent", proc.stderr
    assert run_cli(*shlex.split(command)[1:], *NOW, cwd=r / "sub").returncode == 0
    assert (r / "memory" / "demo" / "00-session-state.json").is_file()
    again = run_cli("decide", "region", "x", "--project", "demo", *NOW, cwd=r / "sub")
    assert again.returncode == 0, again.stderr
    # no workflow configured and no session anywhere: today's message, `init demo` as it was
    bare = _bare_repo(tmp_path / "other")
    proc = run_cli("decide", "region", "x", "--project", "demo", *NOW, cwd=bare)
    assert re.findall(r"`(session-resume init [^`]+)`", proc.stderr) == [
        "session-resume init demo"
    ], proc.stderr
