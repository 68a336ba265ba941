"""The `session-resume` argument parser: every command's options, built on demand.

Each command module under ``cli/commands/`` declares its commands as data, ``COMMANDS``, a
tuple of :class:`Command` records; this module builds their subparsers. The generated
``command_table`` says which module declares which command, so the parser imports the module
of the command being run only (``--help`` builds them all). Apart from the main module so that
what prints suggested commands (:mod:`session_resume.cli.commands.suggest`) can read a
command's options without importing :mod:`session_resume.cli.main`.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable

from session_resume import __version__
from session_resume.cli.command_table import COMMAND_MODULES
from session_resume.cli.commands.common import ArgumentParser
from session_resume.records import record

KNOWN = frozenset(COMMAND_MODULES)


@record(frozen=True)
class Command:
    """One command of `session-resume`, as its module declares it in ``COMMANDS``.

    ``order`` is its place in ``session-resume --help`` (the table is sorted by it, then by
    module); ``name``, ``help`` and ``description`` make its subparser (``description``: the
    text of ``session-resume NAME --help``, default none); ``arguments(parser)`` adds the
    command's own arguments and sets ``func``, the function that runs it (``set_defaults``)."""

    name: str
    order: int
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    # a function: the description is built only when the help is shown (`mcp` names the
    # tools of a registry that imports the services)
    description: str | Callable[[], str] | None = None

    def add_to(self, sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
        if callable(self.description):
            p = sub.add_parser(self.name, help=self.help, lazy_description=self.description)
        else:
            p = sub.add_parser(self.name, help=self.help, description=self.description)
        self.arguments(p)


def declared(module: str) -> tuple[Command, ...]:
    """The commands ``cli/commands/<module>.py`` declares (importing it)."""
    commands: tuple[Command, ...] = importlib.import_module(
        f"session_resume.cli.commands.{module}"
    ).COMMANDS
    return commands


def build_parser(
    only: str | None = None,
    *,
    table: dict[str, str] = COMMAND_MODULES,
) -> argparse.ArgumentParser:
    """The argument parser; with ``only``, just that command's subparser (faster: one module
    imported, one subparser built). ``table``: another command table (docgen builds
    docs/cli.md from the one it just derived)."""
    parser = ArgumentParser(
        prog="session-resume",
        description="Validate, migrate, recover and resume agent session state files.",
        epilog="Exit codes: 0 valid, 1 invalid, 2 usage error (a bad option, a missing path, "
        "a broken configuration or workflow: SR100, SR400-SR403, SR405), 3 internal error. "
        "Every diagnostic code has a page under docs/codes/.",
    )
    parser.add_argument("--version", action="version", version=f"session-resume {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module in table.items():
        if only is None or only == name:
            by_name = {c.name: c for c in declared(module)}
            by_name[name].add_to(sub)
    return parser
