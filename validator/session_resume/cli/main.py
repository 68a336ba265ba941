"""The `session-resume` command line: a thin shell over the library.

Exit codes: 0 valid, 1 invalid, 2 usage error (a bad option, a missing path, a broken
configuration or workflow: SR100, SR400-SR403, SR405), 3 internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from session_resume.cli.commands.common import (
    UsageError,
    config_for,
    diag_json,
    emit_json,
    print_diagnostics,
    resolve_path,
    root_of,
)
from session_resume.cli.parser import KNOWN, build_parser
from session_resume.core.codes import diag
from session_resume.reporters.text import SafeTextStream
from session_resume.services.errors import ServiceError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from session_resume.core.diagnostics import Diagnostic

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
__all__ = ["KNOWN", "build_parser", "main"]


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
                found = resolve_path(p, getattr(args, "root", None))
            # a quoted glob the tool expands itself is not missing when it matches
            if not os.path.lexists(found) and not _fresh_start(args, name, found):
                # lazy: discovery only for a path that does not exist
                from session_resume.storage.discovery import pattern_matches

                if not pattern_matches(found):
                    out.append(p)
    return out


def _fresh_start(args: argparse.Namespace, name: str, path: str) -> bool:
    """`resume` of a session directory still to create inside the repository: not missing,
    its answer is the fresh start (docs/spec.md §10.2)."""
    if getattr(args, "command", None) != "resume" or name != "dir":
        return False
    # lazy: only a resume of a directory that does not exist
    from session_resume.services.resume import creatable

    try:  # the repository the user stands in (or --root), never one found from the path
        root = root_of(getattr(args, "root", None), config_for(getattr(args, "root", None)))
    except (ServiceError, UsageError):
        return False
    return creatable(Path(os.path.abspath(path)), root)


def _refused(args: argparse.Namespace, diags: list[Diagnostic], message: str) -> bool:
    """A command that reports a refusal in its own output format (``set_defaults(
    on_refusal=...)``, as ``validate`` does) has written it: True."""
    on_refusal = getattr(args, "on_refusal", None)
    return bool(on_refusal is not None and on_refusal(args, diags, message))


# The options naming validate's output format, and how argparse lets them be shortened.
_FORMAT_OPTIONS = ("--format", "--output-format")


def wants_sarif(argv: list[str]) -> bool:
    """Whether ``argv`` asks for SARIF output (``--format sarif``, ``--output-format=sarif``,
    an abbreviation argparse accepts), anywhere before a ``--``: then every exit path,
    argparse's own usage errors too, writes a SARIF log (a caller uploads whatever is there)."""
    for i, arg in enumerate(argv):
        if arg == "--":
            return False
        name, eq, value = arg.partition("=")
        if len(name) < 4 or not any(o.startswith(name) for o in _FORMAT_OPTIONS):
            continue
        if (value if eq else (argv[i + 1] if i + 1 < len(argv) else "")) == "sarif":
            return True
    return False


def _sarif_refusal(message: str) -> None:
    """The SARIF log of a run refused before anything was checked: the invocation failed,
    ``message`` its notification (the same document `validate` writes for its refusals)."""
    # lazy: only a refused SARIF run renders here
    from session_resume.reporters import REPORTERS

    sys.stdout.write(REPORTERS["sarif"].render([], False, refused=message.strip() or "error"))
    sys.stdout.flush()


def _json_error(diags: list[Diagnostic], message: str = "") -> None:
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

        # lazy: the completers only when a shell asks for completions
        from session_resume.cli.commands.completion import attach

        parser = build_parser()
        attach(parser)  # --project, steps and checkpoints from the sessions on disk
        argcomplete.autocomplete(parser)
    sarif = wants_sarif(args_list)
    errors = io.StringIO() if sarif else None
    try:
        parser = build_parser(first if first in KNOWN else None)
        with contextlib.redirect_stderr(errors) if errors else contextlib.nullcontext():
            args = parser.parse_args(args_list)
        args.argv = args_list  # the command line as given, for the commands a refusal prints
    except SystemExit as exc:  # argparse: --help/--version exit 0, usage errors exit 2
        code = int(exc.code or 0)
        if errors is not None:
            told = errors.getvalue()
            sys.stderr.write(told)
            if code:  # a usage error still yields the SARIF log the caller uploads
                _sarif_refusal(told.strip().splitlines()[-1] if told.strip() else "usage error")
        return code
    except Exception as exc:  # noqa: BLE001 - a broken installation, not bad input
        message = f"SR900 internal error: {type(exc).__name__}: {exc}"
        sys.stderr.write(f"session-resume: {message}\n")
        if sarif:
            _sarif_refusal(message)
        return EXIT_INTERNAL
    stdout = sys.stdout
    with contextlib.suppress(AttributeError, ValueError):
        # a lone surrogate from a file (a JSON "\ud800" escape) has no UTF-8 form: printed as
        # the escape, in every format (in JSON output that is the same JSON escape again)
        stdout.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    if getattr(args, "format", None) in (None, "text"):
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
            raise ServiceError(
                [diag("SR100", "no such file or directory", file=p) for p in missing],
                exit_code=EXIT_USAGE,
            )
        result: int = args.func(args)
        return result
    except UsageError as exc:
        if not _refused(args, [], str(exc)) and as_json:
            _json_error([], str(exc))
        sys.stderr.write(f"session-resume: error: {exc}\n")
        return EXIT_USAGE
    except ServiceError as exc:
        # lazy: only a refusal prints suggested commands
        from session_resume.cli.commands.suggest import complete_diagnostics, naming_of

        diags = complete_diagnostics(exc.diagnostics, naming_of(args))
        why = "; ".join(f"{d.code} {d.file + ': ' if d.file else ''}{d.message}" for d in diags)
        if _refused(args, diags, why):
            pass  # the command's own refusal document (validate --format json|sarif)
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
            _refused(args, exc.diagnostics, "; ".join(d.message for d in exc.diagnostics))
            print_diagnostics(exc.diagnostics, sys.stderr)
            return EXIT_INVALID

        _refused(args, [], f"SR900 internal error: {type(exc).__name__}: {exc}")
        sys.stderr.write(
            f"session-resume: SR900 internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug; please report it with the command you ran.\n"
        )
        if os.environ.get("SESSION_RESUME_DEBUG"):
            traceback.print_exc()
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
