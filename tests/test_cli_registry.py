"""One registry of CLI commands (issue 31): each command module declares its names
(``COMMAND_NAMES``) and its parser-building function; ``cli/command_table.py`` is derived
from those declarations by docgen, and ``session-resume COMMAND`` imports only that command's
module. The output formats of ``validate`` are one table too (``reporters.REPORTERS``)."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from session_resume.cli.command_table import COMMANDS
from session_resume.cli.parser import KNOWN, build_parser
from session_resume.docgen.commands import CommandDeclarationError, command_table, declarations
from session_resume.reporters import REPORTERS

from conftest import REPO

PACKAGE = REPO / "validator" / "session_resume"
MODULE_OF = {name: module for module, _, names in COMMANDS for name in names}


def _choices(parser: argparse.ArgumentParser) -> list[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices)
    return []


def test_the_full_parser_has_exactly_the_registered_commands_in_order() -> None:
    """What the modules' builders register is what they declare: a name missing from a
    declaration (as `review-audit` once was from the hand-kept table) fails here."""
    assert _choices(build_parser()) == [n for _, _, names in COMMANDS for n in names]
    assert set(MODULE_OF) == KNOWN


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_a_command_alone_builds_only_its_own_parser(name: str) -> None:
    assert _choices(build_parser(name)) == [name]


def test_the_table_is_derived_from_the_declarations() -> None:
    text = (PACKAGE / "cli" / "command_table.py").read_text(encoding="utf-8")
    assert text == command_table(PACKAGE), "run `nox -s docs`"


PROBE = """
import contextlib, io, json, sys
from session_resume.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main([sys.argv[1], "--help"])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_command_help_imports_only_that_commands_module(name: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, name], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["code"] == 0
    command_modules = set(MODULE_OF.values())
    loaded = command_modules & set(answer["modules"])
    assert loaded == {MODULE_OF[name]}, f"`{name} --help` imported {sorted(loaded)}"


def _package_copy(tmp_path: Path) -> Path:
    pkg = tmp_path / "session_resume"
    shutil.copytree(PACKAGE / "cli", pkg / "cli", ignore=shutil.ignore_patterns("__pycache__"))
    return pkg


def test_a_command_module_without_its_names_is_refused(tmp_path: Path) -> None:
    pkg = _package_copy(tmp_path)
    (pkg / "cli" / "commands" / "extra.py").write_text(
        "def add_parser(sub):\n    sub.add_parser('extra')\n", encoding="utf-8"
    )
    with pytest.raises(CommandDeclarationError, match="declares no COMMAND_NAMES"):
        declarations(pkg)


def test_a_name_declared_twice_is_refused(tmp_path: Path) -> None:
    pkg = _package_copy(tmp_path)
    (pkg / "cli" / "commands" / "extra.py").write_text(
        'COMMAND_NAMES = ("resume",)\n\n\ndef add_parser(sub):\n    pass\n', encoding="utf-8"
    )
    with pytest.raises(CommandDeclarationError, match="'resume' declared by"):
        declarations(pkg)


def test_a_new_command_module_joins_the_table_in_its_place(tmp_path: Path) -> None:
    pkg = _package_copy(tmp_path)
    (pkg / "cli" / "commands" / "extra.py").write_text(
        'COMMAND_NAMES = ("extra",)\nCOMMAND_ORDER = 15\n\n\ndef add_parsers(sub):\n    pass\n',
        encoding="utf-8",
    )
    rows = declarations(pkg)
    assert [r[0].rsplit(".", 1)[1] for r in rows[:4]] == ["validate", "migrate", "extra", "recover"]
    assert rows[2] == ("session_resume.cli.commands.extra", "add_parsers", ("extra",))


def test_every_output_format_is_in_the_one_reporter_table() -> None:
    """`--format` offers the table's names; what a format needs is declared there, not
    special-cased by the command (positions for the ones that print line and column)."""
    sub = next(a for a in build_parser("validate")._actions if a.dest == "command")
    validate = sub.choices["validate"]  # type: ignore[index]
    action = validate._option_string_actions["--format"]
    assert tuple(action.choices) == tuple(REPORTERS)
    assert action is validate._option_string_actions["--output-format"]
    assert {n for n, r in REPORTERS.items() if r.needs_positions} == {"github", "sarif"}
    assert {n for n, r in REPORTERS.items() if r.refusal} == {"json", "sarif"}


def test_main_only_dispatches() -> None:
    """No command lives in cli/main.py (issue 31: at most 250 lines): it parses, runs the
    command's ``func`` and turns refusals into exit codes."""
    main = PACKAGE / "cli" / "main.py"
    assert len(main.read_text(encoding="utf-8").splitlines()) <= 250
    assert "add_parser(" not in main.read_text(encoding="utf-8")
