"""The `session-resume` argument parser: every command's options, built on demand.

Apart from the main module so that what prints suggested commands
(:mod:`session_resume.cli.commands.suggest`) can read a command's options without importing
:mod:`session_resume.cli.main`. Command modules are imported by name, only for the command
being parsed (``--help`` builds them all).
"""

from __future__ import annotations

import argparse
import importlib

from session_resume import __version__
from session_resume.cli.commands.common import ArgumentParser
from session_resume.reporters import NAMES as REPORTERS

TYPE_CHECKING = False  # typing is imported for the type checker only (cold start)
if TYPE_CHECKING:
    from typing import Any


def _cmd_validate(args: argparse.Namespace) -> int:
    """`validate` runs in the main module (by name, as every command module is loaded)."""
    run: Any = importlib.import_module("session_resume.cli.main").cmd_validate
    result: int = run(args)
    return result


# Each command module and the command names it registers. Only the module of the command
# being run is imported (a cold `validate` imports none of them); --help builds them all.
COMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("session_resume.cli.commands.migrate", ("migrate",)),
    ("session_resume.cli.commands.recover", ("recover",)),
    (
        "session_resume.cli.commands.write",
        (
            "init",
            "start",
            "checkpoint",
            "complete",
            "skip",
            "decide",
            "finding",
            "review-audit",
            "transition",
            "session",
            "ping",
        ),
    ),
    ("session_resume.cli.commands.resume", ("resume",)),
    ("session_resume.cli.commands.report", ("report",)),
    ("session_resume.cli.commands.budget", ("budget",)),
    ("session_resume.cli.commands.archive", ("archive",)),
    ("session_resume.cli.commands.render", ("render",)),
    ("session_resume.conformance.cli", ("conformance",)),
    ("session_resume.cli.commands.importers", ("import", "sync-todos")),
    ("session_resume.cli.commands.completion", ("completion",)),
    ("session_resume.cli.commands.mcp", ("mcp",)),
    ("session_resume.cli.commands.hook", ("hook", "hooks")),
    ("session_resume.cli.commands.setup", ("setup",)),
)
KNOWN = frozenset({"validate"} | {n for _, names in COMMANDS for n in names})


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with ``only``, just that command's subparser (faster)."""
    parser = ArgumentParser(
        prog="session-resume",
        description="Validate, migrate, recover and resume agent session state files.",
        epilog="Exit codes: 0 valid, 1 invalid, 2 usage error, 3 internal error. "
        "Every diagnostic code has a page under docs/codes/.",
    )
    parser.add_argument("--version", action="version", version=f"session-resume {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    if only is not None:
        sub = _OnlyCommand(sub, only)  # type: ignore[assignment]

    if only in (None, "validate"):
        _add_validate_parser(sub)

    for module, names in COMMANDS:
        if only is None or only in names:
            register = importlib.import_module(module)
            add = getattr(register, "add_parsers", None) or register.add_parser
            add(sub)
    _alias_output_format(parser)
    return parser


def _add_validate_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    v = sub.add_parser(
        "validate",
        help="check state files against their schema, the semantic rules and the workflow",
        description="Check state files: the schema of their own version, the "
        "semantic rules and the workflow's checkpoint and budget rules. With no PATH, the state "
        "files of the configured session root are checked.",
    )
    v.add_argument(
        "paths",
        nargs="*",
        metavar="PATH|DIR",
        help="state files, directories to search for 00-session-state.json (git-tracked "
        "files only, so .gitignore holds), glob patterns, or - for standard input; a "
        "relative path is looked up under the repository root first, then the current "
        "directory",
    )
    v.add_argument(
        "--project",
        metavar="NAME",
        help="the session of project NAME: the workflow's session_dir pattern (default "
        "agent-output/NAME) under the repository root",
    )
    _workflow_arg(v)
    v.add_argument("--strict", action="store_true", help="warnings also make a file invalid")
    v.add_argument(
        "--check-artifacts", action="store_true", help="artifacts listed in the state must exist"
    )
    v.add_argument(
        "--format",
        choices=REPORTERS,
        default="text",
        help="output format (default: text)",
    )
    v.add_argument(
        "--select",
        action="append",
        metavar="CODES",
        help="comma-separated list of codes or prefixes to report (`SR3`, `SR301`, `ALL`); "
        "replaces the config's `select` (read errors, SR1xx, are always reported)",
    )
    v.add_argument(
        "--ignore",
        action="append",
        metavar="CODES",
        help="comma-separated list of codes or prefixes not to report; an ignored error no "
        "longer fails the run; adds to the config's `ignore`",
    )
    v.add_argument(
        "--exit-zero",
        action="store_true",
        help='exit with status code "0", even upon detecting invalid files',
    )
    v.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="text format: print the findings only, no summary line (nothing when all is valid)",
    )
    v.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text output: auto (a terminal, unless NO_COLOR is set; FORCE_COLOR "
        "forces it), always or never",
    )
    v.add_argument(
        "--stdin-filename",
        metavar="NAME",
        help="with PATH `-` (the document on standard input): the name used in messages",
    )
    v.add_argument(
        "--now",
        metavar="TIMESTAMP",
        help="the current time for the future-timestamp rule (RFC 3339; default: clock)",
    )
    v.add_argument(
        "--max-size",
        type=int,
        metavar="BYTES",
        help="refuse files larger than this (default: 8 MiB or the config's max_size)",
    )
    v.add_argument(
        "--root",
        metavar="DIR",
        help="repository root that artifact paths are relative to (default: found "
        "from .session-resume.yaml, pyproject.toml or .git)",
    )
    v.add_argument(
        "--docs-url",
        metavar="URL",
        help="base URL of the docs, for SARIF's helpUri (default: the config's docs_url, "
        "else the repository's docs/ on GitHub)",
    )
    v.set_defaults(func=_cmd_validate)


class _Discarded:
    """Stands in for the parser of a command that is not being run: every call is accepted
    and builds nothing (argument groups, nested subparsers and defaults included)."""

    def __getattr__(self, _name: str) -> Any:
        return lambda *_args, **_kwargs: self


class _OnlyCommand:
    """The subparsers action, building only the parser of the command being run: a command
    module registers all its commands (the write module ten), and each parser costs start-up
    time (issue 19)."""

    def __init__(self, sub: argparse._SubParsersAction, only: str) -> None:  # type: ignore[type-arg]
        self._sub, self._only = sub, only

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if name == self._only:
            return self._sub.add_parser(name, **kwargs)
        return _Discarded()


def _alias_output_format(parser: argparse.ArgumentParser) -> None:
    """Every command's ``--format`` also answers to ``--output-format`` (the name ruff and
    check-jsonschema use)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                _alias_output_format(sub)
    fmt = parser._option_string_actions.get("--format")
    if fmt is not None and "--output-format" not in parser._option_string_actions:
        # one action may be shared by many parsers (a `parents=` group): named once
        if "--output-format" not in fmt.option_strings:
            fmt.option_strings = [*fmt.option_strings, "--output-format"]
        parser._option_string_actions["--output-format"] = fmt


def _workflow_arg(p: argparse.ArgumentParser) -> None:
    # Inside the function: --version and --help of other commands need no workflow module.
    # lazy: the CLI imports only what the command it runs needs
    from session_resume.core.workflow import BUILTINS, DEFAULT_WORKFLOW

    p.add_argument(
        "--workflow",
        metavar="NAME|PATH",
        help=f"workflow definition: {', '.join(BUILTINS)} or a YAML file (default: "
        f"the state's own `workflow`, then the project config, then {DEFAULT_WORKFLOW})",
    )
