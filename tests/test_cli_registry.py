"""One registry of CLI commands (issue 31): each command module declares its commands as
data (``COMMANDS``, ``cli.parser.Command`` records: name, order, help, description and the
function adding its arguments); ``cli/command_table.py`` is derived from those declarations by
docgen, and ``session-resume COMMAND`` imports only that command's module. The output formats
of ``validate`` are one table too (``reporters.REPORTERS``)."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from session_resume.cli.command_table import COMMAND_MODULES
from session_resume.cli.parser import KNOWN, build_parser, declared
from session_resume.docgen.commands import CommandDeclarationError, command_table, declarations
from session_resume.reporters import REPORTERS

from conftest import REPO

PACKAGE = REPO / "validator" / "session_resume"
MODULE_OF = {name: f"session_resume.cli.commands.{m}" for name, m in COMMAND_MODULES.items()}


def _choices(parser: argparse.ArgumentParser) -> list[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices)
    return []


def test_the_full_parser_has_exactly_the_registered_commands_in_order() -> None:
    """The parser has the table's commands, and each module declares exactly the table's
    commands of that module: a command missing from the table (as `review-audit` once was from
    the hand-kept one) fails here."""
    assert _choices(build_parser()) == list(COMMAND_MODULES)
    assert set(MODULE_OF) == KNOWN
    for module in set(COMMAND_MODULES.values()):
        names = {c.name for c in declared(module)}
        assert names == {n for n, m in COMMAND_MODULES.items() if m == module}, module


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


def _extra(pkg: Path, source: str) -> None:
    (pkg / "cli" / "commands" / "extra.py").write_text(source, encoding="utf-8")


def test_a_command_module_without_its_records_is_refused(tmp_path: Path) -> None:
    pkg = _package_copy(tmp_path)
    _extra(pkg, "def add_parser(sub):\n    sub.add_parser('extra')\n")
    with pytest.raises(CommandDeclarationError, match="declares no COMMANDS"):
        declarations(pkg)
    _extra(pkg, 'EXTRA = Command("extra", order=1, help="", arguments=print)\n')
    with pytest.raises(CommandDeclarationError, match="a Command outside the module's COMMANDS"):
        declarations(pkg)


@pytest.mark.parametrize("record", ["NAME, order=1", '"extra"', '"extra", order=ORDER'])
def test_a_record_whose_name_or_order_is_not_literal_is_refused(
    tmp_path: Path, record: str
) -> None:
    pkg = _package_copy(tmp_path)
    _extra(pkg, f'COMMANDS = (Command({record}, help="", arguments=print),)\n')
    with pytest.raises(CommandDeclarationError, match="must be a string literal"):
        declarations(pkg)


def test_a_name_declared_twice_is_refused(tmp_path: Path) -> None:
    pkg = _package_copy(tmp_path)
    _extra(pkg, 'COMMANDS = (Command("resume", order=1, help="", arguments=print),)\n')
    with pytest.raises(CommandDeclarationError, match="'resume' declared by"):
        declarations(pkg)


def test_a_new_command_module_joins_the_table_in_its_place(tmp_path: Path) -> None:
    pkg = _package_copy(tmp_path)
    _extra(
        pkg,
        'COMMANDS = (\n    Command("extra", order=15, help="", arguments=print),\n'
        '    Command(name="more", order=15, help="", arguments=print),\n)\n',
    )
    rows = declarations(pkg)
    assert [m for _, m in rows[:5]] == ["validate", "migrate", "extra", "extra", "recover"]
    assert rows[2:4] == [("extra", "extra"), ("more", "extra")]


def test_the_parser_builds_each_subparser_from_its_record() -> None:
    """`sub.add_parser(name, help=..., description=...)` is written once, in ``Command``: the
    record's help and description are what ``--help`` prints."""
    parser = build_parser("archive")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    (record,) = declared("archive")
    help_of = {a.dest: a.help for a in sub._choices_actions}
    assert help_of == {"archive": record.help}
    assert sub.choices["archive"].description == record.description


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
