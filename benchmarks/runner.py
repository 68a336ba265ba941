"""The shared runner of the benchmarks: registry, timing, medians and ratios, the report.

Rules every benchmark follows:

* Contenders of one benchmark are timed alternately in ONE run, on this machine, with no
  network, in rounds whose order is shuffled (:func:`round_orders`); the report gives
  medians, p90s and ratios against the benchmark's anchor.
* A target is a ratio (``Target``: "session-resume <= 0.15x check-jsonschema"; against the
  anchor unless ``against`` names another contender; ``max_ratio=None`` reports the ratio with
  no goal) or, in a benchmark with a ``unit`` whose contenders return a value instead of being
  timed, a limit on that value (``Limit``: "peak RSS <= 60 MiB"). A benchmark may have several
  (``targets=``); the report ends with a goals table, one line per goal, side by side, and the
  goals of benchmarks not in this tree yet (``PENDING``) as "not measured". A missed target is
  reported ("target missed"), never enforced: the exit status is 0 unless a benchmark could
  not be run at all (its setup failed), which exits 1. Benchmarks are never timed assertions
  in the test suite.
* Command-line contenders are the console scripts installed next to ``sys.executable`` (the
  same environment for every contender). Each timed run is a fresh process ("cold") but on
  a warm machine: an untimed run of every contender first warms the OS file cache and
  session-resume's workflow cache (isolated in the benchmark's temporary directory, see
  ``commandline.bench_env``). A setup that already ran the exact timed commands to check the
  data counts as that warm-up (``warmup=0``). Every contender loads as installed: nothing
  redirects or disables its bytecode (no ``PYTHONPYCACHEPREFIX``).
* Contenders cannot flatter us (:func:`stability`): a timed contender whose first timed run
  takes more than ``FIRST_RUN_LIMIT`` times its median, or that compiles Python sources on
  every warm run (``Run.probe``: one untimed run under ``PYTHONVERBOSE=1`` after the timed
  ones, counting the modules whose code object came from a ``.py`` file, not its ``.pyc``),
  is reported "not comparable": no ratio against it or of it is printed, and its goals are not
  judged. Every timed contender's p90/median is reported.
* Benchmark data is checked before timing: every contender must accept it (exit 0), and
  session-resume must report no diagnostic at all, or the benchmark is aborted with the
  reason.
* A benchmark that cannot run HERE (a tool or an adapter not installed, not enough free disk)
  is reported as "not available: <reason>" (``BenchUnavailable``), which is not a failure; so is
  a single optional contender (``Prepared.unavailable``). The anchor is never optional.

Adding a benchmark: a module ``bench_<name>.py`` in this directory, listed in
``run.py``'s ``BENCHMARK_MODULES``, with a ``setup(tmpdir) -> {contender name: Run}`` function
decorated with ``@benchmark(...)`` (name, contenders, anchor, ``target=``/``targets=``, run
counts, and ``unit=`` for a benchmark whose contenders return a value instead of being timed),
which registers it. ``commandline.process(...)`` makes a Run that executes a command and fails the
benchmark on an unexpected exit status; any other zero-argument callable can be timed in
process with ``Run(call, shown)``. A setup may instead return ``Prepared(runs, notes=[...],
unavailable={contender: reason})``; notes (what the data is, its size) are printed with the
benchmark. ``derive(medians, info)`` returns extra report lines computed from the medians and
``Prepared.info`` (a breakdown, a throughput). A setup reads ``OPTIONS.quick`` and
``OPTIONS.smoke`` for the size of its data (``--smoke``: tiny data, a check that the benchmark
runs at all, not a measurement).
"""

from __future__ import annotations

import functools
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent  # console scripts of the environment running this file
EXAMPLE = ROOT / "examples" / "agent-output" / "contoso-portal" / "00-session-state.json"
SMOKE_RUNS = 2  # timed runs per contender under --smoke (two rounds)


# --- registry ------------------------------------------------------------------------------


class BenchAbort(Exception):
    """The benchmark cannot be run (bad setup data, a contender failed); says why."""


class BenchUnavailable(Exception):
    """The benchmark cannot run on this machine now (a missing tool, not enough disk): it is
    reported as "not available: <reason>", which does not fail the run."""


@dataclass(frozen=True)
class Run:
    """One prepared contender: ``call()`` is what gets timed; ``shown`` is how it is reported.
    ``before()``, if given, runs untimed right before every call (e.g. evicting a file from the
    page cache). In a benchmark with a ``unit`` (a value, not a time), ``call()`` returns the
    measured value (e.g. a child process's peak RSS in MiB) and is not timed."""

    call: Callable[[], Any]
    shown: str
    before: Callable[[], None] | None = None
    # untimed, once after the timed runs: {"compiled": the source files this contender
    # compiles in a warm run, "foreign": the distributions it loads that its installation
    # does not require}; both empty: it loads as installed (see ``commandline.probe``)
    probe: Callable[[], dict[str, list[str]]] | None = None


@dataclass
class Prepared:
    """What a setup may return instead of a bare ``{contender: Run}``: ``notes`` describe the
    data; ``unavailable`` names optional contenders that cannot run here, with the reason."""

    runs: dict[str, Run]
    notes: list[str] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)  # for ``derive``


@dataclass(frozen=True)
class Target:
    """``contender`` should take at most ``max_ratio`` times the median of ``against`` (the
    anchor if None; a tuple: the sum of those contenders' medians, a floor made of parts).
    ``max_ratio=None``: the ratio is reported, with no goal."""

    contender: str
    max_ratio: float | None
    against: str | tuple[str, ...] | None = None


@dataclass(frozen=True)
class Limit:
    """A value with a goal: in a benchmark with a ``unit``, ``contender``'s median value should
    be at most ``max_value`` (in that unit), e.g. a peak RSS of at most 60 MiB."""

    contender: str
    max_value: float


Goal = Target | Limit


SetupFn = Callable[[Path], dict[str, Run] | Prepared]
DeriveFn = Callable[[dict[str, float], dict[str, Any]], list[str]]


@dataclass(frozen=True)
class Benchmark:
    name: str
    description: str
    contenders: tuple[str, ...]
    anchor: str
    setup: SetupFn
    targets: tuple[Goal, ...]  # the goals; the first is reported as "target" in the table
    runs: int  # timed runs per contender (default mode)
    quick_runs: int | None  # under --quick; None = skipped under --quick
    warmup: int = 1  # untimed runs per contender before timing
    # extra report lines from the medians and the setup's Prepared.info
    derive: DeriveFn | None = None
    unit: str | None = None  # None: contenders are timed; else call() returns a value in it

    @property
    def target(self) -> Goal | None:
        return self.targets[0] if self.targets else None


BENCHMARKS: list[Benchmark] = []


@dataclass
class Options:
    """Run-wide options a setup may consult (set by ``run.py``)."""

    quick: bool = False
    smoke: bool = False  # tiny data, SMOKE_RUNS runs: does every benchmark still run?


OPTIONS = Options()


def benchmark(
    name: str,
    *,
    description: str,
    contenders: Sequence[str],
    anchor: str,
    target: Goal | None = None,
    targets: Sequence[Goal] = (),
    runs: int,
    quick_runs: int | None,
    warmup: int = 1,
    derive: DeriveFn | None = None,
    unit: str | None = None,
) -> Callable[[SetupFn], SetupFn]:
    """Register ``setup`` as a benchmark. ``setup(tmpdir)`` prepares the data in ``tmpdir``
    (a fresh empty directory), checks it, and returns one Run per contender. ``target`` and
    ``targets`` are its goals (ratios, or with ``unit`` limits on a value)."""
    goals = ((target,) if target is not None else ()) + tuple(targets)
    if anchor not in contenders:
        raise ValueError(f"{name}: anchor {anchor!r} is not a contender")
    for g in goals:
        others = [g.contender] + (list(_parts(g.against)) if isinstance(g, Target) else [])
        if any(c not in contenders for c in others):
            raise ValueError(f"{name}: goal {g} names a contender it does not have")
        if isinstance(g, Limit) and unit is None:
            raise ValueError(f"{name}: a Limit needs a benchmark with a unit")

    def register(setup: SetupFn) -> SetupFn:
        if any(b.name == name for b in BENCHMARKS):
            raise ValueError(f"benchmark {name!r} is registered twice")
        BENCHMARKS.append(
            Benchmark(
                name=name,
                description=description,
                contenders=tuple(contenders),
                anchor=anchor,
                setup=setup,
                targets=goals,
                runs=runs,
                quick_runs=quick_runs,
                warmup=warmup,
                derive=derive,
                unit=unit,
            )
        )
        return setup

    return register


# --- running one benchmark ----------------------------------------------------------------


def _parts(against: str | tuple[str, ...] | None) -> tuple[str, ...]:
    if against is None:
        return ()
    return (against,) if isinstance(against, str) else tuple(against)


def against_name(against: str | tuple[str, ...]) -> str:
    """How a goal's comparison is named: a contender, or "a + b" for a sum of them."""
    return " + ".join(_parts(against))


FIRST_RUN_LIMIT = 3.0  # a first timed run over 3x the median: the contender was not warm


def stability(
    times: Sequence[float], compiled: Sequence[str] = (), foreign: Sequence[str] = ()
) -> str | None:
    """Why a timed contender's figures cannot be compared with another's, or None if they
    can: its first timed run took more than ``FIRST_RUN_LIMIT`` times its median (a cache it
    fills on first use, a warm-up it did not get), it compiles ``compiled`` source files on
    every warm run, or it loads ``foreign`` distributions its own installation would not have
    (in both cases it does not load as its users' installation does)."""
    reasons: list[str] = []
    med = statistics.median(times)
    if med > 0 and times[0] > FIRST_RUN_LIMIT * med:
        reasons.append(
            f"its first timed run took {times[0] / med:.1f}x its median "
            f"(limit {FIRST_RUN_LIMIT:g}x): it was not warm"
        )
    if compiled:
        reasons.append(
            f"it compiles {len(compiled)} Python source file(s) on every warm run "
            f"(e.g. {compiled[0]}): it does not load bytecode as installed"
        )
    if foreign:
        reasons.append(
            f"it loads {', '.join(foreign)}, which its installation does not require (another "
            "package's extra put them in this environment): run it where only it is "
            "installed, e.g. `nox -s bench`"
        )
    return "; ".join(reasons) or None


def progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def p90(xs: Sequence[float]) -> float:
    if len(xs) < 2:
        return xs[0]
    return statistics.quantiles(xs, n=10, method="inclusive")[8]


def _prepare(b: Benchmark, tmpdir: Path, result: dict[str, Any]) -> Prepared:
    """Run the setup and check what it returned; notes go to the result."""
    progress(f"{b.name}: setup")
    t0 = time.perf_counter()
    try:
        got = b.setup(tmpdir)
    except (BenchAbort, BenchUnavailable):
        raise
    except Exception as exc:  # e.g. the package under test does not import
        raise BenchAbort(f"setup failed: {type(exc).__name__}: {exc}") from exc
    prepared = got if isinstance(got, Prepared) else Prepared(dict(got))
    if b.anchor in prepared.unavailable:
        raise BenchUnavailable(prepared.unavailable[b.anchor])
    missing = set(b.contenders) - set(prepared.runs) - set(prepared.unavailable)
    if missing:
        raise BenchAbort(f"setup returned no Run for {', '.join(sorted(missing))}")
    result["setup_s"] = round(time.perf_counter() - t0, 3)
    result["notes"] = list(prepared.notes)
    for note in prepared.notes:
        progress(f"  {note}")
    return prepared


def round_orders(names: list[str], seed: str) -> Iterator[list[str]]:
    """The order of every round: each contender once, shuffled with a seed fixed by the
    benchmark's name (the same orders in every run). No contender follows a given other one
    in most rounds: a heavy contender's after-effects (a CLI process leaves the caches cold,
    about 1 ms on the next call, whoever makes it) land on all alike. A plain rotation had
    the write service of mcp-write follow the CLI in three rounds of four, its MCP call never."""
    rng = random.Random(seed)
    while True:
        order = list(names)
        rng.shuffle(order)
        yield order


def _time(b: Benchmark, prepared: Prepared, runs: int, warmup: int) -> dict[str, list[float]]:
    """Warm up, then time every contender ``runs`` times, once a round in the round's order
    (:func:`round_orders`); with a ``unit``, record the value each call returns instead of
    its time."""
    order = [n for n in b.contenders if n in prepared.runs]
    for _ in range(warmup):
        for name in order:
            run = prepared.runs[name]
            if run.before is not None:
                run.before()
            run.call()
    times: dict[str, list[float]] = {name: [] for name in order}
    show = fmt_s if b.unit is None else functools.partial(fmt_value, unit=b.unit)
    last_report = 0.0
    for i, names in zip(range(runs), round_orders(order, b.name), strict=False):
        for name in names:
            run = prepared.runs[name]
            if run.before is not None:
                run.before()
            start = time.perf_counter()
            value = run.call()
            elapsed = time.perf_counter() - start
            times[name].append(elapsed if b.unit is None else float(value))
        now = time.perf_counter()
        if runs <= 50 or i + 1 == runs or now - last_report >= 2.0:
            last_report = now
            progress(
                f"{b.name}: round {i + 1}/{runs}: "
                + ", ".join(f"{n} {show(times[n][-1])}" for n in order)
            )
    return times


def _summarise(
    b: Benchmark,
    prepared: Prepared,
    times: dict[str, list[float]],
    tmpdir: Path,
    result: dict[str, Any],
    probed: dict[str, dict[str, list[str]]] | None = None,
) -> None:
    """Medians, p90s and ratios against the anchor (none against or of a contender that is not
    comparable); the derived lines; the goals' verdicts."""
    probed = probed or {}
    anchor_median = statistics.median(times[b.anchor])
    rows: list[dict[str, Any]] = []
    medians: dict[str, float] = {}
    unstable: dict[str, str] = {}
    if b.unit is None:
        for name, xs in times.items():
            found = probed.get(name, {})
            why = stability(xs, found.get("compiled", ()), found.get("foreign", ()))
            if why is not None:
                unstable[name] = why
    for name in b.contenders:
        if name not in times:
            rows.append({"name": name, "unavailable": prepared.unavailable[name]})
            continue
        xs = times[name]
        med = medians[name] = statistics.median(xs)
        row: dict[str, Any] = {
            "name": name,
            "command": prepared.runs[name].shown.replace(str(tmpdir), "$TMP"),
            "runs": len(xs),
        }
        if b.unit is None:
            row.update(median_s=med, p90_s=p90(xs), min_s=min(xs), times_s=xs)
            row["p90_over_median"] = p90(xs) / med if med > 0 else None
            row["first_over_median"] = xs[0] / med if med > 0 else None
            if name in probed:
                row["compiled_sources"] = len(probed[name].get("compiled", []))
                row["foreign_distributions"] = probed[name].get("foreign", [])
        else:
            row.update(unit=b.unit, median=med, max=max(xs), min=min(xs), values=xs)
        if name in unstable:
            row["not_comparable"] = unstable[name]
        if name in unstable or b.anchor in unstable:
            row["ratio_vs_anchor"] = None
        else:
            row["ratio_vs_anchor"] = med / anchor_median
        rows.append(row)
    result["contenders"] = rows
    if b.derive is not None:
        result["derived"] = b.derive(medians, prepared.info)
    result["targets"] = [_verdict(b, g, medians, unstable) for g in b.targets]
    for g in result["targets"]:
        if g["contender"] in prepared.unavailable:
            g["unavailable"] = prepared.unavailable[g["contender"]]
    if result["targets"]:
        result["met"] = result["targets"][0]["met"]


def _verdict(
    b: Benchmark, goal: Goal, medians: dict[str, float], unstable: dict[str, str] | None = None
) -> dict[str, Any]:
    """One goal, with what was measured and whether it is met (None: not checked). A goal
    that involves a contender that is not comparable gets no ratio, only the reason."""
    unstable = unstable or {}
    out = _goal_json(b, goal)
    if isinstance(goal, Limit):
        value = medians.get(goal.contender)
        out["value"] = value
        out["met"] = None if value is None else value <= goal.max_value
        return out
    parts = _parts(goal.against) or (b.anchor,)
    bad = [f"{n}: {unstable[n]}" for n in (goal.contender, *parts) if n in unstable]
    if bad:
        out["not_comparable"] = "; ".join(bad)
        out["met"] = None
    elif goal.contender in medians and all(p in medians for p in parts):
        ratio = medians[goal.contender] / sum(medians[p] for p in parts)
        out["ratio"] = ratio
        out["met"] = None if goal.max_ratio is None else ratio <= goal.max_ratio
    else:
        out["met"] = None
    return out


def _goal_json(b: Benchmark, goal: Goal) -> dict[str, Any]:
    if isinstance(goal, Limit):
        return {"contender": goal.contender, "max_value": goal.max_value, "unit": b.unit}
    return {
        "contender": goal.contender,
        "against": against_name(goal.against or b.anchor),
        "max_ratio": goal.max_ratio,
    }


def run_benchmark(
    b: Benchmark, runs: int, tmp_base: Path, warmup: int | None = None
) -> dict[str, Any]:
    """Set up, time and summarise ``b``; an abort or an unavailability is in the result."""
    result: dict[str, Any] = {
        "name": b.name,
        "description": b.description,
        "anchor": b.anchor,
        "unit": b.unit,
        "target": _goal_json(b, b.target) if b.target else None,
    }
    tmpdir = Path(tempfile.mkdtemp(prefix=f"{b.name}-", dir=tmp_base))
    try:
        prepared = _prepare(b, tmpdir, result)
        times = _time(b, prepared, runs, b.warmup if warmup is None else warmup)
        probed = _probe(b, prepared)
    except BenchUnavailable as exc:
        result["unavailable"] = str(exc)
        progress(f"{b.name}: not available: {exc}")
        return result
    except BenchAbort as exc:
        result["error"] = str(exc)
        progress(f"{b.name}: ABORTED: {exc}")
        return result
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    _summarise(b, prepared, times, tmpdir, result, probed)
    return result


def _probe(b: Benchmark, prepared: Prepared) -> dict[str, dict[str, list[str]]]:
    """Untimed, after the timed runs: what each probed contender compiles and loads."""
    out: dict[str, dict[str, list[str]]] = {}
    if b.unit is not None:
        return out
    for name, run in prepared.runs.items():
        if run.probe is not None:
            out[name] = run.probe()
    return out


def check_scratch_base(base: Path) -> None:
    """Refuse a temporary directory inside a git work tree (nox's session tmp is inside the
    checkout): the benchmarks' sessions would sit in an ignored folder of that repository, so
    `validate DIR` would list none of them and `--project` would name the outer repository's."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(base), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:  # no git: no work tree to be inside of
        return
    if proc.returncode == 0:
        raise SystemExit(
            f"benchmarks: the temporary directory {base} is inside the git work tree "
            f"{proc.stdout.strip()}; run with TMPDIR set to a directory outside any "
            "repository (e.g. `TMPDIR=/tmp python benchmarks/run.py`)"
        )


def run_selected(
    selected: Sequence[Benchmark], *, only: bool, runs: int | None
) -> tuple[list[dict[str, Any]], list[str]]:
    """Run the selected benchmarks with the run counts OPTIONS asks for; the results, and the
    names of the benchmarks --quick skipped."""
    results: list[dict[str, Any]] = []
    skipped: list[str] = []
    check_scratch_base(Path(tempfile.gettempdir()))
    with tempfile.TemporaryDirectory(prefix="session-resume-bench-") as tmp:
        for b in selected:
            n, warmup = b.runs, None
            if OPTIONS.smoke:
                n, warmup = SMOKE_RUNS, 0
            elif OPTIONS.quick:
                if b.quick_runs is None and not only:
                    skipped.append(b.name)
                    continue
                n = b.quick_runs or b.runs
            if runs is not None:
                n = runs
            results.append(run_benchmark(b, n, Path(tmp), warmup))
    return results, skipped


# --- the report -----------------------------------------------------------------------------


def fmt_ratio(x: float) -> str:
    return f"{x:.3f}x"


def fmt_s(x: float) -> str:
    """A duration with a unit that keeps three or four significant digits."""
    if x >= 1:
        return f"{x:.3f} s"
    if x >= 1e-3:
        return f"{x * 1e3:.2f} ms"
    return f"{x * 1e6:.1f} us"


def fmt_value(x: float, unit: str) -> str:
    if unit == "s":  # a duration returned as the value (a command's own wall time)
        return fmt_s(x)
    if unit == "chars":  # a count of characters
        return f"{x:,.0f} chars"
    return f"{x:.1f} {unit}"


_UNIT_NAMES = {"chars": "characters", "s": "seconds"}
_HEADER = [
    "benchmark", "contender", "median", "p90", "p90/med", "runs", "ratio vs anchor", "target",
    "met?",
]  # fmt: skip
_MET = {True: "yes", False: "NO - target missed", None: "not checked"}
NOT_COMPARABLE = "not comparable"


def fmt_anchor_ratio(c: dict[str, Any]) -> str:
    """A contender's ratio against the anchor, or "not comparable"."""
    ratio = c.get("ratio_vs_anchor")
    return NOT_COMPARABLE if ratio is None else fmt_ratio(ratio)


def fmt_spread(c: dict[str, Any]) -> str:
    """p90/median of a timed contender ("-" for a value)."""
    x = c.get("p90_over_median")
    return "-" if x is None else f"{x:.2f}"


def _met_text(goal: dict[str, Any]) -> str:
    if "not_comparable" in goal:
        return NOT_COMPARABLE
    if "unavailable" in goal:
        return "not available"
    return "" if goal.get("max_ratio", 0) is None else _MET[goal["met"]]


def _goal_text(goal: dict[str, Any], anchor: str) -> str:
    """How the contender table shows a goal: "<= 0.15x", "<= 4.00x python -I -c pass",
    "<= 60.0 MiB", "reported"."""
    if "max_value" in goal:
        return f"<= {fmt_value(goal['max_value'], goal['unit'])}"
    text = "reported" if goal["max_ratio"] is None else f"<= {goal['max_ratio']:.2f}x"
    return text if goal["against"] == anchor else f"{text} vs {goal['against']}"


def _table_rows(res: dict[str, Any]) -> list[list[str]]:
    """The table rows of one benchmark: one per contender, with the goal column (a contender
    with several goals gets one line per goal)."""
    if "error" in res:
        return [[res["name"], "-", "-", "-", "-", "-", "-", "-", "ABORTED (see above)"]]
    if "unavailable" in res:
        return [[res["name"], "-", "-", "-", "-", "-", "-", "-", "not available (see above)"]]
    rows: list[list[str]] = []
    unit = res.get("unit")
    for c in res["contenders"]:
        goals = [
            (_goal_text(g, res["anchor"]), _met_text(g))
            for g in res.get("targets", [])
            if g["contender"] == c["name"]
        ]
        if not goals:
            goals = [("(anchor)" if c["name"] == res["anchor"] else "-", "")]
        for n, (target, met) in enumerate(goals):
            if n:
                rows.append(["", "", "", "", "", "", "", target, met])
            elif "unavailable" in c:
                rows.append(
                    [res["name"], c["name"], "-", "-", "-", "-", "-", target, "not available"]
                )
            elif unit is None:
                rows.append(
                    [
                        res["name"],
                        c["name"],
                        fmt_s(c["median_s"]),
                        fmt_s(c["p90_s"]),
                        fmt_spread(c),
                        str(c["runs"]),
                        fmt_anchor_ratio(c),
                        target,
                        met,
                    ]
                )
            else:  # a value: the p90 column shows the largest value
                rows.append(
                    [
                        res["name"],
                        c["name"],
                        fmt_value(c["median"], unit),
                        "max " + fmt_value(c["max"], unit),
                        "-",
                        str(c["runs"]),
                        fmt_anchor_ratio(c),
                        target,
                        met,
                    ]
                )
    return rows


def _render(header: list[str], rows: list[list[str]], right: set[int]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out.extend(line(r) for r in rows)
    return "\n".join(out)


def render_table(results: list[dict[str, Any]]) -> str:
    rows = [row for res in results for row in _table_rows(res)]
    return _render(_HEADER, rows, {2, 3, 4, 5, 6})


# Goals whose benchmark is not in this tree yet: (module, what, goal), listed in the goals
# table as "not measured" until the module exists (then its own goals replace the line).
PENDING: list[tuple[str, str, str]] = []

_GOALS_HEADER = ["what", "measured", "goal", "met?"]


def goal_rows(results: list[dict[str, Any]]) -> list[list[str]]:
    """One line per goal of every benchmark run: what is compared, the measured ratio or
    value, the goal and the verdict; then the pending goals."""
    rows: list[list[str]] = []
    for res in results:
        for g in res.get("targets", []):
            if "max_value" in g:
                what = f"{res['name']}: {g['contender']}"
                value = g.get("value")
                measured = "-" if value is None else fmt_value(value, g["unit"])
                goal = f"<= {fmt_value(g['max_value'], g['unit'])}"
                met = _MET[g["met"]]
            else:
                what = f"{res['name']}: {g['contender']} vs {g['against']}"
                ratio = g.get("ratio")
                measured = "-" if ratio is None else fmt_ratio(ratio)
                goal = "reported" if g["max_ratio"] is None else f"<= {g['max_ratio']:.2f}x"
                met = _met_text(g)
                if "not_comparable" in g:
                    measured = NOT_COMPARABLE
            if "error" in res or "unavailable" in res:
                measured, met = "-", "not run (see above)"
            rows.append([what, measured, goal, met])
    for module, what, goal in PENDING:
        rows.append([what, "-", goal, f"not measured: benchmarks/{module}.py is not here yet"])
    return rows


def render_goals(results: list[dict[str, Any]]) -> str:
    return _render(_GOALS_HEADER, goal_rows(results), {1})


def print_header(command: str, machine: dict[str, Any]) -> None:
    print(f"command:  {command}")
    print(
        f"machine:  {machine['platform']}; {machine['cpu']}; {machine['cores']} cores; "
        f"{machine['python']}"
    )
    print("versions: " + ", ".join(f"{k} {v}" for k, v in machine["versions"].items()))
    print(f"source:   {machine['source']}")
    print(f"temp dir: {machine['temp_dir']}")
    if "load_average_at_start" in machine:
        print(f"load avg: {' '.join(str(x) for x in machine['load_average_at_start'])} (at start)")
    print(flush=True)


def print_results(
    results: list[dict[str, Any]], skipped: list[str], elapsed: float, machine: dict[str, Any]
) -> None:
    """Each benchmark's commands, data notes and derived lines; the table; missed targets."""
    print()
    for res in results:
        print(f"{res['name']}: {res['description']}")
        for note in res.get("notes", []):
            print(f"    data: {note}")
        for c in res.get("contenders", []):
            if "unavailable" in c:
                print(f"    {c['name']}: not available: {c['unavailable']}")
            else:
                print(f"    {c['name']}: {c['command']}")
            if "not_comparable" in c:
                print(f"    {c['name']}: NOT COMPARABLE: {c['not_comparable']}")
        for extra in res.get("derived", []):
            print(f"    => {extra}")
        if "error" in res:
            print(f"    ABORTED: {res['error']}")
        if "unavailable" in res:
            print(f"    not available: {res['unavailable']}")
    print()
    print(render_table(results))
    print()
    print("goals, side by side in this run:")
    print(render_goals(results))
    print()
    for res in results:
        for g in res.get("targets", []):
            if "not_comparable" in g:
                print(
                    f"not comparable: {res['name']}: {g['contender']} vs {g['against']}: "
                    f"no ratio ({g['not_comparable']})"
                )
            if g["met"] is not False:
                continue
            if "max_value" in g:
                print(
                    f"target missed: {res['name']}: {g['contender']} measured "
                    f"{fmt_value(g['value'], g['unit'])} "
                    f"(target <= {fmt_value(g['max_value'], g['unit'])})"
                )
            else:
                unit = res.get("unit")
                what = "the time" if unit is None else f"the {_UNIT_NAMES.get(unit, unit)}"
                print(
                    f"target missed: {res['name']}: {g['contender']} "
                    f"{'takes' if unit is None else 'measures'} "
                    f"{fmt_ratio(g['ratio'])} {what} of {g['against']} "
                    f"(target <= {g['max_ratio']:.2f}x)"
                )
    if skipped:
        print(f"skipped under --quick: {', '.join(skipped)}")
    if OPTIONS.smoke:
        print(f"--smoke: tiny data, {SMOKE_RUNS} runs each; these figures are not measurements")
    print(f"total time: {elapsed:.0f} s")
    if "load_average_at_end" in machine:
        print(f"load avg: {' '.join(str(x) for x in machine['load_average_at_end'])} (at end)")


def write_json(
    path: str,
    *,
    command: str,
    started: datetime,
    elapsed: float,
    machine: dict[str, Any],
    skipped: list[str],
    results: list[dict[str, Any]],
    only: Sequence[str] | None = None,
    runs: int | None = None,
    registered: Sequence[str] = (),
) -> None:
    """The figures as JSON: every individual time, the machine, the source revision, and
    what kind of run it was (``default``: no --quick, --smoke, --only or --runs)."""
    payload = {
        "format": 1,
        "command": command,
        "started": started.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "elapsed_s": round(elapsed, 1),
        "quick": OPTIONS.quick,
        "smoke": OPTIONS.smoke,
        "only": list(only) if only else None,
        "runs": runs,
        "default": not (OPTIONS.quick or OPTIONS.smoke or only or runs is not None),
        "registered": list(registered),
        "machine": machine,
        "skipped": skipped,
        "benchmarks": results,
        "pending": [{"module": m, "what": w, "goal": g} for m, w, g in PENDING],
    }
    Path(path).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")
