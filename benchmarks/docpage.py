"""docs/benchmarks.md, generated from the JSON of one run, so that the page cannot drift from it.

    python benchmarks/run.py --json /tmp/bench.json      # one default run (quiet machine)
    python benchmarks/docpage.py write /tmp/bench.json    # docs/benchmarks.json + .md
    python benchmarks/docpage.py check                    # the page is what the JSON gives

``nox -s bench_docs`` does both steps (``-- FILE`` to use a run already made). ``write`` keeps
the run's figures in docs/benchmarks.json (every field but the individual times) and writes the
page from them: the method, the goals table, one table per benchmark, the machine. A run that
is not a default one (``--quick``, ``--smoke``, ``--only``, ``--runs``) is marked as such at
the top of the page. ``check`` (run by tests/test_benchmarks.py) regenerates the page from
docs/benchmarks.json and fails if docs/benchmarks.md differs. The history of earlier rounds is
in CHANGELOG.md, never on this page.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import runner  # noqa: E402
from doctables import _md, benchmark_table, machine_table, portable  # noqa: E402

PAGE = runner.ROOT / "docs" / "benchmarks.md"
FIGURES = runner.ROOT / "docs" / "benchmarks.json"
_BULKY = ("times_s", "values")  # every individual time: in the run's own JSON, not here

METHOD = """\
`nox -s bench` (or `python benchmarks/run.py`) runs every benchmark in `benchmarks/` (one module
`bench_*.py` each; `--list` describes them). These are the figures of **one run, on one
machine, at one time**. Your machine will give other figures: run the command yourself
before you rely on one.

- **The cost that matters most is context.** `resume-context` counts the characters a fresh
  agent must read before its first write, in five situations (mid-step with its partial
  deliverable, a corrupt state with its `.bak`, a 2.0 state, another live session, a gate
  handover into an optional step): the generated SKILL.md plus the text `resume` answer (the
  CLI path), or plus the MCP `resume` tool's answer as a host shows it to the model (the MCP
  path; the tool list the host loads is reported beside it), or the `session-start` hook's
  injected plan alone (the hook path), against the upstream protocol's own startup reading
  (its SKILL.md, 4,848 characters, the state file(s) and the step's context-budget row). A
  count, not a time: the same on every machine.
- **Side by side, in one run.** The contenders of a benchmark take turns, every round timing
  each once in an order shuffled with a seed fixed by the benchmark's name, so a slowdown of
  the machine or the after-effect of a heavy contender lands on all alike. Each figure is the
  median of the timed runs; p90 is the 90th percentile; the ratio is a median over the
  anchor's median (or over the sum of the medians a goal names, e.g. mcp-write's floor).
- **Contenders as their users run them.** Command-line contenders are the console scripts of
  the environment running the benchmark, each run a fresh process. Nothing changes how a
  contender loads: no `PYTHONPYCACHEPREFIX`, bytecode where the installation keeps it (an
  untimed warm-up run writes it for a package installed without it, as a default Python
  does). Warm-up runs are untimed.
- **Contenders that could flatter us are refused.** After the timed runs, each command-line
  contender runs once more under `PYTHONVERBOSE=1`: one that compiles Python sources on every
  warm run, or that loads distributions its own installation does not require (another
  package's extra installed them here; e.g. jsonschema imports `rfc3987-syntax`, which builds
  a parser at import, whenever it is installed), is **not comparable**; so is one whose first
  timed run took more than 3x its median. A contender that is not comparable gets no ratio,
  nor does anything measured against it; the report says why. Every timed contender's
  p90/median is shown.
- **Data checked first.** Every contender must accept the benchmark's data, and session-resume
  must give the expected answer, before anything is timed or counted; otherwise the benchmark
  is aborted with the reason.
- **Goals are reported, never enforced.** The goals table has one line per goal; a missed goal
  prints `target missed`, and where a CPU goal is missed the benchmark prints what the time is
  made of (a breakdown line under its table). Exit 1 means a benchmark could not run at all; a
  benchmark or contender that cannot run here says `not available: <reason>`. The test suite
  asserts no time: it runs `--smoke` (tiny data, two runs each) and tests the benchmarks' own
  logic on tiny data.
- `--quick` takes fewer runs, skips the largest benchmarks and uses 100 MB worklogs instead of
  1 GB; `--only NAME...` selects benchmarks; `--json FILE` writes every individual time.
  `python benchmarks/importtime.py` prints `-X importtime` profiles of two cold commands."""


def trimmed(report: dict[str, Any]) -> dict[str, Any]:
    """The run's JSON without the individual times (the page needs the medians only)."""
    out = dict(report)
    out["benchmarks"] = [
        {
            **res,
            "contenders": [
                {k: v for k, v in c.items() if k not in _BULKY} for c in res.get("contenders", [])
            ],
        }
        for res in report["benchmarks"]
    ]
    return out


def _marker(report: dict[str, Any]) -> str:
    m = report["machine"]
    load = m.get("load_average_at_start")
    load_text = f", load average {load[0]} at start" if load else ""
    ran = (
        f"The figures below are from one run: `{portable(report['command'])}`, started "
        f"{report['started']}, source `{m['source']}`{load_text}."
    )
    if load and m.get("cores") and load[0] > m["cores"]:
        ran += (
            f" **The machine was busy** (load average {load[0]} on {m['cores']} cores): every "
            "time is inflated, and ratios of short commands move with the load."
        )
    if report.get("default"):
        return ran
    kinds = [
        k
        for k, on in (
            ("--quick", report.get("quick")),
            ("--smoke", report.get("smoke")),
            (f"--only {' '.join(report.get('only') or [])}", report.get("only")),
            (f"--runs {report.get('runs')}", report.get("runs") is not None),
        )
        if on
    ]
    return (
        f"> **Not a default run** ({', '.join(kinds) or 'unknown options'}): these figures are "
        "not the ones this page is meant to show. Regenerate it from one default run on a "
        "quiet machine: `nox -s bench_docs`.\n\n" + ran
    )


def render(report: dict[str, Any]) -> str:
    runner.PENDING[:] = [(p["module"], p["what"], p["goal"]) for p in report.get("pending", [])]
    parts = [
        "# Benchmarks",
        "<!-- Generated by benchmarks/docpage.py from docs/benchmarks.json (one run of "
        "benchmarks/run.py); do not edit: `nox -s bench_docs` regenerates both. -->",
        _marker(report),
        "## Method",
        METHOD,
        "## Goals, side by side in this run",
        _md(["what", "measured", "goal", "met?"], runner.goal_rows(report["benchmarks"])),
    ]
    ran = {res["name"] for res in report["benchmarks"]}
    missing = [n for n in report.get("registered", []) if n not in ran]
    if missing:
        parts.append(f"Not in this run: {', '.join(missing)}.")
    for res in report["benchmarks"]:
        parts.append(f"## {res['name']}")
        parts.append(res["description"][:1].upper() + res["description"][1:] + ".")
        notes = res.get("notes") or []
        if notes:
            parts.append("\n".join(f"- data: {n}" for n in notes))
        parts.append(benchmark_table(res))
    parts += [
        "## The machine",
        machine_table(report),
        "The history of earlier rounds (what changed, with the figures of its time) is in "
        "[CHANGELOG.md](../CHANGELOG.md).",
    ]
    return "\n\n".join(parts) + "\n"


def write(run_json: Path) -> None:
    report = trimmed(json.loads(run_json.read_text(encoding="utf-8")))
    FIGURES.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    PAGE.write_text(render(report), encoding="utf-8")
    print(f"wrote {FIGURES.relative_to(runner.ROOT)} and {PAGE.relative_to(runner.ROOT)}")


def check() -> int:
    report = json.loads(FIGURES.read_text(encoding="utf-8"))
    if PAGE.read_text(encoding="utf-8") != render(report):
        print(
            f"{PAGE.relative_to(runner.ROOT)} is not what {FIGURES.relative_to(runner.ROOT)} "
            "gives: run `python benchmarks/docpage.py write RUN.json` (or `nox -s bench_docs`)",
            file=sys.stderr,
        )
        return 1
    return 0


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "write":
        write(Path(argv[2]))
        return 0
    if len(argv) == 2 and argv[1] == "check":
        return check()
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
