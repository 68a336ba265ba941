"""Helpers shared by the commands: config, clock, session directories, output."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from datetime import UTC, datetime
from pathlib import Path

from session_resume.core.diagnostics import Diagnostic, FileReport
from session_resume.records import replace
from session_resume.reporters.text import render_text
from session_resume.services.errors import ServiceError
from session_resume.storage.config import CONFIG_FILE as CONFIG_NAME
from session_resume.storage.config import Config, ConfigError, find_root, load_config

# lazy imports: the CLI imports only what the command it runs needs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

    from session_resume.services.context import Reading


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


def _store(option_strings: list[str], dest: str, **kwargs: Any) -> argparse.Action:
    """argparse's ``store`` action; a ``--format`` option also answers to ``--output-format``
    (the name ruff and check-jsonschema use)."""
    if "--format" in option_strings and "--output-format" not in option_strings:
        option_strings = [*option_strings, "--output-format"]
    return argparse._StoreAction(option_strings, dest, **kwargs)


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser with :class:`HelpFormatter`; its subparsers are of this class too.
    Its ``store`` action (argparse's default, registered through ``register``, so argument
    groups and ``parents=`` parsers get it too) names every ``--format`` also
    ``--output-format``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        # a description made only when the help is shown (from what building the parser
        # must not import: `mcp` lists the server's tools)
        self.lazy_description: Callable[[], str] | None = kwargs.pop("lazy_description", None)
        super().__init__(*args, **kwargs)
        self.register("action", None, _store)
        self.register("action", "store", _store)

    def format_help(self) -> str:
        if self.lazy_description is not None:
            self.description = self.lazy_description()
        return super().format_help()

    def error(self, message: str) -> NoReturn:
        """argparse's usage error, with the nearest command or option for a mistyped one
        (`valdate`: did you mean `validate`?)."""
        super().error(message + did_you_mean(self, message))


_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)'")
_UNRECOGNIZED = re.compile(r"unrecognized arguments: (.*)")


def did_you_mean(parser: argparse.ArgumentParser, message: str) -> str:
    """The sentence naming the nearest command (an invalid choice of a subcommand) or option
    (an unrecognized ``--option``) of ``parser`` and its subcommands; "" when none is near."""
    # lazy: difflib only for a usage error
    import difflib

    choices: list[str] = []
    options: list[str] = []
    stack = [parser]
    while stack:
        p = stack.pop()
        options += [o for o in p._option_string_actions if o.startswith("--")]
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                choices += list(a.choices)
                stack += list(a.choices.values())
    m = _INVALID_CHOICE.search(message)
    if m:
        near = difflib.get_close_matches(m.group(1), choices, n=1)
        return f"; did you mean `{near[0]}`?" if near else ""
    m = _UNRECOGNIZED.search(message)
    if m:
        found = []
        for word in m.group(1).split():
            if word.startswith("--"):
                name = word.split("=", 1)[0]
                near = difflib.get_close_matches(name, sorted(set(options)), n=1)
                if near:
                    found.append(f"`{near[0]}` for `{name}`")
        return f"; did you mean {', '.join(found)}?" if found else ""
    return ""


def now_from(value: str | None) -> datetime:
    if value is None:
        return datetime.now(UTC)
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
    return Path(os.path.abspath(root_arg)) if root_arg else cfg.root


# --- naming a session: one rule for every command (docs/config.md) ------------------------
#
# A session is named by a directory (or its state file) or by `--project NAME`. A relative
# directory is looked up under the repository root first, then under the current directory
# (one spelled `.`, `./…` or `../…` is the current directory's); `--project NAME` is the
# session_dir pattern under the root of the workflow `--workflow` or the configuration names;
# when neither names one, of the built-in workflow whose directory holds the session (two:
# SR185; none: the default's). The repository root and the configuration
# are then found from the session directory upwards (not from the current directory), unless
# `--root` names the root.

PROJECT_HELP = (
    "the session of project NAME: the workflow's session_dir pattern (default "
    "agent-output/NAME) under the repository root; with no workflow configured, the "
    "built-in workflow's directory that holds it (e.g. memory/NAME)"
)
DIR_HELP = (
    "the session directory (or its state file); a relative one is looked up under the "
    "repository root first, then the current directory"
)


def _explicitly_relative(arg: str) -> bool:
    return arg in (".", "..") or arg.startswith(("./", "../", ".\\", "..\\"))


def resolve_path(arg: str, root_arg: str | None = None) -> str:
    """``arg`` as the command will use it: absolute, explicitly relative (``./``, ``../``)
    or present under the current directory only, it is as given; else, when it exists under
    the repository root (``--root``, or the one found from the current directory), the path
    to that, relative to the current directory when it can be. A quoted glob follows the
    same rule by its first component (a literal one that exists under the root: the glob
    under the root)."""
    if os.path.isabs(arg) or _explicitly_relative(arg):
        return arg
    if root_arg:
        base = Path(os.path.abspath(root_arg))
    else:
        try:
            base = find_root(Path.cwd())[0]
        except ConfigError as exc:
            raise ServiceError([exc.diagnostic], exit_code=2) from None
    under_root = base / arg
    from session_resume.storage.discovery import is_pattern

    if is_pattern(arg):
        # a quoted glob: the same rule for its first component (the walk that expands it
        # keeps to the root: docs/security.md §14); a wildcard there is the current directory's
        first = arg.replace("\\", "/").split("/", 1)[0]
        if is_pattern(first) or not os.path.lexists(base / first):
            return arg
        if os.path.lexists(first) and os.path.samefile(base / first, first):
            return arg
        return relpath(under_root)
    if os.path.lexists(under_root):
        if os.path.lexists(arg) and os.path.samefile(under_root, arg):
            return arg
        return relpath(under_root)
    return arg


def config_near(path: str | os.PathLike[str] | None, root_arg: str | None) -> Config:
    """The configuration of the repository ``path`` is in (found from its nearest existing
    directory upwards), or of ``--root``, or of the current directory."""
    if root_arg or path is None:
        return config_for(root_arg)
    start = Path(os.path.abspath(path))
    while not start.is_dir() and start != start.parent:
        start = start.parent
    try:
        return load_config(start)
    except ConfigError as exc:
        raise ServiceError([exc.diagnostic], exit_code=2) from None


def add_session_args(p: argparse.ArgumentParser, *, project: bool = True) -> None:
    """DIR (optional when --project is given) and --project NAME."""
    p.add_argument("dir", nargs="?", metavar="DIR", help=DIR_HELP)
    if project:
        p.add_argument("--project", metavar="NAME", help=PROJECT_HELP)


def add_reading_args(p: argparse.ArgumentParser) -> None:
    """The options of the commands that read a session as `resume` does (`resume`, `report`):
    the clock, the workflow, the caller's session, the stale threshold, the format, the root."""
    p.add_argument("--now", metavar="TIMESTAMP", help="the current time (default: clock)")
    p.add_argument("--workflow", metavar="NAME|PATH")
    p.add_argument(
        "--session",
        metavar="ID",
        default=os.environ.get("SESSION_RESUME_SESSION") or None,
        help="this agent's session id (env SESSION_RESUME_SESSION); its own lease "
        "is not reported as another live session",
    )
    p.add_argument(
        "--stale-after",
        type=int,
        metavar="SECONDS",
        help="heartbeat age after which a session is orphaned (default 300)",
    )
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--root", metavar="DIR")


def session_of(
    args: argparse.Namespace,
    *,
    dir_attr: str = "dir",
    workflow: str | None = None,
    project_with_dir: bool = False,
) -> tuple[Config, Path, Path]:
    """(configuration, repository root, session directory) of the session the command line
    names, by the rule above. ``workflow`` is the one whose session_dir pattern --project
    follows (default: the configured one). With ``project_with_dir`` a DIR and --project may
    both be given (then --project names the project, not the directory: `recover`)."""
    from session_resume.services.context import PROJECT_NAME
    from session_resume.storage.discovery import session_dir_of

    given = getattr(args, dir_attr, None)
    project = getattr(args, "project", None)
    root_arg = getattr(args, "root", None)
    if given and project and not project_with_dir:
        raise UsageError("give the session directory DIR or --project NAME, not both")
    if given:
        resolved = resolve_path(given, root_arg)
        cfg = config_near(resolved, root_arg)
        return cfg, root_of(root_arg, cfg), Path(os.path.abspath(session_dir_of(resolved)))
    if project:
        if not PROJECT_NAME.match(project):
            raise UsageError(
                f"--project: {project!r} is not a project name (letters, digits, `.`, `_`, "
                "`-`, starting with a letter or digit)"
            )
        cfg = config_for(root_arg)
        root = root_of(root_arg, cfg)
        return cfg, root, project_dir(args, cfg, root, project, workflow, dir_option=None)
    raise UsageError("give the session directory DIR, or --project NAME")


def session_of_project(args: argparse.Namespace) -> tuple[Config, Path, Path]:
    """:func:`session_of` for a command that takes state files or directories (PATH|DIR…)
    or --project NAME (`validate`, `migrate`): the session --project names, in the workflow
    --workflow names; both PATH and --project given is a usage error."""
    if args.paths:
        raise UsageError("give PATH|DIR or --project NAME, not both")
    return session_of(args, workflow=args.workflow)


def project_dir(
    args: argparse.Namespace,
    cfg: Config,
    root: Path,
    project: str,
    workflow: str | None,
    *,
    dir_option: str | None,
) -> Path:
    """The session directory ``--project NAME`` names, by the rule above: the session_dir
    pattern of ``workflow`` (`--workflow`) or the configured one; when neither names one, the
    built-in workflows' directory that holds the session, refused (SR185) when two do, the
    default workflow's when none does. ``dir_option``: how the command takes a directory
    (``--session-dir``, or None for a positional DIR), for the commands SR185 prints."""
    from session_resume.services.context import (
        holds_session,
        project_session_dirs,
        session_dir_for_project,
    )

    spec = workflow or cfg.workflow
    if spec:
        return session_dir_for_project(root, project, spec)
    candidates = project_session_dirs(root, project)
    held = [(d, names) for d, names in candidates if holds_session(d)]
    if len(held) == 1:
        return held[0][0]
    if len(held) > 1:
        # lazy: the code catalogue only for the refusal
        from session_resume.core.codes import diag

        where = " and ".join(f"{relpath(d)} ({', '.join(names)})" for d, names in held)
        runs = " or ".join(f"`{_with_dir(args, relpath(d), dir_option)}`" for d, _names in held)
        raise ServiceError(
            [
                diag(
                    "SR185",
                    f"--project {project} names two sessions, {where}; name one by its "
                    f"directory: {runs} (nothing was done)",
                )
            ],
            exit_code=2,
        )
    return candidates[0][0]


def _with_dir(args: argparse.Namespace, directory: str, dir_option: str | None) -> str:
    """The user's command line with ``--project NAME`` replaced by ``directory``."""
    # lazy: only a refusal prints a command
    import shlex

    argv = getattr(args, "argv", None)
    if argv is None:
        argv = sys.argv[1:]
    words = [directory] if dir_option is None else [dir_option, directory]
    out: list[str] = []
    skip = False
    for w in argv:
        if skip:
            skip = False
        elif w == "--project":
            out += words
            skip = True
        elif w.startswith("--project="):
            out += words
        else:
            out.append(w)
    return shlex.join(["session-resume", *out])


def reading_of(args: argparse.Namespace, cfg: Config, root: Path) -> Reading:
    """How a read service reads the session: under ``root``, with the command's --workflow,
    else the state's, else the configured one."""
    # lazy: the services' context loads the store, which `validate` of a file never needs
    from session_resume.services.context import Reading

    return Reading(root=root, workflow=args.workflow, default_workflow=cfg.workflow)


def read_options(args: argparse.Namespace) -> tuple[Path, Reading, dict[str, Any]]:
    """The session directory `resume` and `report` read, how they read it, and the options
    they pass to their service, from the command line and the project configuration."""
    cfg, root, session_dir = session_of(args, workflow=args.workflow)
    return (
        session_dir,
        reading_of(args, cfg, root),
        {
            "now": now_from(args.now),
            "session": args.session,
            "stale_seconds": args.stale_after or cfg.stale_after_seconds,
        },
    )


def here_relative(text: str) -> str:
    """``text`` with every absolute path inside the repository the current directory is in
    written relative to its root: one path style in what the CLI prints. Every command it
    names still runs as printed from anywhere in the repository (a relative session directory
    is looked up under the repository root first); a path elsewhere stays absolute."""
    if os.sep not in text:
        return text
    here = Path.cwd()
    root = next(
        (d for d in (here, *here.parents) if (d / ".git").exists() or (d / CONFIG_NAME).exists()),
        None,
    )
    if root is None or root == Path(root.anchor):
        return text
    prefix = str(root).rstrip(os.sep) + os.sep
    return text.replace(prefix, "") if prefix in text else text


def print_diagnostics(diags: list[Diagnostic], stream: Any = None, *, hints: bool = True) -> None:
    if not hints:
        diags = [replace(d, hint="") for d in diags]
    diags = [
        replace(
            d,
            file=here_relative(d.file),
            message=here_relative(d.message),
            hint=here_relative(d.hint),
        )
        for d in diags
    ]
    if diags:
        by_file: dict[str, list[Diagnostic]] = {}
        for d in diags:
            by_file.setdefault(d.file, []).append(d)
        text = render_text([FileReport(path=f, diagnostics=ds) for f, ds in by_file.items()], False)
        # drop the summary line: these are notes, not a validation verdict
        (stream or sys.stdout).write("\n".join(text.rstrip("\n").split("\n")[:-1]) + "\n")


# Characters that JSON leaves raw in a string but that break or reorder a line where the
# text is shown: the line and paragraph separators and the bidi controls (as \uNNNN).
_JSON_RAW = "[\u200e\u200f\u2028-\u202e\u2066-\u2069]"


def emit_json(value: Any) -> None:
    text = json.dumps(value, indent=2, ensure_ascii=False)
    if not text.isascii():
        text = re.sub(_JSON_RAW, lambda m: f"\\u{ord(m.group()):04x}", text)
    sys.stdout.write(text + "\n")


def diag_json(diags: list[Diagnostic]) -> list[dict[str, Any]]:
    return [d.to_json() for d in diags]


def relpath(p: str | os.PathLike[str]) -> str:
    try:
        return os.path.relpath(p)
    except ValueError:
        return os.fspath(p)
