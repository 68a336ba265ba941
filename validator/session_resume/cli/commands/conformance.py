"""``session-resume conformance``: run the suite through an adapter, lint it, or list it."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

from session_resume.cli.parser import Command
from session_resume.conformance.cases import CaseError, default_suite, load_suite
from session_resume.conformance.lint import lint_suite, render
from session_resume.conformance.report import badge, render_json, render_junit, render_text
from session_resume.conformance.runner import RunnerError, parse_skip_file, run_suite
from session_resume.terminal import progress

TYPE_CHECKING = False

if TYPE_CHECKING:
    from session_resume.conformance.cases import Case

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "action",
        nargs="?",
        choices=["run", "lint", "list"],
        default="run",
        help="run (default), lint or list",
    )
    p.add_argument(
        "--adapter",
        metavar="CMD",
        help='the adapter command, e.g. "python -m session_resume.conformance.adapter" or '
        '"node conformance/js/adapter.mjs"',
    )
    p.add_argument(
        "--cases",
        metavar="GLOB",
        action="append",
        default=[],
        help="run only cases whose id or group/id matches (repeatable)",
    )
    p.add_argument(
        "--skip",
        metavar="FILE",
        help="skip list: `<case-id> <reason>` per line; a listed case that passes is a failure",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="per-case timeout in seconds; the adapter is killed and restarted (default 10)",
    )
    p.add_argument("--format", choices=["text", "json", "junit"], default="text")
    p.add_argument("--json", metavar="FILE", help="also write the JSON report to FILE")
    p.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report to FILE")
    p.add_argument("--badge", metavar="FILE", help="write a shields.io endpoint badge JSON")
    p.add_argument(
        "--suite", metavar="DIR", help="the cases directory (default: conformance/cases)"
    )
    p.add_argument("-v", "--verbose", action="store_true", help="list every case")
    p.add_argument(
        "--keep-workspaces",
        action="store_true",
        help="keep each case's temporary directory (for debugging an adapter)",
    )
    p.set_defaults(func=run)


COMMANDS = (
    Command(
        "conformance",
        order=90,
        help="certify an implementation: run the conformance suite through its adapter",
        description="Run the conformance suite (conformance/cases) through an adapter process "
        "that speaks the NDJSON adapter protocol (docs/conformance.md), compare codes, actions "
        "and files, and report. `lint` checks the suite itself; `list` prints its cases. "
        "Exit status: 0 no failures, 1 failures (or lint problems), 2 usage error.",
        arguments=_arguments,
    ),
)


def _write(path: str, text: str) -> None:
    Path(path).write_text(text, encoding="utf-8")


def run(args: argparse.Namespace) -> int:
    suite = Path(args.suite) if args.suite else default_suite()
    if args.action == "lint":
        res = lint_suite(suite)
        sys.stdout.write(render(res))
        return EXIT_OK if res.ok else EXIT_FAILED
    try:
        every = load_suite(suite)
    except CaseError as exc:
        sys.stderr.write(f"session-resume conformance: {exc}\n")
        return EXIT_USAGE
    cases = [c for c in every if c.matches(args.cases)]
    if args.action == "list":
        for c in cases:
            sys.stdout.write(f"{c.key}\t{c.operation}\t{c.spec}\t{c.title}\n")
        return EXIT_OK
    return _run(args, every, cases)


def _run(args: argparse.Namespace, every: list[Case], cases: list[Case]) -> int:
    if not args.adapter:
        sys.stderr.write("session-resume conformance: --adapter CMD is required to run\n")
        return EXIT_USAGE
    if not cases:
        sys.stderr.write("session-resume conformance: no case matches --cases\n")
        return EXIT_USAGE
    try:
        skip = parse_skip_file(Path(args.skip)) if args.skip else {}
        unknown = sorted(set(skip) - {c.id for c in every})
        if unknown:
            raise RunnerError(f"the skip list names cases that do not exist: {', '.join(unknown)}")
        argv = shlex.split(args.adapter, posix=os.name != "nt")

        show, close = progress("conformance", enabled=args.format == "text")
        try:
            report = run_suite(
                argv,
                cases,
                adapter_label=args.adapter,
                skip=skip,
                timeout=args.timeout,
                keep_workspaces=args.keep_workspaces,
                progress=show,
            )
        finally:
            close()
    except RunnerError as exc:
        sys.stderr.write(f"session-resume conformance: {exc}\n")
        return EXIT_USAGE
    if args.format == "json":
        text = render_json(report)
    elif args.format == "junit":
        text = render_junit(report)
    else:
        text = render_text(report, verbose=args.verbose)
    sys.stdout.write(text)
    if args.json:
        _write(args.json, render_json(report))
    if args.junit:
        _write(args.junit, render_junit(report))
    if args.badge:
        _write(args.badge, json.dumps(badge(report)) + "\n")
    return EXIT_OK if report.ok else EXIT_FAILED
