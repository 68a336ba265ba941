"""The `session-resume` command line: a thin shell over the library.

Exit codes: 0 valid, 1 invalid, 2 usage error, 3 internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from session_resume import __version__
from session_resume.cli.commands.common import UsageError
from session_resume.core.diagnostics import Diagnostic, FileReport
from session_resume.reporters import NAMES as REPORTERS
from session_resume.services.errors import ServiceError

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


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
)
KNOWN = frozenset({"validate"} | {n for _, names in COMMANDS for n in names})


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with ``only``, just that command's subparser (faster)."""
    parser = argparse.ArgumentParser(
        prog="session-resume",
        description="Validate, migrate, recover and resume agent session state files.",
        epilog="Exit codes: 0 valid, 1 invalid, 2 usage error, 3 internal error. "
        "Every diagnostic code has a page under docs/codes/.",
    )
    parser.add_argument("--version", action="version", version=f"session-resume {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

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
        help="state files, or directories to search for 00-session-state.json",
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
    v.set_defaults(func=cmd_validate)

    for module, names in COMMANDS:
        if only is None or only in names:
            register = importlib.import_module(module)
            add = getattr(register, "add_parsers", None) or register.add_parser
            add(sub)
    return parser


def _workflow_arg(p: argparse.ArgumentParser) -> None:
    # Inside the function: --version and --help of other commands need no workflow module.
    from session_resume.core.workflow import BUILTINS, DEFAULT_WORKFLOW

    p.add_argument(
        "--workflow",
        metavar="NAME|PATH",
        help=f"workflow definition: {', '.join(BUILTINS)} or a YAML file (default: "
        f"the state's own `workflow`, then the project config, then {DEFAULT_WORKFLOW})",
    )


def _now(value: str | None) -> datetime:
    if value is None:
        return datetime.now(UTC)
    from session_resume.core.timeutil import parse_now

    try:
        return parse_now(value)
    except ValueError as exc:
        raise UsageError(f"--now: {exc}") from None


def cmd_validate(args: argparse.Namespace) -> int:
    from session_resume.core.validation import ValidateOptions
    from session_resume.reporters import renderer
    from session_resume.reporters.text import render_text
    from session_resume.services.validation import validate
    from session_resume.storage.config import ConfigError, load_config

    start = Path(args.root) if args.root else Path.cwd()
    try:
        cfg = load_config(start)
    except ConfigError as exc:
        sys.stderr.write(render_text([_one(exc.diagnostic)], False))
        return EXIT_USAGE
    root = Path(args.root).resolve() if args.root else cfg.root
    paths = args.paths
    if not paths:
        session_root = root / cfg.session_root
        if not session_root.is_dir():
            sys.stderr.write(
                f"session-resume: no PATH given and the session root "
                f"{session_root} does not exist\n"
            )
            return EXIT_USAGE
        paths = [str(session_root)]
    missing = [p for p in paths if not os.path.lexists(p)]
    if missing:
        from session_resume.core.codes import diag

        for p in missing:
            sys.stderr.write(
                render_text([_one(diag("SR100", "no such file or directory", file=p))], False)
            )
        return EXIT_USAGE
    opts = ValidateOptions(
        workflow=args.workflow,
        default_workflow=cfg.workflow or ValidateOptions.default_workflow,
        strict=args.strict,
        check_artifacts=args.check_artifacts,
        now=_now(args.now),
        skew_seconds=cfg.clock_skew_seconds,
        max_size=args.max_size or cfg.max_size,
        root=root,
    )
    if args.workflow:
        from session_resume.core.workflow import WorkflowError, load_workflow

        try:
            load_workflow(args.workflow)
        except WorkflowError as exc:
            from session_resume.core.diagnostics import FileReport

            sys.stderr.write(
                render_text([FileReport(path=args.workflow, diagnostics=exc.diagnostics)], False)
            )
            return EXIT_USAGE
    reports = validate(paths, opts)
    sys.stdout.write(renderer(args.format)(reports, args.strict))
    if args.format == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        from session_resume.reporters.github import step_summary

        try:
            with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as fh:
                fh.write(step_summary(reports, args.strict))
        except OSError:
            pass
    return EXIT_OK if all(r.ok(args.strict) for r in reports) else EXIT_INVALID


def _one(d: Diagnostic) -> FileReport:
    return FileReport(path=d.file, diagnostics=[d])


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in args_list if not a.startswith("-")), None)
    try:
        parser = build_parser(first if first in KNOWN else None)
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # argparse: --help/--version exit 0, usage errors exit 2
        return int(exc.code or 0)
    except Exception as exc:  # noqa: BLE001 - a broken installation, not bad input
        sys.stderr.write(f"session-resume: SR900 internal error: {type(exc).__name__}: {exc}\n")
        return EXIT_INTERNAL
    stdout = sys.stdout
    with contextlib.suppress(AttributeError, ValueError):
        # a lone surrogate from a file (a JSON "\ud800" escape) has no UTF-8 form: printed as
        # the escape, in every format (in JSON output that is the same JSON escape again)
        stdout.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    if getattr(args, "format", None) in (None, "text"):
        from session_resume.reporters.text import SafeTextStream

        sys.stdout = SafeTextStream(stdout)
    try:
        return _run(args)
    finally:
        sys.stdout = stdout


def _run(args: argparse.Namespace) -> int:
    try:
        result: int = args.func(args)
        return result
    except UsageError as exc:
        sys.stderr.write(f"session-resume: error: {exc}\n")
        return EXIT_USAGE
    except ServiceError as exc:
        from session_resume.cli.commands.common import print_diagnostics

        print_diagnostics(exc.diagnostics, sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - the last line of defence: never a traceback
        import traceback

        from session_resume.storage.store import StoreError

        if isinstance(exc, StoreError):  # a storage refusal no service translated: coded
            from session_resume.cli.commands.common import print_diagnostics

            print_diagnostics(exc.diagnostics, sys.stderr)
            return EXIT_INVALID

        sys.stderr.write(
            f"session-resume: SR900 internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug; please report it with the command you ran.\n"
        )
        if os.environ.get("SESSION_RESUME_DEBUG"):
            traceback.print_exc()
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
