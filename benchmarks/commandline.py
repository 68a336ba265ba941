"""Helpers for command-line contenders: the console scripts of this environment, their
isolated environment, a timed process, and the untimed checks of a benchmark's data."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from runner import BIN, BenchAbort, Run


def tool(name: str) -> str:
    """A console script of the environment running this file."""
    for candidate in (BIN / name, BIN / f"{name}.exe"):
        if candidate.is_file():
            return str(candidate)
    raise BenchAbort(
        f"{name} is not installed next to {sys.executable} "
        "(run through `nox -s bench`, which installs the [bench] extra)"
    )


def bench_env(tmpdir: Path) -> dict[str, str]:
    """The environment of every contender: ours, with isolated caches under ``tmpdir``.

    Bytecode: an installed package has ``.pyc`` files (pip compiles them), but an editable
    install run with PYTHONDONTWRITEBYTECODE=1 (common in containers) would recompile its
    sources in every process, and only its own. So every contender writes and reads bytecode
    under ``tmpdir`` (PYTHONPYCACHEPREFIX): after the warm-up run all of them load bytecode,
    and the source tree is not touched.
    """
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = str(tmpdir / ".cache")
    env["PYTHONPYCACHEPREFIX"] = str(tmpdir / ".pycache")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("SESSION_RESUME_NO_CACHE", None)
    return env


def process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str],
    shown: str | None = None,
    ok_codes: Sequence[int] = (0,),
) -> Run:
    """A Run that executes ``argv`` (output discarded) and aborts on an unexpected exit."""
    args = list(argv)
    display = shown or shlex.join(args)

    def call() -> None:
        res = subprocess.run(
            args,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            check=False,
        )
        if res.returncode not in ok_codes:
            tail = res.stderr.decode("utf-8", "replace").strip()[-2000:]
            raise BenchAbort(f"`{display}` exited {res.returncode}\n{tail}")

    return Run(call, display)


class Sequential:
    """Run several commands one after the other as one contender."""

    def __init__(self, runs: list[Run]) -> None:
        self.runs = runs

    def __call__(self) -> None:
        for r in self.runs:
            r.call()


def check_output(
    argv: Sequence[str], *, cwd: Path, env: dict[str, str], what: str
) -> subprocess.CompletedProcess[str]:
    """Run once (untimed) and return the result; abort unless it exits 0."""
    res = subprocess.run(
        list(argv),
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    if res.returncode != 0:
        out = (res.stdout + res.stderr).strip()
        lines = out.splitlines()
        shown = "\n".join(lines[:30]) + (
            f"\n... ({len(lines) - 30} more lines)" if len(lines) > 30 else ""
        )
        raise BenchAbort(
            f"{what}: `{abbrev(argv)}` exited {res.returncode}; the benchmark data must be "
            f"valid for every contender.\n{shown}"
        )
    return res


_SUMMARY = re.compile(
    r"^(\d+) file\(s\) checked: (\d+) valid, (\d+) invalid "
    r"\((\d+) error\(s\), (\d+) warning\(s\)\)",
    re.M,
)


def expect_session_resume_clean(res: subprocess.CompletedProcess[str], n_files: int) -> None:
    """session-resume's text summary must say: n files, all valid, no diagnostics at all."""
    m = _SUMMARY.search(res.stdout)
    if m is None:
        raise BenchAbort(f"session-resume printed no summary line:\n{res.stdout[-2000:]}")
    files, valid, invalid, errors, warnings = (int(g) for g in m.groups())
    if (files, valid, invalid, errors, warnings) != (n_files, n_files, 0, 0, 0):
        lines = res.stdout.splitlines()
        raise BenchAbort(
            f"session-resume checked {files} file(s): {valid} valid, {invalid} invalid, "
            f"{errors} error(s), {warnings} warning(s); expected {n_files} clean files.\n"
            + "\n".join(lines[:30])
        )


def abbrev(argv: Sequence[str], keep: int = 3) -> str:
    """A command line with long runs of file arguments abbreviated."""
    args = list(argv)
    files = [
        i for i, a in enumerate(args) if a.endswith(".json") and not args[i - 1].startswith("--")
    ]
    if len(files) > 2 * keep:
        head = args[: files[keep]]
        tail = args[files[-keep] :]
        return (
            shlex.join(head) + f" ... ({len(files) - 2 * keep} more files) ... " + shlex.join(tail)
        )
    return shlex.join(args)
