"""Side-by-side benchmarks of session-resume against its anchors.

Run with ``nox -s bench`` (or ``python benchmarks/run.py``)::

    python benchmarks/run.py [--quick | --smoke] [--only NAME ...] [--runs N] [--json FILE]
                             [--list]

Each benchmark is a module ``bench_*.py`` next to this file that registers itself with the
shared runner (``runner.py``: timing, medians, ratios, the report; its docstring has the rules
every benchmark follows and how to add one). This file is the command line.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shlex
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # run as a script, sys.path[0] is already this directory
    sys.path.insert(0, str(HERE))

import runner  # noqa: E402
from machine import machine_info  # noqa: E402

# The benchmark modules, in the order the report lists their benchmarks.
BENCHMARK_MODULES = (
    "bench_validate_cold",
    "bench_write_cold",
    "bench_validate_batch",
    "bench_save",
    "bench_mcp_write",
    "bench_worklog_append",
    "bench_memory",
    "bench_migrate_check",
    "bench_resume_worklog",
    "bench_conformance",
    "bench_hostile",
    "bench_hooks",
)
# Listed modules that may be absent from this tree (another branch adds them): until then the
# goals table shows their goal as "not measured". (module, what, goal)
OPTIONAL_MODULES: dict[str, tuple[str, str]] = {}


def load_benchmarks() -> list[runner.Benchmark]:
    """Import every benchmark module (each registers its benchmarks); a bench_*.py file that
    is not listed above is an error, so that no benchmark is silently left out."""
    on_disk = {p.stem for p in HERE.glob("bench_*.py")}
    unlisted = sorted(on_disk - set(BENCHMARK_MODULES))
    if unlisted:
        raise SystemExit(f"benchmarks/run.py: add {', '.join(unlisted)} to BENCHMARK_MODULES")
    for name in BENCHMARK_MODULES:
        if name in OPTIONAL_MODULES and name not in on_disk:
            runner.PENDING.append((name, *OPTIONAL_MODULES[name]))
            continue
        importlib.import_module(name)
    return list(runner.BENCHMARKS)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--quick", action="store_true", help="fewer runs; skip the largest benchmarks"
    )
    size.add_argument(
        "--smoke",
        action="store_true",
        help=f"every benchmark on tiny data, {runner.SMOKE_RUNS} runs each and no warm-up: checks "
        "that they all run (in well under a minute); the figures are not measurements",
    )
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these benchmarks")
    parser.add_argument(
        "--runs", type=int, metavar="N", help="timed runs per contender (overrides)"
    )
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON to FILE")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    return parser


def _goal_line(b: runner.Benchmark, g: runner.Goal) -> str:
    if isinstance(g, runner.Limit):
        return f"{g.contender} <= {g.max_value} {b.unit}"
    ratio = "reported" if g.max_ratio is None else f"<= {g.max_ratio}x"
    return f"{g.contender} {ratio} {g.against or b.anchor}"


def _list(benchmarks: Sequence[runner.Benchmark]) -> None:
    for module, what, goal in runner.PENDING:
        print(f"(not here yet: benchmarks/{module}.py, {what} {goal})")
    for b in benchmarks:
        quick = f"{b.quick_runs} under --quick" if b.quick_runs else "skipped under --quick"
        tgt = "; ".join(_goal_line(b, g) for g in b.targets) or "none"
        print(
            f"{b.name}: {b.description}\n    contenders: {', '.join(b.contenders)}; "
            f"target: {tgt}; runs: {b.runs} ({quick})"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    benchmarks = load_benchmarks()
    if args.list:
        _list(benchmarks)
        return 0
    known = {b.name for b in benchmarks}
    unknown = [n for n in args.only or [] if n not in known]
    if unknown:
        parser.error(
            f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    if args.runs is not None and args.runs < 1:
        parser.error("--runs must be at least 1")

    runner.OPTIONS.quick = args.quick
    runner.OPTIONS.smoke = args.smoke
    selected = [b for b in benchmarks if not args.only or b.name in args.only]
    command = shlex.join([sys.executable, *sys.argv])
    machine = machine_info()
    runner.print_header(command, machine)
    started = datetime.now(UTC)
    results, skipped = runner.run_selected(selected, only=bool(args.only), runs=args.runs)
    elapsed = (datetime.now(UTC) - started).total_seconds()
    if hasattr(os, "getloadavg"):
        machine["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    runner.print_results(results, skipped, elapsed, machine)
    if args.json:
        runner.write_json(
            args.json,
            command=command,
            started=started,
            elapsed=elapsed,
            machine=machine,
            skipped=skipped,
            results=results,
        )
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
