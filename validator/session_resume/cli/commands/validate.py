"""`session-resume validate`: check state files and report in one of the formats of
:data:`session_resume.reporters.REPORTERS` (exit 0 valid, 1 invalid, 2 usage error)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from session_resume.cli.commands.common import (
    UsageError,
    config_near,
    now_from,
    relpath,
    resolve_path,
    session_of_project,
)
from session_resume.cli.parser import Command
from session_resume.core.diagnostics import Diagnostic, FileReport
from session_resume.reporters import REPORTERS
from session_resume.services.errors import ServiceError

# lazy imports: the CLI imports only what the command it runs needs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from session_resume.core.validation import ValidateOptions

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH|DIR",
        help="state files, directories to search for 00-session-state.json (git-tracked "
        "files only, so .gitignore holds), glob patterns, or - for standard input; a "
        "relative path is looked up under the repository root first, then the current "
        "directory",
    )
    p.add_argument(
        "--project",
        metavar="NAME",
        help="the session of project NAME: the workflow's session_dir pattern (default "
        "agent-output/NAME) under the repository root",
    )
    _workflow_arg(p)
    p.add_argument("--strict", action="store_true", help="warnings also make a file invalid")
    p.add_argument(
        "--check-artifacts", action="store_true", help="artifacts listed in the state must exist"
    )
    p.add_argument(
        "--format",
        "--output-format",
        choices=tuple(REPORTERS),
        default="text",
        help="output format (default: text); with sarif, every run writes a SARIF log, a "
        "usage error too (as a notification of a failed invocation)",
    )
    p.add_argument(
        "--select",
        action="append",
        metavar="CODES",
        help="comma-separated list of codes or prefixes to report (`SR3`, `SR301`, `ALL`); "
        "replaces the config's `select` (read errors, SR1xx, are always reported)",
    )
    p.add_argument(
        "--ignore",
        action="append",
        metavar="CODES",
        help="comma-separated list of codes or prefixes not to report; an ignored error no "
        "longer fails the run; adds to the config's `ignore`",
    )
    p.add_argument(
        "--exit-zero",
        action="store_true",
        help='exit with status code "0", even upon detecting invalid files',
    )
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="text format: print the findings only, no summary line (nothing when all is valid)",
    )
    p.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text output: auto (a terminal, unless NO_COLOR is set; FORCE_COLOR "
        "forces it), always or never",
    )
    p.add_argument(
        "--stdin-filename",
        metavar="NAME",
        help="with PATH `-` (the document on standard input): the name used in messages",
    )
    p.add_argument(
        "--now",
        metavar="TIMESTAMP",
        help="the current time for the future-timestamp rule (RFC 3339; default: clock)",
    )
    p.add_argument(
        "--max-size",
        type=int,
        metavar="BYTES",
        help="refuse files larger than this (default: 8 MiB or the config's max_size)",
    )
    p.add_argument(
        "--root",
        metavar="DIR",
        help="repository root that artifact paths are relative to (default: found "
        "from .session-resume.yaml, pyproject.toml or .git)",
    )
    p.add_argument(
        "--docs-url",
        metavar="URL",
        help="base URL of the docs, for SARIF's helpUri (default: the config's docs_url, "
        "else the repository's docs/ on GitHub)",
    )
    p.set_defaults(func=run, on_refusal=refused)


COMMANDS = (
    Command(
        "validate",
        order=0,
        help="check state files against their schema, the semantic rules and the workflow",
        description="Check state files: the schema of their own version, the "
        "semantic rules and the workflow's checkpoint and budget rules. With no PATH, the state "
        "files of the configured session root are checked.",
        arguments=_arguments,
    ),
)


def _workflow_arg(p: argparse.ArgumentParser) -> None:
    # Inside the function: --version and --help of other commands need no workflow module.
    from session_resume.core.workflow import BUILTINS, DEFAULT_WORKFLOW

    p.add_argument(
        "--workflow",
        metavar="NAME|PATH",
        help=f"workflow definition: {', '.join(BUILTINS)} or a YAML file (default: "
        f"the state's own `workflow`, then the project config, then {DEFAULT_WORKFLOW})",
    )


def run(args: argparse.Namespace) -> int:
    from session_resume.services.validation import validate
    from session_resume.storage.config import ConfigError, load_config

    if args.project:
        cfg, root, session_dir = session_of_project(args)
        paths = [relpath(session_dir)]
    else:
        # the paths by the one rule (repository root first, then the current directory), and
        # the repository of the first one, not of the current directory (docs/config.md)
        paths = [resolve_path(p, args.root) if p != "-" else p for p in args.paths]
        start = next((p for p in paths if p != "-" and os.path.lexists(p)), None)
        try:
            cfg = config_near(start, args.root) if start else load_config(args.root or None)
        except ConfigError as exc:
            raise ServiceError([exc.diagnostic], exit_code=EXIT_USAGE) from None
        root = Path(args.root).resolve() if args.root else cfg.root
    if not paths:
        try:
            session_root = cfg.session_root_dir(root)
        except ConfigError as exc:
            raise ServiceError([exc.diagnostic], exit_code=EXIT_USAGE) from None
        if not session_root.is_dir():
            from session_resume.core.codes import diag

            raise ServiceError(
                [
                    diag(
                        "SR100",
                        f"no PATH given and the session root {relpath(session_root)} does "
                        "not exist",
                        file=relpath(session_root),
                        hint="Pass the state files or directories to check, or create a "
                        "session first: `session-resume init PROJECT`.",
                    )
                ],
                exit_code=EXIT_USAGE,
            )
        paths = [relpath(session_root)]
    if "-" in paths:
        return _validate_stdin(args, cfg, root, paths)
    # lazy: discovery only when paths are checked
    from session_resume.storage.discovery import pattern_matches

    missing = [p for p in paths if not os.path.lexists(p) and not pattern_matches(p, root)]
    if missing:
        from session_resume.core.codes import diag

        raise ServiceError(
            [diag("SR100", "no such file or directory", file=p) for p in missing],
            exit_code=EXIT_USAGE,
        )
    opts = _options(args, cfg, root, args.max_size or cfg.max_size, args.check_artifacts)
    if args.workflow:
        from session_resume.core.workflow import WorkflowError, load_workflow

        try:
            load_workflow(args.workflow)
        except WorkflowError as exc:
            raise ServiceError(exc.diagnostics, exit_code=EXIT_USAGE) from None
    docs_url = _docs_url(args.docs_url) if args.docs_url else cfg.docs_url
    args.selection = _selection(args, cfg)
    from session_resume.terminal import progress

    show, close = progress("validate", enabled=REPORTERS[args.format].terminal)
    skipped: list[str] = []
    try:
        reports = validate(paths, opts, progress=show, skipped=skipped)
    finally:
        close()
    if skipped and not args.quiet:
        _note_skipped(skipped)
    if reports and all(r.codes == ["SR101"] for r in reports):
        # nothing to check at all: the command line named no state file (a usage error,
        # exit 2, as a missing path is), not "1 invalid"
        raise ServiceError([d for r in reports for d in r.diagnostics], exit_code=EXIT_USAGE)
    return _report(args, reports, root, docs_url)


def _note_skipped(skipped: list[str]) -> None:
    """Say on standard error how many state files ``.gitignore`` kept out of the search, and
    how to check one (naming its directory checks it whatever git ignores)."""
    first = relpath(os.path.dirname(skipped[0]) or ".")
    n = len(skipped)
    sys.stderr.write(
        f"note: {n} git-ignored state file{'s' if n != 1 else ''} not checked (the search "
        f"of a directory honours .gitignore); to check one, name its session directory: "
        f"`session-resume validate {shlex.quote(first)}`\n"
    )


def _options(
    args: argparse.Namespace, cfg: Any, root: Path, max_size: int, check_artifacts: bool
) -> ValidateOptions:
    """What the validator needs from the command line and the config; positions (line and
    column) only for a format that prints them."""
    from session_resume.core.validation import ValidateOptions

    return ValidateOptions(
        workflow=args.workflow,
        default_workflow=cfg.workflow or ValidateOptions.default_workflow,
        strict=args.strict,
        check_artifacts=check_artifacts,
        now=now_from(args.now),
        skew_seconds=cfg.clock_skew_seconds,
        max_size=max_size,
        root=root,
        positions=REPORTERS[args.format].needs_positions,
    )


def _docs_url(value: str) -> str:
    from session_resume.storage.config import absolute_url

    if not absolute_url(value):
        raise UsageError(f"--docs-url: {value!r} is not an absolute http(s) URL")
    return value


def _validate_stdin(args: argparse.Namespace, cfg: Any, root: Path, paths: list[str]) -> int:
    """``validate -``: one document on standard input, read up to the size limit."""
    from session_resume.core.codes import diag
    from session_resume.reporters.text import render_text
    from session_resume.services.validation import validate_bytes

    if paths != ["-"]:
        raise UsageError("`-` (standard input) cannot be combined with other paths")
    name = args.stdin_filename or "<stdin>"
    limit = args.max_size or cfg.max_size
    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        too_big = diag("SR112", f"standard input is larger than {limit} bytes", file=name)
        sys.stderr.write(render_text([FileReport(path=name, diagnostics=[too_big])], False))
        return EXIT_INVALID
    opts = _options(args, cfg, root, limit, check_artifacts=False)  # stdin: no artifacts checked
    docs_url = _docs_url(args.docs_url) if args.docs_url else cfg.docs_url
    args.selection = _selection(args, cfg)
    return _report(args, [validate_bytes(data, name, opts)], root, docs_url)


def _report(
    args: argparse.Namespace, reports: list[FileReport], root: Path, docs_url: str | None
) -> int:
    reporter = REPORTERS[args.format]
    selection = getattr(args, "selection", None)
    if selection is not None and not selection.everything:
        # lazy: only a run that selects or ignores codes needs it
        from session_resume.core.selection import apply

        apply(reports, selection, {r.path: _relative(r.path, root) for r in reports})
    _complete_suggestions(args, reports)
    text = reporter.render(reports, args.strict, root=root, docs_url=docs_url)
    if reporter.terminal:
        from session_resume.terminal import colorize, use_color

        if args.quiet:
            text = "".join(text.splitlines(keepends=True)[:-1])  # the findings, no summary
        if use_color(args.color, sys.stdout):
            # the reporter cleaned every value; the escapes colorize adds are our own
            text = colorize(text)
            getattr(sys.stdout, "write_styled", sys.stdout.write)(text)
        else:
            sys.stdout.write(text)
    else:
        sys.stdout.write(text)
    if reporter.step_summary and os.environ.get("GITHUB_STEP_SUMMARY"):
        from session_resume.reporters.github import step_summary

        try:
            with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as fh:
                fh.write(step_summary(reports, args.strict))
        except OSError:
            pass
    if args.exit_zero:
        return EXIT_OK
    return EXIT_OK if all(r.ok(args.strict) for r in reports) else EXIT_INVALID


def refused(args: argparse.Namespace, diags: list[Diagnostic], message: str) -> bool:
    """``validate`` refused before it checked anything (exit 2): in a format with a
    ``refusal`` (json, sarif) still a report of its own format, valid against its schema,
    that says so (the JSON report's ``error``; SARIF's invocation ``executionSuccessful:
    false`` with a notification). False: the caller reports the refusal its own way."""
    reporter = REPORTERS.get(getattr(args, "format", None) or "")
    if reporter is None or reporter.refusal is None:
        return False
    reports = [FileReport(path=d.file, diagnostics=[d]) for d in diags]
    root = Path(args.root).resolve() if getattr(args, "root", None) else None
    refusal = message or "usage error"
    sys.stdout.write(reporter.render(reports, args.strict, root=root, refused=refusal))
    return True


def _codes_arg(values: list[str] | None, option: str) -> tuple[str, ...] | None:
    """``--select``/``--ignore``: comma-separated codes or prefixes, the option repeatable."""
    if values is None:
        return None
    # lazy: only a run that selects or ignores codes needs it
    from session_resume.storage.config import CODE_SELECTOR

    codes = tuple(c.strip() for v in values for c in v.split(",") if c.strip())
    bad = [c for c in codes if CODE_SELECTOR.fullmatch(c) is None]
    if bad:
        raise UsageError(
            f"{option}: {bad[0]!r} is not a code or prefix (like SR3 or SR301, or ALL)"
        )
    return codes


def _selection(args: argparse.Namespace, cfg: Any) -> Any:
    """The codes this run reports: --select replaces the config's `select`, --ignore adds to
    its `ignore` (ruff's precedence); `per-file-ignores` from the config."""
    # lazy: only validate needs it
    from session_resume.core.selection import Selection

    select = _codes_arg(args.select, "--select")
    ignore = _codes_arg(args.ignore, "--ignore") or ()
    _note_unignorable(ignore, "--ignore")
    _note_unignorable(cfg.ignore, "ignore in the configuration")
    return Selection(
        select=select if select is not None else cfg.select,
        ignore=(*cfg.ignore, *ignore),
        per_file_ignores=cfg.per_file_ignores,
    )


def _note_unignorable(selectors: Any, where: str) -> None:
    """A notice on standard error for the read errors (SR1xx) ``selectors`` name: they are
    reported whatever is ignored (a file that cannot be read is never valid), so naming them
    changes nothing, and the user should know it did not."""
    # lazy: as every module of the selection, only when validate runs
    from session_resume.core.selection import ALWAYS

    named = [s for s in selectors or () if s.startswith(ALWAYS) or s in ("SR", "ALL", "S")]
    if named:
        sys.stderr.write(
            f"note: {where} {', '.join(named)}: read errors ({ALWAYS}xx) cannot be ignored; "
            "they are still reported\n"
        )


def _relative(path: str, root: Path) -> str | None:
    try:
        return Path(os.path.realpath(path)).relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def _complete_suggestions(args: argparse.Namespace, reports: list[FileReport]) -> None:
    """The commands hints name, runnable as printed: each file's session directory for a
    ``DIR`` placeholder, and the ``--root`` this call was given."""
    if not any("session-resume " in d.message + d.hint for r in reports for d in r.diagnostics):
        return
    # lazy: only suggestions need it
    from session_resume.cli.commands.suggest import Naming, complete_diagnostics

    # standard input without --stdin-filename is no file of any session directory: its
    # hints keep their DIR (the current directory is not the piped file's session)
    piped = getattr(args, "paths", None) == ["-"] and not getattr(args, "stdin_filename", None)
    for r in reports:
        sd = os.path.dirname(r.path) or "."
        named = not piped and os.path.isdir(sd)
        naming = Naming(dir=sd if named else None, root=args.root)
        r.diagnostics = complete_diagnostics(r.diagnostics, naming)
