"""The CLI conventions users expect from ruff and check-jsonschema, through the installed
command: --output-format, -q, `-` for standard input, colour, shell completion, discovery
that honours .gitignore, quoted globs, and a progress display only on a terminal."""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import termios
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import REPO

# Test tier (README "Test tiers"): shells, terminals and many CLI processes.
pytestmark = pytest.mark.slow

EXAMPLE = REPO / "examples/agent-output/contoso-portal/00-session-state.json"
EXE = shutil.which("session-resume") or str(Path(sys.executable).parent / "session-resume")


def run(
    *args: str,
    cwd: Path | None = None,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "CI")}
    full.update(env or {})
    proc = subprocess.run(
        [EXE, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env=full,
        timeout=120,
    )
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode()
    )


def _state(tmp: Path, rel: str, *, broken: bool = False) -> Path:
    path = tmp / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = json.loads(EXAMPLE.read_text())
    doc.pop("$schema", None)
    if broken:
        doc["current_step"] = "two"
    path.write_text(json.dumps(doc, indent=2))
    return path


def test_output_format_is_accepted_beside_format(tmp_path: Path) -> None:
    state = _state(tmp_path, "a/00-session-state.json")
    out = run("validate", "--output-format", "json", str(state), cwd=tmp_path)
    assert out.returncode == 0 and json.loads(out.stdout)["files"]
    res = run("resume", str(state.parent), "--output-format", "json", cwd=tmp_path)
    assert res.returncode == 0 and "action" in json.loads(res.stdout)


def _every_command(parser: argparse.ArgumentParser, words: list[str]) -> Iterator[list[str]]:
    """The words of every command and nested subcommand under ``parser`` (`session start`)."""
    yield words
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _every_command(sub, [*words, name])


def test_output_format_is_listed_once_in_every_help() -> None:
    """The alias is added to an action several subparsers share: it is named once in each
    command's help and in docs/cli.md, not once per subparser (issue 25, finding 26). Checked
    in every parser the CLI builds: the whole tree (docgen, completion) and the one command's
    parser `session-resume CMD` builds alone (cli.parser.build_parser(CMD)), where sibling
    subcommands (`session start`, `session end`) share the `--format` action of one parent;
    and in the help the installed command prints for every (nested) subcommand (issue 26)."""
    from session_resume.cli.parser import KNOWN, build_parser

    trees = [(None, build_parser())] + [(name, build_parser(name)) for name in sorted(KNOWN)]
    for only, tree in trees:
        for words in _every_command(tree, []):
            sub = tree
            for w in words:
                sub = next(
                    a for a in sub._actions if isinstance(a, argparse._SubParsersAction)
                ).choices[w]
            if only is not None and words[:1] != [only]:
                continue  # a command not built in this tree (a stand-in)
            fmt = sub._option_string_actions.get("--format")
            if fmt is not None:
                assert fmt.option_strings.count("--output-format") == 1, (only, words)
            assert sub.format_help().count("--output-format") <= 1, (only, words)
    for words in _every_command(build_parser(), []):
        if words:
            shown = run(*words, "--help")
            assert shown.returncode == 0, (words, shown.stderr)
            assert shown.stdout.count("--output-format") <= 1, words
    cli_md = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    for section in cli_md.split("\n## ")[1:]:
        assert section.count("--output-format") <= 1, section.splitlines()[0]


def test_complete_and_transition_say_when_to_use_each() -> None:
    """Issue 26: an agent told `complete` from `transition` by guessing. Each one's help says
    when to use it, what it records, and points to the other."""
    complete = " ".join(run("complete", "--help").stdout.split())
    transition = " ".join(run("transition", "--help").stdout.split())
    assert "Use it when the step's work is done" in complete
    assert "worklog `step_complete`" in complete and "use `transition`" in complete
    assert "Use it at an orchestrator gate" in transition
    assert "`step_start` naming A" in transition and "use `complete`" in transition
    cli_md = " ".join((REPO / "docs" / "cli.md").read_text(encoding="utf-8").split())
    assert "Use it when the step's work is done" in cli_md
    assert "Use it at an orchestrator gate" in cli_md


def test_quiet_prints_findings_only(tmp_path: Path) -> None:
    good = _state(tmp_path, "good/00-session-state.json")
    bad = _state(tmp_path, "bad/00-session-state.json", broken=True)
    quiet_good = run("validate", "-q", str(good), cwd=tmp_path)
    assert quiet_good.returncode == 0 and quiet_good.stdout == ""
    loud = run("validate", str(bad), cwd=tmp_path)
    quiet = run("validate", "--quiet", str(bad), cwd=tmp_path)
    assert quiet.returncode == loud.returncode == 1
    assert "file(s) checked" in loud.stdout and "file(s) checked" not in quiet.stdout
    assert quiet.stdout.strip() and quiet.stdout in loud.stdout


def test_dash_reads_standard_input(tmp_path: Path) -> None:
    ok = run("validate", "-", stdin=EXAMPLE.read_bytes(), cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    doc = json.loads(EXAMPLE.read_text())
    doc["current_step"] = "two"
    bad = run(
        "validate",
        "-",
        "--stdin-filename",
        "agent-output/x/00-session-state.json",
        stdin=json.dumps(doc).encode(),
        cwd=tmp_path,
    )
    assert bad.returncode == 1
    assert bad.stdout.startswith("agent-output/x/00-session-state.json")
    mixed = run("validate", "-", str(EXAMPLE), stdin=b"{}", cwd=tmp_path)
    assert mixed.returncode == 2 and "standard input" in mixed.stderr


def test_colour_follows_the_flag_and_the_environment(tmp_path: Path) -> None:
    bad = _state(tmp_path, "bad/00-session-state.json", broken=True)
    esc = "\x1b["
    assert esc in run("validate", "--color", "always", str(bad), cwd=tmp_path).stdout
    assert esc not in run("validate", str(bad), cwd=tmp_path).stdout  # a pipe: no colour
    assert esc in run("validate", str(bad), cwd=tmp_path, env={"FORCE_COLOR": "1"}).stdout
    never = run("validate", "--color", "never", str(bad), cwd=tmp_path, env={"FORCE_COLOR": "1"})
    assert esc not in never.stdout
    # NO_COLOR wins over a terminal: checked in the terminal test below


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, timeout=60)


def test_directory_discovery_honours_gitignore(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    _state(tmp_path, "agent-output/a/00-session-state.json")
    _state(tmp_path, "build/copy/00-session-state.json", broken=True)
    outside = run("validate", "--output-format", "json", str(tmp_path), cwd=tmp_path)
    assert len(json.loads(outside.stdout)["files"]) == 2  # not a repository: every file
    _git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text("build/\n")
    inside = run("validate", "--output-format", "json", str(tmp_path), cwd=tmp_path)
    files = [f["path"] for f in json.loads(inside.stdout)["files"]]
    assert inside.returncode == 0 and len(files) == 1 and "agent-output" in files[0]


def test_quoted_globs_are_expanded_by_the_tool(tmp_path: Path) -> None:
    _state(tmp_path, "agent-output/a/00-session-state.json")
    _state(tmp_path, "agent-output/b/00-session-state.json")
    out = run(
        "validate", "--output-format", "json", "agent-output/*/00-session-state.json", cwd=tmp_path
    )
    assert out.returncode == 0 and len(json.loads(out.stdout)["files"]) == 2
    none = run("validate", "nothing/*/00-session-state.json", cwd=tmp_path)
    assert none.returncode == 2 and "SR100" in none.stderr


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_are_valid_for_their_shell(shell: str) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed (the CI script installs it)")
    script = run("completion", shell)
    assert script.returncode == 0 and "session-resume" in script.stdout
    check = subprocess.run([shell, "-n"], input=script.stdout, text=True, capture_output=True)
    assert check.returncode == 0, check.stderr


def test_bash_completes_commands_and_options() -> None:
    """The real thing: bash sources the script and calls its completion function."""
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    probe = (
        'source <("$EXE" completion bash); '
        'complete_line() { COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}; '
        'read -ra COMP_WORDS <<< "$COMP_LINE"; '
        '[[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=(""); '
        "COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); "
        '_python_argcomplete session-resume; echo "${COMPREPLY[*]}"; }; '
        'complete_line "session-resume val"; complete_line "session-resume validate --outp"'
    )
    env = {**os.environ, "EXE": EXE}
    out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, env=env)
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["validate"], out.stdout + out.stderr
    assert "--output-format" in lines[1]


def _on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """Run the command with a pseudo-terminal as its stdout and stderr; what it drew. The
    parent keeps the terminal's other end open until the child has exited, so no output is
    lost when it closes."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 24x100
    proc = subprocess.Popen([EXE, *args], stdout=child, stderr=child, env=env)
    chunks = []
    while True:
        ready, _, _ = select.select([main], [], [], 0.2)
        if ready:
            chunks.append(os.read(main, 65536))
        elif proc.poll() is not None:
            break
    os.close(child)
    os.close(main)
    return b"".join(chunks).decode(errors="replace")


def test_progress_and_colour_on_a_terminal_only(tmp_path: Path) -> None:
    for i in range(60):
        _state(tmp_path, f"agent-output/s{i}/00-session-state.json")
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "CI")}
    env = {**base, "SESSION_RESUME_PROGRESS_DELAY": "0", "TERM": "xterm"}
    drawn = _on_a_terminal(["validate", str(tmp_path / "agent-output")], env)
    assert "validate:" in drawn and "file" in drawn  # the bar
    assert "\x1b[" in drawn  # colour on a terminal
    plain = _on_a_terminal(["validate", str(tmp_path / "agent-output")], {**env, "NO_COLOR": "1"})
    assert "\x1b[32m" not in plain  # NO_COLOR: no colour of ours
    ci = _on_a_terminal(["validate", str(tmp_path / "agent-output")], {**env, "CI": "true"})
    assert "validate:" not in ci  # never in CI logs
    piped = run(
        "validate", str(tmp_path / "agent-output"), env={"SESSION_RESUME_PROGRESS_DELAY": "0"}
    )
    assert piped.stderr == "" and "60 file(s) checked" in piped.stdout


@pytest.mark.parametrize("columns", [None, "60", "200", "0", "wide"])
def test_the_help_width_is_shutils(monkeypatch: pytest.MonkeyPatch, columns: str | None) -> None:
    """The CLI's help formatter takes the width as shutil.get_terminal_size does (COLUMNS,
    else the terminal, else 80) without importing shutil on a cold command."""
    import shutil

    from session_resume.cli.commands.common import terminal_columns

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns
