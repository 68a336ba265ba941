"""Helpers shared by the commands: config, clock, session directories, output."""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from session_resume.core.diagnostics import Diagnostic, FileReport
from session_resume.reporters.text import render_text
from session_resume.services.errors import ServiceError
from session_resume.storage.config import Config, ConfigError, load_config

TYPE_CHECKING = False  # typing is imported for the type checker only (cold start)
if TYPE_CHECKING:
    from typing import Any


class UsageError(Exception):
    """The command line itself is wrong (exit 2)."""


def terminal_columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` gives it (``COLUMNS``, else the
    terminal of standard output, else 80), without importing shutil (and its bz2 and lzma: a
    tenth of a cold command)."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, its width from :func:`terminal_columns`: argparse makes one for
    every ``add_argument`` (to check the metavar), and its own asks shutil each time."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            width = terminal_columns() - 2  # what argparse subtracts
        super().__init__(prog, indent_increment, max_help_position, width)


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser with :class:`HelpFormatter`; its subparsers are of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


def now_from(value: str | None) -> datetime:
    if value is None:
        return datetime.now(UTC)
    # lazy: the CLI imports only what the command it runs needs
    from session_resume.core.timeutil import parse_now

    try:
        return parse_now(value)
    except ValueError as exc:
        raise UsageError(f"--now: {exc}") from None


def config_for(root_arg: str | None) -> Config:
    try:
        return load_config(Path(root_arg) if root_arg else Path.cwd())
    except ConfigError as exc:
        raise ServiceError([exc.diagnostic], exit_code=2) from None


def root_of(root_arg: str | None, cfg: Config) -> Path:
    return Path(root_arg).resolve() if root_arg else cfg.root


def print_diagnostics(diags: list[Diagnostic], stream: Any = None, *, hints: bool = True) -> None:
    if not hints:
        # lazy: the CLI imports only what the command it runs needs
        from session_resume.records import replace

        diags = [replace(d, hint="") for d in diags]
    if diags:
        by_file: dict[str, list[Diagnostic]] = {}
        for d in diags:
            by_file.setdefault(d.file, []).append(d)
        text = render_text([FileReport(path=f, diagnostics=ds) for f, ds in by_file.items()], False)
        # drop the summary line: these are notes, not a validation verdict
        (stream or sys.stdout).write("\n".join(text.rstrip("\n").split("\n")[:-1]) + "\n")


def emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def diag_json(diags: list[Diagnostic]) -> list[dict[str, Any]]:
    return [d.to_json() for d in diags]


def relpath(p: str | os.PathLike[str]) -> str:
    try:
        return os.path.relpath(p)
    except ValueError:
        return os.fspath(p)
