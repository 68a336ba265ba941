"""Mutation testing of the Python reference with the conformance suite as the only oracle.

``python -m session_resume.conformance.mutation`` (``nox -s mutation``) takes a curated list of
one-rule deviations (``conformance/mutants.yaml``: each an id, a description, the module's
import name, an exact source snippet and its replacement), applies each to a *temporary copy*
of the package (never the working tree), runs the suite against
``python -m session_resume.conformance.adapter`` imported from that copy, and reports which
mutants the suite kills. A mutant survives when every case still passes; a survivor is either
a missing case or a freedom the spec leaves (the ``freedom`` of its entry says which).

The snippet is found by searching the package's source for it: first the module named, then,
if it is not there (modules move), every module of the package; it must occur exactly once in
the module where it is found. The runner and the comparator run in this process, from the
unmutated package; only the adapter process imports the mutant.

Exit status: 0 when the score (killed / (killed + survived)) reaches ``--min-score``, 1 when
it does not, 2 for a usage error (a bad mutant list, a snippet not found, a baseline failure).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from session_resume.conformance.cases import CaseError, default_suite, load_suite
from session_resume.conformance.runner import (
    DEFAULT_TIMEOUT,
    RunnerError,
    parse_skip_file,
    run_suite,
)
from session_resume.core.yamlsafe import load_yaml_text
from session_resume.records import field, record
from session_resume.resources import data_root

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ADAPTER = [sys.executable, "-m", "session_resume.conformance.adapter"]
_RULE = re.compile(r"^§[0-9]+(\.[0-9]+){0,3}\Z")  # a numbered rule of docs/spec.md
_FIELDS = {"id", "description", "module", "find", "replace", "freedom", "covers"}


class MutationError(Exception):
    """The mutant list or the package cannot be used (exit status 2)."""


@record
class Mutant:
    id: str
    description: str
    module: str
    find: str
    replace: str
    freedom: str = ""
    covers: list[str] = field(default_factory=list)  # the numbered rules of docs/spec.md broken


@record
class MutantResult:
    mutant: Mutant
    status: str  # killed | survived
    file: str = ""  # where the snippet was found, relative to the package
    killed_by: list[str] = field(default_factory=list)
    note: str = ""
    duration: float = 0.0


def package_dir() -> Path:
    return Path(__file__).resolve().parents[1]


def default_mutants_file() -> Path:
    return package_dir().parents[1] / "conformance" / "mutants.yaml"


def load_mutants(path: Path) -> list[Mutant]:
    try:
        res = load_yaml_text(path.read_text(encoding="utf-8"), file=str(path))
    except OSError as exc:
        raise MutationError(f"cannot read {path}: {exc.strerror}") from None
    if res.diagnostics:
        d = res.diagnostics[0]
        raise MutationError(f"{path}:{d.line}: {d.code} {d.message}")
    data = res.value
    items = data.get("mutants") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise MutationError(f"{path}: needs a non-empty list `mutants`")
    out: list[Mutant] = []
    seen: set[str] = set()
    for n, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise MutationError(f"{path}: mutant {n} is not a mapping")
        unknown = set(item) - _FIELDS
        missing = {"id", "description", "module", "find", "replace"} - set(item)
        if unknown or missing:
            raise MutationError(
                f"{path}: mutant {item.get('id', n)}: "
                + "; ".join(
                    ([f"unknown keys {sorted(unknown)}"] if unknown else [])
                    + ([f"missing keys {sorted(missing)}"] if missing else [])
                )
            )
        covers = item.pop("covers", [])
        if not all(isinstance(item[k], str) for k in item):
            raise MutationError(f"{path}: mutant {item['id']}: every value is a string")
        if not (
            isinstance(covers, list) and all(isinstance(c, str) and _RULE.match(c) for c in covers)
        ):
            raise MutationError(
                f"{path}: mutant {item['id']}: covers is a list of spec rules such as §9.2.6"
            )
        if item["id"] in seen:
            raise MutationError(f"{path}: mutant id {item['id']} is used twice")
        if item["find"] == item["replace"]:
            raise MutationError(f"{path}: mutant {item['id']}: the replacement changes nothing")
        seen.add(item["id"])
        out.append(Mutant(**item, covers=list(covers)))
    return out


def _module_file(pkg: Path, module: str) -> Path | None:
    parts = module.split(".")
    if parts[0] != pkg.name:
        return None
    base = pkg.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def locate(pkg: Path, mutant: Mutant) -> Path:
    """The source file of ``pkg`` holding the mutant's snippet exactly once."""
    named = _module_file(pkg, mutant.module)
    candidates = [named] if named is not None else []
    candidates += sorted(p for p in pkg.rglob("*.py") if p != named and "_data" not in p.parts)
    for path in candidates:
        n = path.read_text(encoding="utf-8").count(mutant.find)
        if n == 1:
            return path
        if n > 1:
            raise MutationError(
                f"mutant {mutant.id}: the snippet occurs {n} times in "
                f"{path.relative_to(pkg)}; make it unique"
            )
    raise MutationError(
        f"mutant {mutant.id}: the snippet is not in {mutant.module} nor anywhere in the package"
    )


def make_copy(dest: Path, pkg: Path | None = None) -> Path:
    """Copy the package to ``dest/session_resume``; its data (schemas, templates) is linked,
    not copied. Returns the copy's package directory."""
    pkg = pkg or package_dir()
    copy = dest / pkg.name
    shutil.copytree(
        pkg, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_data"), symlinks=True
    )
    data = copy / "_data"
    data.mkdir()
    for name in ("schema", "templates"):
        src = data_root() / name
        try:
            (data / name).symlink_to(src, target_is_directory=True)
        except OSError:  # no symbolic links here: copy
            shutil.copytree(src, data / name)
    return copy


def adapter_env(copy_parent: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(copy_parent), env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep
    )
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["SESSION_RESUME_NO_CACHE"] = "1"  # a workflow cache must not outlive a mutant
    return env


def _failures(
    cases: list[Any], env: dict[str, str], skip: dict[str, str], timeout: float | None = None
) -> list[str]:
    limit = timeout or DEFAULT_TIMEOUT
    report = run_suite(ADAPTER, cases, skip=skip, env=env, adapter_label="mutant", timeout=limit)
    return [o.case.key for o in report.outcomes if o.outcome == "failed"]


def run_mutant(
    mutant: Mutant,
    cases: list[Any],
    skip: dict[str, str],
    pkg: Path | None = None,
    timeout: float | None = None,
) -> MutantResult:
    pkg = pkg or package_dir()
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"sr-mutant-{mutant.id[:30]}-") as tmp:
        copy = make_copy(Path(tmp), pkg)
        target = locate(copy, mutant)
        text = target.read_text(encoding="utf-8")
        target.write_text(text.replace(mutant.find, mutant.replace, 1), encoding="utf-8")
        rel = target.relative_to(copy).as_posix()
        try:
            failed = _failures(cases, adapter_env(Path(tmp)), skip, timeout)
        except RunnerError as exc:  # the mutant cannot even start: every case fails
            return MutantResult(
                mutant, "killed", rel, ["(adapter did not start)"], str(exc)[:300],
                round(time.monotonic() - t0, 1),
            )  # fmt: skip
    status = "killed" if failed else "survived"
    return MutantResult(mutant, status, rel, failed, duration=round(time.monotonic() - t0, 1))


def baseline(
    cases: list[Any], skip: dict[str, str], pkg: Path | None = None, timeout: float | None = None
) -> list[str]:
    """The unmutated copy must pass: else a "kill" would prove nothing."""
    with tempfile.TemporaryDirectory(prefix="sr-mutant-baseline-") as tmp:
        make_copy(Path(tmp), pkg)
        return _failures(cases, adapter_env(Path(tmp)), skip, timeout)


def score(results: list[MutantResult]) -> float:
    return sum(r.status == "killed" for r in results) / len(results) if results else 0.0


def render(results: list[MutantResult], cases: int) -> str:
    killed = [r for r in results if r.status == "killed"]
    survived = [r for r in results if r.status == "survived"]
    lines = [f"mutation: {len(results)} mutant(s), the conformance suite ({cases} cases) as oracle"]
    for r in results:
        first = ", ".join(r.killed_by[:3]) + (
            f" (+{len(r.killed_by) - 3})" if len(r.killed_by) > 3 else ""
        )
        if r.status == "killed":
            what = f"by {first}"
        else:
            what = "(a freedom of the spec)" if r.mutant.freedom else "(no case sees it)"
        covers = f" covers {', '.join(r.mutant.covers)}" if r.mutant.covers else ""
        lines.append(f"{r.status.upper():8} {r.mutant.id} [{r.file}]{covers} {what}")
    if survived:
        lines.append("")
        lines.append("survivors and the freedom the spec leaves:")
        for r in survived:
            lines.append(f"- {r.mutant.id}: {r.mutant.description}")
            lines.append(
                f"  freedom: {r.mutant.freedom}"
                if r.mutant.freedom
                else "  freedom: none recorded: a case is missing (or record why the spec allows)"
            )
    lines.append("")
    lines.append(
        f"score: {score(results) * 100:.1f}% ({len(killed)} killed, {len(survived)} survived)"
    )
    return "\n".join(lines) + "\n"


def to_json(results: list[MutantResult], cases: int) -> dict[str, Any]:
    return {
        "cases": cases,
        "mutants": len(results),
        "killed": sum(r.status == "killed" for r in results),
        "survived": sum(r.status == "survived" for r in results),
        "score": round(score(results), 4),
        "results": [
            {
                "id": r.mutant.id,
                "description": r.mutant.description,
                "module": r.mutant.module,
                "file": r.file,
                "status": r.status,
                "killed_by": r.killed_by,
                "freedom": r.mutant.freedom,
                "covers": r.mutant.covers,
                "note": r.note,
                "duration_s": r.duration,
            }
            for r in results
        ],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m session_resume.conformance.mutation",
        description="Apply one-rule mutants to a copy of the Python reference and run the "
        "conformance suite against each; report killed and surviving mutants.",
    )
    p.add_argument(
        "--mutants", type=Path, help="the mutant list (default conformance/mutants.yaml)"
    )
    p.add_argument("--only", action="append", default=[], metavar="ID", help="run only these")
    p.add_argument("--cases", action="append", default=[], metavar="GLOB")
    p.add_argument("--suite", type=Path, help="the cases directory")
    p.add_argument("--skip", type=Path, help="skip list of the reference (default: its own)")
    p.add_argument("--jobs", type=int, default=2, help="mutants run in parallel (default 2)")
    p.add_argument("--min-score", type=float, default=95.0, metavar="PCT")
    p.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="seconds per case (default: the runner's 10); raise it on a loaded machine, where "
        "a timeout would be a false kill",
    )
    p.add_argument("--json", type=Path, metavar="FILE", help="also write a JSON report")
    args = p.parse_args(argv)
    try:
        mutants = load_mutants(args.mutants or default_mutants_file())
        if args.only:
            unknown = sorted(set(args.only) - {m.id for m in mutants})
            if unknown:
                raise MutationError(f"no mutant {', '.join(unknown)}")
            mutants = [m for m in mutants if m.id in args.only]
        for m in mutants:  # every snippet must be found before anything runs
            locate(package_dir(), m)
        cases = load_suite(args.suite or default_suite(), args.cases)
        if not cases:
            raise MutationError("no case selected")
        skip_file = args.skip or package_dir().parents[1] / "conformance/adapters/python/skip.txt"
        skip = parse_skip_file(skip_file) if skip_file.is_file() else {}
        failing = baseline(cases, skip, timeout=args.timeout)
        if failing:
            raise MutationError(f"the unmutated package fails {', '.join(failing[:10])}")
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(
                pool.map(lambda m: run_mutant(m, cases, skip, timeout=args.timeout), mutants)
            )
    except (MutationError, CaseError, RunnerError) as exc:
        sys.stderr.write(f"mutation: {exc}\n")
        return 2
    sys.stdout.write(render(results, len(cases)))
    if args.json:
        args.json.write_text(json.dumps(to_json(results, len(cases)), indent=2) + "\n")
    return 0 if score(results) * 100 >= args.min_score else 1


if __name__ == "__main__":
    sys.exit(main())
