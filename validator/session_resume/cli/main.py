"""The `session-resume` command line: a thin shell over the library.

Exit codes: 0 valid, 1 invalid, 2 usage error, 3 internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from session_resume.cli.commands.common import (
    UsageError,
    config_near,
    relpath,
    resolve_path,
    session_of,
)
from session_resume.cli.parser import COMMANDS, KNOWN, build_parser
from session_resume.core.diagnostics import Diagnostic, FileReport
from session_resume.services.errors import ServiceError

TYPE_CHECKING = False  # typing is imported for the type checker only (cold start)
if TYPE_CHECKING:
    from typing import Any

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
__all__ = ["COMMANDS", "KNOWN", "build_parser", "main"]


def _now(value: str | None) -> datetime:
    if value is None:
        return datetime.now(UTC)
    # lazy: the CLI imports only what the command it runs needs
    from session_resume.core.timeutil import parse_now

    try:
        return parse_now(value)
    except ValueError as exc:
        raise UsageError(f"--now: {exc}") from None


def _docs_url(value: str) -> str:
    # lazy: the CLI imports only what the command it runs needs
    from session_resume.storage.config import absolute_url

    if not absolute_url(value):
        raise UsageError(f"--docs-url: {value!r} is not an absolute http(s) URL")
    return value


def cmd_validate(args: argparse.Namespace) -> int:
    # lazy: the CLI imports only what the command it runs needs
    from session_resume.core.validation import ValidateOptions

    # lazy: the CLI imports only what the command it runs needs
    # lazy: the CLI imports only what the command it runs needs
    from session_resume.services.validation import validate

    # lazy: the CLI imports only what the command it runs needs
    from session_resume.storage.config import ConfigError, load_config

    if args.project:
        if args.paths:
            raise UsageError("give PATH|DIR or --project NAME, not both")
        cfg, root, session_dir = session_of(args, workflow=args.workflow)
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
            # lazy: the CLI imports only what the command it runs needs
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
        paths = [str(session_root)]
    if "-" in paths:
        return _validate_stdin(args, cfg, root, paths)
    # lazy: discovery only when paths are checked
    from session_resume.storage.discovery import pattern_matches

    missing = [p for p in paths if not os.path.lexists(p) and not pattern_matches(p, root)]
    if missing:
        # lazy: the CLI imports only what the command it runs needs
        from session_resume.core.codes import diag

        raise ServiceError(
            [diag("SR100", "no such file or directory", file=p) for p in missing],
            exit_code=EXIT_USAGE,
        )
    opts = ValidateOptions(
        workflow=args.workflow,
        default_workflow=cfg.workflow or ValidateOptions.default_workflow,
        strict=args.strict,
        check_artifacts=args.check_artifacts,
        now=_now(args.now),
        skew_seconds=cfg.clock_skew_seconds,
        max_size=args.max_size or cfg.max_size,
        root=root,
        positions=args.format in ("sarif", "github"),
    )
    if args.workflow:
        # lazy: the CLI imports only what the command it runs needs
        from session_resume.core.workflow import WorkflowError, load_workflow

        try:
            load_workflow(args.workflow)
        except WorkflowError as exc:
            raise ServiceError(exc.diagnostics, exit_code=EXIT_USAGE) from None
    docs_url = _docs_url(args.docs_url) if args.docs_url else cfg.docs_url
    args.selection = _selection(args, cfg)
    # lazy: the CLI imports only what the command it runs needs
    from session_resume.terminal import progress

    show, close = progress("validate", enabled=args.format == "text")
    try:
        reports = validate(paths, opts, progress=show)
    finally:
        close()
    if reports and all(r.codes == ["SR101"] for r in reports):
        # nothing to check at all: the command line named no state file (a usage error,
        # exit 2, as a missing path is), not "1 invalid"
        raise ServiceError([d for r in reports for d in r.diagnostics], exit_code=EXIT_USAGE)
    return _report(args, reports, root, docs_url)


def _validate_stdin(args: argparse.Namespace, cfg: Any, root: Path, paths: list[str]) -> int:
    """``validate -``: one document on standard input, read up to the size limit."""
    # lazy: the CLI imports only what the command it runs needs
    from session_resume.core.codes import diag

    # lazy: the CLI imports only what the command it runs needs
    from session_resume.core.validation import ValidateOptions

    # lazy: the CLI imports only what the command it runs needs
    from session_resume.reporters.text import render_text

    # lazy: the CLI imports only what the command it runs needs
    from session_resume.services.validation import validate_bytes

    if paths != ["-"]:
        raise UsageError("`-` (standard input) cannot be combined with other paths")
    name = args.stdin_filename or "<stdin>"
    limit = args.max_size or cfg.max_size
    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        sys.stderr.write(
            render_text(
                [_one(diag("SR112", f"standard input is larger than {limit} bytes", file=name))],
                False,
            )
        )
        return EXIT_INVALID
    opts = ValidateOptions(
        workflow=args.workflow,
        default_workflow=cfg.workflow or ValidateOptions.default_workflow,
        strict=args.strict,
        now=_now(args.now),
        skew_seconds=cfg.clock_skew_seconds,
        max_size=limit,
        root=root,
        positions=args.format in ("sarif", "github"),
    )
    docs_url = _docs_url(args.docs_url) if args.docs_url else cfg.docs_url
    args.selection = _selection(args, cfg)
    return _report(args, [validate_bytes(data, name, opts)], root, docs_url)


def _report(
    args: argparse.Namespace, reports: list[FileReport], root: Path, docs_url: str | None
) -> int:
    # lazy: the CLI imports only what the command it runs needs
    from session_resume.reporters import renderer

    selection = getattr(args, "selection", None)
    if selection is not None and not selection.everything:
        # lazy: only a run that selects or ignores codes needs it
        from session_resume.core.selection import apply

        apply(reports, selection, {r.path: _relative(r.path, root) for r in reports})
    _complete_suggestions(args, reports)
    if args.format == "sarif":
        # lazy: the CLI imports only what the command it runs needs
        from session_resume.reporters.sarif import render_sarif

        sys.stdout.write(render_sarif(reports, args.strict, root=root, docs_url=docs_url))
    elif args.format == "text":
        # lazy: the CLI imports only what the command it runs needs
        from session_resume.terminal import colorize, use_color

        text = renderer("text")(reports, args.strict)
        if args.quiet:
            text = "".join(text.splitlines(keepends=True)[:-1])  # the findings, no summary
        if use_color(args.color, sys.stdout):
            # the reporter cleaned every value; the escapes colorize adds are our own
            getattr(sys.stdout, "write_styled", sys.stdout.write)(colorize(text))
        else:
            sys.stdout.write(text)
    else:
        sys.stdout.write(renderer(args.format)(reports, args.strict))
    if args.format == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        # lazy: the CLI imports only what the command it runs needs
        from session_resume.reporters.github import step_summary

        try:
            with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as fh:
                fh.write(step_summary(reports, args.strict))
        except OSError:
            pass
    if args.exit_zero:
        return EXIT_OK
    return EXIT_OK if all(r.ok(args.strict) for r in reports) else EXIT_INVALID


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
    return Selection(
        select=select if select is not None else cfg.select,
        ignore=(*cfg.ignore, *ignore),
        per_file_ignores=cfg.per_file_ignores,
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

    for r in reports:
        sd = os.path.dirname(r.path) or "."
        naming = Naming(dir=sd if os.path.isdir(sd) else None, root=args.root)
        r.diagnostics = complete_diagnostics(r.diagnostics, naming)


def _one(d: Diagnostic) -> FileReport:
    return FileReport(path=d.file, diagnostics=[d])


# Arguments naming paths that must exist (every command but `init`, which creates its session
# directory, and output paths); a missing one is SR100, exit 2, in every command.
_PATH_ARGS = ("paths", "dir", "src", "session_dir", "file")
_CREATES = frozenset({"init"})


# Of those, the ones naming a session, looked up under the repository root first, then the
# current directory (docs/config.md).
_SESSION_ARGS = ("paths", "dir", "session_dir")


def _missing_paths(args: argparse.Namespace) -> list[str]:
    if getattr(args, "command", None) in _CREATES:
        return []
    out: list[str] = []
    for name in _PATH_ARGS:
        value = getattr(args, name, None)
        for p in value if isinstance(value, list) else [value]:
            if not isinstance(p, str) or not p or p == "-":
                continue
            found = p
            if name in _SESSION_ARGS:
                # lazy: the CLI imports only what the command it runs needs
                from session_resume.cli.commands.common import resolve_path

                found = resolve_path(p, getattr(args, "root", None))
            # a quoted glob the tool expands itself is not missing when it matches
            if not os.path.lexists(found):
                # lazy: discovery only for a path that does not exist
                from session_resume.storage.discovery import pattern_matches

                if not pattern_matches(p):
                    out.append(p)
    return out


def _usage_document(args: argparse.Namespace, diags: list[Diagnostic], message: str) -> bool:
    """``validate --format json|sarif`` refused before it checked anything (exit 2): still a
    report of its own format, valid against its schema, that says so (the JSON report's
    ``error``; SARIF's invocation ``executionSuccessful: false`` with a notification)."""
    fmt = getattr(args, "format", None)
    if getattr(args, "command", None) != "validate" or fmt not in ("json", "sarif"):
        return False
    reports = [FileReport(path=d.file, diagnostics=[d]) for d in diags]
    if fmt == "json":
        # lazy: only a refused JSON run writes JSON here
        import json

        # lazy: the CLI imports only what the command it runs needs
        from session_resume.reporters.json import report_dict

        doc = report_dict(reports, args.strict, error=message or "usage error")
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        # lazy: the CLI imports only what the command it runs needs
        from session_resume.reporters.sarif import render_sarif

        root = Path(args.root).resolve() if getattr(args, "root", None) else None
        sys.stdout.write(render_sarif(reports, args.strict, root=root, failure=message))
    return True


def _json_error(diags: list[Diagnostic], message: str = "") -> None:
    # lazy: the CLI imports only what the command it runs needs
    from session_resume.cli.commands.common import diag_json, emit_json

    doc: dict[str, object] = {"ok": False, "diagnostics": diag_json(diags)}
    if message:
        doc["error"] = message
    emit_json(doc)


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in args_list if not a.startswith("-")), None)
    if args_list[:1] == ["hook"] and not {"-h", "--help"} & set(args_list):
        # An agent host's hook skips the parser: a usage error's exit 2 would block the host.
        # lazy: a hook imports only what its event needs (the host waits)
        from session_resume.cli.commands.hook import run_hook_argv

        return run_hook_argv(args_list[1:])
    if "_ARGCOMPLETE" in os.environ:  # a shell asks for completions (argcomplete's protocol)
        # lazy: argcomplete only when a shell asks for completions
        import argcomplete

        argcomplete.autocomplete(build_parser())
    try:
        parser = build_parser(first if first in KNOWN else None)
        args = parser.parse_args(args_list)
        args.argv_ = args_list  # the command as typed, for "run it again with ..." (suggest)
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
        # lazy: the CLI imports only what the command it runs needs
        from session_resume.reporters.text import SafeTextStream

        sys.stdout = SafeTextStream(stdout)
    try:
        return _run(args)
    finally:
        sys.stdout = stdout


def _run(args: argparse.Namespace) -> int:
    as_json = getattr(args, "format", None) == "json"
    try:
        missing = _missing_paths(args)
        if missing:
            # lazy: the CLI imports only what the command it runs needs
            from session_resume.core.codes import diag

            raise ServiceError(
                [diag("SR100", "no such file or directory", file=p) for p in missing],
                exit_code=EXIT_USAGE,
            )
        result: int = args.func(args)
        return result
    except UsageError as exc:
        if not _usage_document(args, [], str(exc)) and as_json:
            _json_error([], str(exc))
        sys.stderr.write(f"session-resume: error: {exc}\n")
        return EXIT_USAGE
    except ServiceError as exc:
        # lazy: the CLI imports only what the command it runs needs
        from session_resume.cli.commands.common import print_diagnostics

        # lazy: only a refusal prints suggested commands
        from session_resume.cli.commands.suggest import complete_diagnostics, naming_of

        diags = complete_diagnostics(exc.diagnostics, naming_of(args))
        why = "; ".join(f"{d.code} {d.file + ': ' if d.file else ''}{d.message}" for d in diags)
        if _usage_document(args, diags, why):
            pass  # validate --format json|sarif: its own report, marked as refused
        elif as_json:  # --format json: always a JSON document on stdout
            _json_error(diags)
        print_diagnostics(diags, sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - the last line of defence: never a traceback
        # lazy: only the last-resort handler needs it
        import traceback

        # lazy: the CLI imports only what the command it runs needs
        from session_resume.storage.store import StoreError

        if isinstance(exc, StoreError):  # a storage refusal no service translated: coded
            # lazy: the CLI imports only what the command it runs needs
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
