"""Helpers for command-line contenders: the console scripts of this environment, their
isolated environment, a timed process, and the untimed checks of a benchmark's data."""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Sequence
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
    """The environment of every contender: ours, with session-resume's cache under ``tmpdir``.

    Bytecode: every contender loads as its users' installation does, from the ``__pycache__``
    next to its sources (pip writes it at install time). Nothing redirects it: with
    ``PYTHONPYCACHEPREFIX`` Python ignores the bytecode an installed package has and compiles
    again into the prefix (on every run when it cannot write there), which made an anchor pay
    compilation in each timed run. ``PYTHONDONTWRITEBYTECODE`` is dropped, as on a default
    Python, so that a package installed without bytecode (an editable install) gets it from
    the untimed warm-up run. A contender that still compiles on every warm run is reported
    "not comparable" (``compiled_sources``).
    """
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = str(tmpdir / ".cache")
    env.pop("PYTHONPYCACHEPREFIX", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONVERBOSE", None)
    env.pop("SESSION_RESUME_NO_CACHE", None)
    return env


# `python -v` prints "# code object from '<...>.pyc'" for a module loaded from bytecode and
# "# code object from <...>.py" (no quotes) for one compiled from its source.
_COMPILED = re.compile(r"^# code object from (?!')(.+)$", re.M)


def compiled_sources(verbose_stderr: str) -> list[str]:
    """The source files a Python process compiled, from its ``PYTHONVERBOSE=1`` stderr."""
    return _COMPILED.findall(verbose_stderr)


_LOADED = re.compile(
    r"^# (?:code object from|extension module '[^']*' loaded from) '?([^']+)'?$", re.M
)


def loaded_distributions(verbose_stderr: str) -> set[str]:
    """The installed distributions (normalised names) whose modules a Python process loaded,
    from its ``PYTHONVERBOSE=1`` stderr."""
    from importlib import metadata

    sites = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    tops: set[str] = set()
    for path in _LOADED.findall(verbose_stderr):
        for site in sites:
            if path.startswith(site + os.sep):
                top = path[len(site) + 1 :].split(os.sep, 1)[0]
                tops.add(top.split(".", 1)[0])
    owners = metadata.packages_distributions()
    return {_norm(d) for top in tops for d in owners.get(top, ())}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_closure(dist: str) -> set[str]:
    """``dist`` and every distribution its installation requires (markers evaluated, extras
    only where a requirement names them): what ``pip install dist`` puts in an environment."""
    from importlib import metadata

    from packaging.requirements import Requirement

    seen: set[str] = set()
    todo: list[tuple[str, frozenset[str]]] = [(dist, frozenset())]
    while todo:
        name, extras = todo.pop()
        key = (_norm(name), extras)
        if f"{key[0]}[{','.join(sorted(extras))}]" in seen:
            continue
        seen.add(f"{key[0]}[{','.join(sorted(extras))}]")
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for text in requires:
            req = Requirement(text)
            wanted = req.marker is None or any(
                req.marker.evaluate({"extra": e}) for e in (extras or {""})
            )
            if wanted:
                todo.append((req.name, frozenset(req.extras)))
    return {s.split("[", 1)[0] for s in seen}


def console_script_distribution(program: str) -> str | None:
    """The distribution that installed the console script ``program`` (None: not one)."""
    from importlib import metadata

    name = Path(program).name.removesuffix(".exe")
    if Path(program).parent != BIN:
        return None
    for ep in metadata.entry_points(group="console_scripts"):
        if ep.name == name and ep.dist is not None:
            return _norm(ep.dist.name)
    return None


def foreign_distributions(program: str, verbose_stderr: str) -> list[str]:
    """The distributions a console script's process loaded that its own installation would
    not have (another package's extra put them in this environment): a contender that loads
    them is not in its users' condition (e.g. jsonschema imports rfc3987-syntax, which builds a
    parser at import, whenever it is installed)."""
    dist = console_script_distribution(program)
    if dist is None:
        return []
    extra = loaded_distributions(verbose_stderr) - requirement_closure(dist)
    return sorted(extra - _site_distributions())


@functools.cache
def _site_distributions() -> frozenset[str]:
    """What every Python process of this environment loads before its command runs (site's
    .pth files, e.g. setuptools' distutils hack): not a contender's own doing."""
    res = subprocess.run(
        [sys.executable, "-c", "pass"],
        env={**os.environ, "PYTHONVERBOSE": "1"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    return frozenset(loaded_distributions(res.stderr.decode("utf-8", "replace")))


def probe(
    argv: Sequence[str], *, cwd: Path, env: dict[str, str], stdin: bytes | None = None
) -> Callable[[], dict[str, list[str]]]:
    """An untimed run of ``argv`` under ``PYTHONVERBOSE=1``: the source files it compiles
    (``compiled``) and, for a console script, the distributions it loads that its installation
    does not require (``foreign``). A command that is not a Python process prints no such
    line: nothing compiled, nothing foreign."""
    args = list(argv)
    verbose = {**env, "PYTHONVERBOSE": "1"}

    def run() -> dict[str, list[str]]:
        res = subprocess.run(
            args,
            cwd=cwd,
            env=verbose,
            input=stdin if stdin is not None else b"",
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            check=False,
        )
        err = res.stderr.decode("utf-8", "replace")
        return {
            "compiled": compiled_sources(err),
            "foreign": foreign_distributions(args[0], err),
        }

    return run


def process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str],
    shown: str | None = None,
    ok_codes: Sequence[int] = (0,),
) -> Run:
    """A Run that executes ``argv`` (output discarded) and aborts on an unexpected exit; its
    probe counts the source files a run compiles (see ``probe``)."""
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

    return Run(call, display, probe=probe(args, cwd=cwd, env=env))


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
