"""Commands the tool suggests, made runnable from where the user stands.

A message or hint may name a command (`` `session-resume start 2 --force` ``). The core that
writes it does not know how the user named the session, so the command would be a usage error
as printed (no session) or act on another directory. :func:`complete` gives each suggested
command what made the user's own call work: the session (``--project NAME`` or the
directory, replacing a ``DIR``/``PATH`` placeholder) and ``--root``, when the suggested
command takes them and does not name them already. The options a command takes are read from
its own parser, so a suggestion never gains an option its command lacks.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shlex
import sys

from session_resume.cli.commands.common import diag_json, emit_json, print_diagnostics
from session_resume.cli.parser import KNOWN, build_parser
from session_resume.core.diagnostics import Diagnostic
from session_resume.records import record, replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SUGGESTED = re.compile(r"`(session-resume [^`\n]+)`")
PLACEHOLDERS = frozenset({"DIR", "PATH", "PATH|DIR", "SESSION_DIR"})


@record(frozen=True)
class Naming:
    """How the user's call named the session: a directory as typed from the current
    directory, or a project; and the ``--root`` it gave."""

    dir: str | None = None
    project: str | None = None
    root: str | None = None
    # the words of the user's own command line after `session-resume` (cli.main keeps them)
    argv: tuple[str, ...] | None = None
    # the session the call named (or the one a resume answer chose): every suggested command
    # that takes `--session` names it, so a write is not refused as another session's (SR511)
    session: str | None = None


def naming_of(args: argparse.Namespace, session_dir: str | None = None) -> Naming:
    project = getattr(args, "project", None)
    given = session_dir or getattr(args, "session_dir", None) or getattr(args, "dir", None)
    if given is None and isinstance(getattr(args, "paths", None), list) and args.paths:
        given = args.paths[0] if len(args.paths) == 1 and args.paths[0] != "-" else None
    argv = getattr(args, "argv", None)
    return Naming(
        dir=given if given else None,
        project=project,
        root=getattr(args, "root", None),
        argv=tuple(argv) if isinstance(argv, list) else None,
        session=session if isinstance(session := getattr(args, "session", None), str) else None,
    )


# services.leases.SAME_COMMAND: "run the command you ran again, naming the session"
_SAME_COMMAND = re.compile(r"the same command with `--session ([^`\s]+)`")


def _same_command(text: str, naming: Naming) -> str:
    """The words "the same command with `--session ID`" replaced by that command line: the
    user's own, as typed, with ``--session ID`` added."""
    if naming.argv is None or "the same command" not in text:
        return text
    argv = naming.argv
    return _SAME_COMMAND.sub(
        lambda m: f"`{shlex.join(['session-resume', *argv, '--session', m.group(1)])}`", text
    )


def _subparser(words: list[str]) -> tuple[argparse.ArgumentParser | None, int]:
    """The parser of the command ``words`` names, and how many words name it
    (``session-resume render handoff``: 3)."""
    if len(words) < 2:
        return None, 0
    parser, n = build_parser(words[1] if words[1] in KNOWN else None), 1
    while True:
        sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub is None:
            return parser, n
        if len(words) <= n or words[n] not in sub.choices:
            return None, 0
        parser, n = sub.choices[words[n]], n + 1


def _parse(parser: argparse.ArgumentParser, rest: list[str]) -> argparse.Namespace | None:
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            return parser.parse_known_args(rest)[0]
        except SystemExit:
            return None


def complete(command: str, naming: Naming) -> str:
    """``command`` with the session and ``--root`` of ``naming`` where it takes them and
    names none; unchanged when it cannot be parsed."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if not words or words[0] != "session-resume":
        return command
    parser, n = _subparser(words)
    if parser is None:
        return command
    head, rest = words[:n], words[n:]
    options = parser._option_string_actions
    positional = {a.dest for a in parser._actions if not a.option_strings}
    takes_dir = bool({"dir", "paths"} & positional)
    # the command's own text is kept as written (its quoting too): placeholders are replaced
    # word for word and what it lacks is appended
    text = command
    if head[1] == "init" and naming.project is not None:
        rest = [naming.project if w == "PROJECT" else w for w in rest]
        text = _PROJECT_WORD.sub(shlex.quote(naming.project), text)
    extra: list[str] = []
    if naming.dir is not None:
        typed = shlex.quote(naming.dir)
        if (absolute := os.path.abspath(naming.dir)) != naming.dir:
            # the service names the directory absolute: printed as the user typed it
            rest = [naming.dir if w == absolute else w for w in rest]
            word = re.compile(rf"(?<=\s){re.escape(shlex.quote(absolute))}(?=\s|$)")
            text = word.sub(lambda _m: typed, text)
        rest = [naming.dir if w in PLACEHOLDERS else w for w in rest]
        text = _PLACEHOLDER_WORD.sub(lambda _m: typed, text)
    elif naming.project is not None and "--project" in options and PLACEHOLDERS & set(rest):
        rest = [w for w in rest if w not in PLACEHOLDERS]
        text = _PLACEHOLDER_WORD.sub("", text).replace("  ", " ").rstrip()
        extra += ["--project", naming.project]
    args = _parse(parser, rest + extra)
    if args is None:
        return command
    named = bool(
        getattr(args, "project", None)
        or getattr(args, "session_dir", None)
        or getattr(args, "dir", None)
        or getattr(args, "paths", None)
    )
    if not named and head[1] != "init":
        if naming.project is not None and "--project" in options:
            extra += ["--project", naming.project]
        elif naming.dir is not None and takes_dir:
            extra += [naming.dir]
        elif naming.dir is not None and "--session-dir" in options:
            extra += ["--session-dir", naming.dir]
    if naming.root is not None and "--root" in options and getattr(args, "root", None) is None:
        extra += ["--root", naming.root]
    if naming.session and "--session" in options and getattr(args, "session", None) is None:
        extra += ["--session", naming.session]
    return f"{text} {shlex.join(extra)}" if extra else text


_PLAN_WRITES = frozenset({"write", "complete", "start", "skip", "transition", "approve"})
_PLACEHOLDER_WORD = re.compile(r"(?<=\s)(?:PATH\|DIR|SESSION_DIR|DIR|PATH)(?=\s|$)")
_PROJECT_WORD = re.compile(r"(?<=\s)PROJECT(?=\s|$)")


def complete_text(text: str, naming: Naming) -> str:
    text = _same_command(text, naming)
    if "session-resume " not in text:
        return text
    return SUGGESTED.sub(lambda m: f"`{complete(m.group(1), naming)}`", text)


def complete_diagnostics(diags: list[Diagnostic], naming: Naming) -> list[Diagnostic]:
    """Every command a diagnostic's message or hint names, completed for ``naming``."""
    out = []
    for d in diags:
        message, hint = complete_text(d.message, naming), complete_text(d.hint, naming)
        out.append(
            d if (message, hint) == (d.message, d.hint) else replace(d, message=message, hint=hint)
        )
    return out


def complete_answer(doc: object, naming: Naming) -> None:
    """Complete, in place, every ``commands`` and ``alternatives`` list of a JSON answer
    (``resume``, ``report``): strings, or objects whose ``run`` is the command; every write of
    the plan (a checkpoint's ``write``, ``complete``, the next step's ``start``, ``skip`` and
    ``transition``); and every command named in the ``message`` and ``hint`` of a coded entry
    (``reasons``, ``warnings``)."""
    if isinstance(doc, dict):
        if isinstance(doc.get("code"), str):
            for key in ("message", "hint"):
                if isinstance(doc.get(key), str):
                    doc[key] = complete_text(doc[key], naming)
        # after a session break the next chat starts the next step under its own session
        # (docs/spec.md §10.2): its start and transition name none
        later = replace(naming, session=None) if doc.get("by") == "next_chat" else None
        for k, v in doc.items():
            if k in _PLAN_WRITES and isinstance(v, str) and v.startswith("session-resume "):
                own = later if later is not None and k in ("start", "transition") else naming
                doc[k] = complete(v, own)
            elif k in ("commands", "alternatives") and isinstance(v, list):
                for i, c in enumerate(v):
                    if isinstance(c, str):
                        v[i] = complete(c, naming)
                    elif isinstance(c, dict) and isinstance(c.get("run"), str):
                        c["run"] = complete(c["run"], naming)
            else:
                complete_answer(v, naming)
    elif isinstance(doc, list):
        for v in doc:
            complete_answer(v, naming)


def complete_decision(
    answer: dict[str, Any], decision: dict[str, Any], args: argparse.Namespace
) -> Naming:
    """Make ``answer`` (a resume answer, or a report holding one as ``decision``) runnable as
    printed for this call, the same way for both: every command completed with the session
    directory, ``--root`` and the session (the caller's, else the one the decision chose);
    asked in JSON, a `resume` it names is asked in JSON too. Returns the naming used."""
    naming = naming_of(args)
    chosen = decision.get("session")
    if naming.session is None and isinstance(chosen, dict) and isinstance(chosen.get("id"), str):
        # the id the answer chose for this agent (spec.md §10.3): its hints name it too
        naming = replace(naming, session=chosen["id"])
    complete_answer(answer, naming)  # runnable as printed: --root, the session
    if args.format == "json":
        for c in decision["commands"] + decision["alternatives"]:
            # asked in JSON, asked again in JSON: the command repeats the form this answer had
            if c["run"].startswith("session-resume resume "):
                c["run"] += " --format json"
    return naming


def print_refusal(args: argparse.Namespace, diagnostics: list[Diagnostic]) -> None:
    """A refused command's findings, the commands they name completed for this call: a JSON
    document on stdout with ``--format json``, else text on stderr."""
    diags = complete_diagnostics(diagnostics, naming_of(args))
    if args.format == "json":
        emit_json({"ok": False, "diagnostics": diag_json(diags)})
    else:
        print_diagnostics(diags, sys.stderr)
