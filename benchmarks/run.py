"""Side-by-side benchmarks of session-resume against its anchors.

Run with ``nox -s bench`` (or ``python benchmarks/run.py``)::

    python benchmarks/run.py [--quick] [--only NAME ...] [--runs N] [--json FILE] [--list]

Rules these benchmarks follow:

* Contenders of one benchmark are timed alternately in ONE run, on this machine, with no
  network; the report gives medians, p90s and ratios against the benchmark's anchor.
* A target is a ratio (e.g. "session-resume <= 0.2x check-jsonschema"). A missed target is
  reported ("target missed"), never enforced: the exit status is 0 unless a benchmark could
  not be run at all (its setup failed), which exits 1. Benchmarks are never timed assertions
  in the test suite.
* Command-line contenders are the console scripts installed next to ``sys.executable`` (the
  same environment for every contender). Each timed run is a fresh process ("cold") but on
  a warm machine: an untimed run of every contender first warms the OS file cache, the
  bytecode cache and session-resume's workflow cache (both isolated in the benchmark's
  temporary directory, see ``bench_env``). A setup that already ran the exact timed commands
  to check the data counts as that warm-up (``warmup=0``).
* Benchmark data is checked before timing: every contender must accept it (exit 0), and
  session-resume must report no diagnostic at all, or the benchmark is aborted with the
  reason.

Adding a benchmark: write a ``setup(tmpdir) -> {contender name: Run}`` function and decorate
it with ``@benchmark(...)`` (name, contenders, anchor, target, run counts). ``process(...)``
makes a Run that executes a command and fails the benchmark on an unexpected exit status;
any other zero-argument callable can be timed in process with ``Run(call, shown)``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent  # console scripts of the environment running this file
SCHEMA_3 = ROOT / "schema" / "session-state" / "3.0.json"
EXAMPLE = ROOT / "examples" / "agent-output" / "contoso-portal" / "00-session-state.json"
STATE_FILE = "00-session-state.json"


# --- registry ------------------------------------------------------------------------------


class BenchAbort(Exception):
    """The benchmark cannot be run (bad setup data, a contender failed); says why."""


@dataclass(frozen=True)
class Run:
    """One prepared contender: ``call()`` is what gets timed; ``shown`` is how it is reported."""

    call: Callable[[], None]
    shown: str


@dataclass(frozen=True)
class Target:
    """``contender`` should take at most ``max_ratio`` times the anchor's median."""

    contender: str
    max_ratio: float


@dataclass(frozen=True)
class Benchmark:
    name: str
    description: str
    contenders: tuple[str, ...]
    anchor: str
    setup: Callable[[Path], dict[str, Run]]
    target: Target | None
    runs: int  # timed runs per contender (default mode)
    quick_runs: int | None  # under --quick; None = skipped under --quick
    warmup: int = 1  # untimed runs per contender before timing


BENCHMARKS: list[Benchmark] = []


def benchmark(
    name: str,
    *,
    description: str,
    contenders: Sequence[str],
    anchor: str,
    target: Target | None,
    runs: int,
    quick_runs: int | None,
    warmup: int = 1,
) -> Callable[[Callable[[Path], dict[str, Run]]], Callable[[Path], dict[str, Run]]]:
    """Register ``setup`` as a benchmark. ``setup(tmpdir)`` prepares the data in ``tmpdir``
    (a fresh empty directory), checks it, and returns one Run per contender."""
    if anchor not in contenders:
        raise ValueError(f"{name}: anchor {anchor!r} is not a contender")
    if target is not None and target.contender not in contenders:
        raise ValueError(f"{name}: target contender {target.contender!r} is not a contender")

    def register(setup: Callable[[Path], dict[str, Run]]) -> Callable[[Path], dict[str, Run]]:
        if any(b.name == name for b in BENCHMARKS):
            raise ValueError(f"benchmark {name!r} is registered twice")
        BENCHMARKS.append(
            Benchmark(
                name=name,
                description=description,
                contenders=tuple(contenders),
                anchor=anchor,
                setup=setup,
                target=target,
                runs=runs,
                quick_runs=quick_runs,
                warmup=warmup,
            )
        )
        return setup

    return register


# --- helpers for command-line contenders ------------------------------------------------------


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
            f"{what}: `{_abbrev(argv)}` exited {res.returncode}; the benchmark data must be "
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


def _abbrev(argv: Sequence[str], keep: int = 3) -> str:
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


# --- realistic state files -----------------------------------------------------------------

_BASE_TIME = datetime(2025, 1, 6, 8, 0, tzinfo=UTC)  # all generated times lie in 2025
_ORGS = [
    "contoso", "fabrikam", "northwind", "adventure-works", "tailspin", "woodgrove", "litware",
    "proseware", "wingtip", "alpine-ski", "margies-travel", "fourth-coffee", "relecloud",
]  # fmt: skip
_APPS = [
    "portal", "api", "data-platform", "landing-zone", "payments", "analytics", "intranet",
    "iot-hub", "ml-ops", "edge-cache", "crm-sync", "booking", "reporting", "search",
]  # fmt: skip
_REGIONS = [
    "swedencentral", "westeurope", "northeurope", "germanywestcentral", "francecentral",
    "uksouth", "eastus2", "centralus", "australiaeast", "japaneast",
]  # fmt: skip
_COMPLIANCE = ["None", "GDPR", "HIPAA", "PCI-DSS", "ISO 27001", "SOC 2", "GDPR, ISO 27001"]
_PATTERNS = [
    "hub-spoke web app", "serverless API", "n-tier web app", "event-driven microservices",
    "data lakehouse", "AKS microservices", "static web app + Functions",
]  # fmt: skip
_STRATEGIES = ["phased", "single deployment", "blue-green", "canary by region"]
_FINDINGS = [
    "No disaster-recovery target stated for the order database",
    "Key Vault soft-delete retention below policy minimum",
    "Public network access enabled on the storage account",
    "No budget alert configured for the subscription",
    "Diagnostic settings missing on the application gateway",
    "TLS 1.0 still allowed on the legacy API endpoint",
    "Single-zone deployment for a tier-1 workload",
    "Managed identity not used for the SQL connection",
]  # fmt: skip
_MODELS = ["gpt-5", "claude-sonnet-4.5", "gemini-2.5-pro", "gpt-5-mini"]
_GENERIC_STEPS = ["Plan", "Spike", "Build", "Test", "Review", "Release", "Retro"]


@dataclass(frozen=True)
class _StepSpec:
    key: str
    name: str
    agents: tuple[str, ...]
    checkpoints: tuple[str, ...]  # empty: any non-empty id (free workflows) or none
    max_files: int | None
    startup_files: tuple[str, ...]
    optional: bool
    review_audited: bool


def _ts(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _step_specs(wf: Any, rng: random.Random) -> list[_StepSpec]:
    if not wf.free_steps:
        return [
            _StepSpec(
                key=s.key,
                name=s.name,
                agents=s.agents,
                checkpoints=tuple(s.checkpoint_ids),
                max_files=s.budget.max_startup_files if s.budget else None,
                startup_files=s.budget.startup_files if s.budget else (),
                optional=s.optional,
                review_audited=s.review_audited,
            )
            for s in wf.steps
        ]
    # A free workflow: the project picks its own steps (sub-steps keyed like 3_1).
    names = _GENERIC_STEPS[: rng.randint(3, len(_GENERIC_STEPS))]
    keys, major, minor = [], 0, 0
    for _ in names:  # keys in numeric order, the order a free workflow sorts them in
        if major and rng.random() < 0.15:
            minor += rng.randint(1, 4)
            keys.append(f"{major}_{minor}")
        else:
            major, minor = major + 1, 0
            keys.append(str(major))
    return [
        _StepSpec(k, n, (f"{_slug(n)}-agent",), (), None, (), False, False)
        for k, n in zip(keys, names, strict=True)
    ]


def make_state(index: int, wf: Any, rng: random.Random) -> dict[str, Any]:
    """A valid v3.0 state of workflow ``wf`` at a random stage of its run."""
    project = f"{rng.choice(_ORGS)}-{rng.choice(_APPS)}-{index:05d}"
    session_dir = wf.session_dir.format(project=project)
    clock = _BASE_TIME + timedelta(days=rng.randrange(0, 300), minutes=rng.randrange(0, 1440))
    events = 0

    def tick(lo: int = 3, hi: int = 180) -> str:
        nonlocal clock, events
        clock += timedelta(minutes=rng.randint(lo, hi), seconds=rng.randint(0, 59))
        events += 1
        return _ts(clock)

    specs = _step_specs(wf, rng)
    n = len(specs)
    done = min(n, int(rng.triangular(0, n + 1, n / 2)))  # most projects are mid-way
    active = done < n and (done > 0 or rng.random() < 0.6) and rng.random() < 0.85
    iac = rng.choice(["Bicep", "Terraform"])
    region = rng.choice(_REGIONS)
    complexity = rng.choice(["simple", "standard", "standard", "complex"])

    def agent_for(spec: _StepSpec) -> str:
        if len(spec.agents) == 1:
            return spec.agents[0]
        by_tool = [a for a in spec.agents if iac in a]
        return by_tool[0] if by_tool else rng.choice(spec.agents)

    def context_files(spec: _StepSpec) -> list[str]:
        names = list(spec.startup_files) or [STATE_FILE, "01-notes.md", "02-plan.md"]
        limit = spec.max_files if spec.max_files is not None else len(names)
        return [f"{session_dir}/{f}" for f in names[: rng.randint(1, min(limit, len(names)))]]

    steps: dict[str, Any] = {}
    log_steps: list[tuple[str, str, str]] = []  # (step key, agent, time) for the decision log
    review_audit: dict[str, Any] = {}
    for i, spec in enumerate(specs):
        rec: dict[str, Any] = {
            "name": spec.name,
            "agent": agent_for(spec) if i <= done or len(spec.agents) == 1 else "",
            "status": "pending",
            "sub_step": None,
            "started": None,
            "completed": None,
            "artifacts": [],
            "context_files_used": [],
        }
        if i < done and spec.optional and rng.random() < 0.35:
            rec.update(status="skipped", skip_reason="not needed for this project")
        elif i < done:
            rec["started"] = tick()
            rec["context_files_used"] = context_files(spec)
            artifacts = [f"{session_dir}/{i + 1:02d}-{_slug(spec.name)}.md"]
            if rng.random() < 0.3:
                artifacts.append(f"{session_dir}/{i + 1:02d}-{_slug(spec.name)}-diagram.png")
            rec["artifacts"] = artifacts
            log_steps.append((spec.key, rec["agent"], tick(1, 30)))
            rec["completed"] = tick()
            rec["status"] = "complete"
            if rng.random() < 0.3:
                rec["attempts"] = rng.randint(1, 3)
            if rng.random() < 0.25:
                rec["telemetry"] = {
                    "step_start_iso": rec["started"],
                    "step_end_iso": rec["completed"],
                    "elapsed_ms": rng.randint(60_000, 9_000_000),
                    "input_tokens": rng.randint(10_000, 900_000),
                    "output_tokens": rng.randint(1_000, 90_000),
                    "subagent_count": rng.randint(0, 6),
                }
            if spec.review_audited and not wf.free_steps:
                planned = {"simple": 1, "standard": 2, "complex": 3}[complexity]
                executed = planned if rng.random() < 0.8 else planned - 1
                review_audit[f"step_{spec.key}"] = {
                    "complexity": complexity,
                    "passes_planned": planned,
                    "passes_executed": executed,
                    "skipped": list(range(executed + 1, planned + 1)),
                    "skip_reasons": [f"pass {executed}: 0 must_fix"] if executed < planned else [],
                    "models_used": [rng.choice(_MODELS) for _ in range(executed)],
                }
        elif i == done and active:
            rec["started"] = tick()
            rec["status"] = "in_progress"
            rec["context_files_used"] = context_files(spec)
            if spec.checkpoints:
                reached = rng.randint(0, len(spec.checkpoints) - 1)
                rec["sub_step"] = spec.checkpoints[reached - 1] if reached else None
            elif wf.free_steps and rng.random() < 0.6:
                rec["sub_step"] = f"phase_{rng.randint(1, 4)}"
            if rng.random() < 0.4:
                rec["artifacts"] = [f"{session_dir}/{i + 1:02d}-{_slug(spec.name)}.draft.md"]
            log_steps.append((spec.key, rec["agent"], rec["started"]))
        if rng.random() < 0.05:
            rec["x-ui"] = {"collapsed": rec["status"] != "in_progress"}
        steps[spec.key] = rec

    if active:
        current = int(specs[done].key.split("_")[0])
    elif done:
        current = int(specs[done - 1].key.split("_")[0])
    else:
        current = 0

    decision_log = []
    n_log = rng.randint(0, 1 + 2 * len(log_steps)) if log_steps else 0
    picks = sorted((rng.choice(log_steps) for _ in range(n_log)), key=lambda p: p[2])
    for d, (key, agent, when) in enumerate(picks):
        entry: dict[str, Any] = {
            "id": f"D{d + 1:03d}",
            "step": int(key) if key.isdigit() else key,
            "agent": agent,
            "title": rng.choice(["Region", "IaC tool", "Network topology", "SKU", "Identity"]),
            "choice": rng.choice([region, iac, "private endpoints", "P1v3", "managed identity"]),
            "rationale": "Agreed with the product owner after comparing cost and risk.",
            "timestamp": when,
        }
        if rng.random() < 0.3:
            entry["alternatives"] = rng.sample(_REGIONS, 2)
        decision_log.append(entry)
    if len(decision_log) >= 2 and rng.random() < 0.2:
        decision_log[0]["status"] = "superseded"
        decision_log[0]["superseded_by"] = decision_log[-1]["id"]

    decisions: dict[str, Any] = {}
    values = {
        "region": region,
        "compliance": rng.choice(_COMPLIANCE),
        "budget": f"~${rng.choice([50, 150, 400, 1200, 5000])}/mo",
        "architecture_pattern": rng.choice(_PATTERNS) if done >= 2 else "",
        "deployment_strategy": rng.choice(_STRATEGIES) if done >= 5 else "",
        "iac_tool": iac if done >= 1 else "",
    }
    for dk in wf.decisions:
        if dk.key == "iac_tool" or dk.key in values:
            decisions[dk.key] = values.get(dk.key, "")
        elif dk.key == "complexity":
            decisions[dk.key] = complexity
        elif dk.enum is not None:
            if dk.required or rng.random() < 0.5:
                decisions[dk.key] = rng.choice(list(dk.enum))
        elif dk.required:
            decisions[dk.key] = ""
    if not wf.decisions:  # workflows without decision keys still record some
        decisions.update(
            language=rng.choice(["Python", "TypeScript", "Go", "C#"]),
            test_framework=rng.choice(["pytest", "vitest", "go test", "xunit"]),
        )

    doc: dict[str, Any] = {}
    if rng.random() < 0.5:
        doc["$schema"] = "https://schemas.session-resume.dev/session-state/3.0.json"
    doc.update(schema_version="3.0", project=project, workflow=wf.id)
    field_values = {
        "iac_tool": iac if done >= 1 else "",
        "region": region,
        "branch": rng.choice(["main", "main", "develop", f"feature/{project}"]),
    }
    for f in wf.fields:
        if f.name in field_values:
            doc[f.name] = field_values[f.name]
        elif f.required:
            doc[f.name] = f.schema.get("default", "")
    findings = rng.sample(_FINDINGS, rng.choice([0, 0, 1, 1, 2, 3]))
    doc.update(
        revision=events + rng.randint(0, 5),
        updated=tick(1, 60),
        current_step=current,
        decisions=decisions,
        decision_log=decision_log,
        open_findings=findings,
        steps=steps,
    )
    if review_audit:
        doc["review_audit"] = review_audit
    return doc


def write_states(top: Path, count: int, seed: int) -> list[str]:
    """``count`` distinct valid states under ``top/agent-output/<project>/``; relative paths
    (to ``top``) of the files, in the order a sorted directory walk finds them."""
    from session_resume import load_workflow  # type: ignore[import-untyped]

    rng = random.Random(seed)
    mix = (
        [load_workflow("apex")] * 16 + [load_workflow("dotagent")] * 3 + [load_workflow("generic")]
    )
    paths = []
    for i in range(count):
        doc = make_state(i, rng.choice(mix), rng)
        rel = f"agent-output/{doc['project']}/{STATE_FILE}"
        target = top / rel
        target.parent.mkdir(parents=True)
        indent = rng.choice([2, 2, 2, 4, None])
        target.write_text(
            json.dumps(doc, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        paths.append(rel)
    return sorted(paths)


# --- the benchmarks ----------------------------------------------------------------------------


@benchmark(
    "validate-cold-single",
    description="one cold process validating the bundled example state (valid, v3.0)",
    contenders=("session-resume", "check-jsonschema"),
    anchor="check-jsonschema",
    target=Target("session-resume", 0.2),
    runs=30,
    quick_runs=15,
)
def validate_cold_single(tmpdir: Path) -> dict[str, Run]:
    env = bench_env(tmpdir)
    shutil.copyfile(EXAMPLE, tmpdir / STATE_FILE)
    sr = [tool("session-resume"), "validate", STATE_FILE, "--root", str(tmpdir)]
    cj = [tool("check-jsonschema"), "--schemafile", str(SCHEMA_3), STATE_FILE]
    expect_session_resume_clean(check_output(sr, cwd=tmpdir, env=env, what="setup"), 1)
    check_output(cj, cwd=tmpdir, env=env, what="setup")
    return {
        "session-resume": process(sr, cwd=tmpdir, env=env),
        "check-jsonschema": process(cj, cwd=tmpdir, env=env),
    }


def _batch(tmpdir: Path, count: int) -> dict[str, Run]:
    env = bench_env(tmpdir)
    t0 = time.perf_counter()
    files = write_states(tmpdir, count, seed=count)
    _progress(f"  generated {count} state files in {time.perf_counter() - t0:.1f} s")
    sr = [tool("session-resume"), "validate", "agent-output", "--root", str(tmpdir)]
    cj = [tool("check-jsonschema"), "--schemafile", str(SCHEMA_3), *files]
    expect_session_resume_clean(check_output(sr, cwd=tmpdir, env=env, what="setup"), count)
    check_output(cj, cwd=tmpdir, env=env, what="setup")
    return {
        "session-resume": process(sr, cwd=tmpdir, env=env),
        "check-jsonschema": process(cj, cwd=tmpdir, env=env, shown=_abbrev(cj)),
    }


@benchmark(
    "validate-batch-1000",
    description="1,000 distinct valid states in one call (session-resume also runs its "
    "semantic and workflow rules)",
    contenders=("session-resume", "check-jsonschema"),
    anchor="check-jsonschema",
    target=Target("session-resume", 0.2),
    runs=7,
    quick_runs=5,
    warmup=0,  # setup's check runs the exact timed commands once: that is the warm-up
)
def validate_batch_1000(tmpdir: Path) -> dict[str, Run]:
    return _batch(tmpdir, 1000)


@benchmark(
    "validate-batch-10000",
    description="10,000 distinct valid states in one call",
    contenders=("session-resume", "check-jsonschema"),
    anchor="check-jsonschema",
    target=Target("session-resume", 0.2),
    runs=5,
    quick_runs=None,
    warmup=0,  # as above
)
def validate_batch_10000(tmpdir: Path) -> dict[str, Run]:
    return _batch(tmpdir, 10_000)


# --- running and reporting ----------------------------------------------------------------------


def _progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def p90(xs: Sequence[float]) -> float:
    if len(xs) < 2:
        return xs[0]
    return statistics.quantiles(xs, n=10, method="inclusive")[8]


def run_benchmark(b: Benchmark, runs: int, tmp_base: Path) -> dict[str, Any]:
    result: dict[str, Any] = {
        "name": b.name,
        "description": b.description,
        "anchor": b.anchor,
        "target": {"contender": b.target.contender, "max_ratio": b.target.max_ratio}
        if b.target
        else None,
    }
    tmpdir = Path(tempfile.mkdtemp(prefix=f"{b.name}-", dir=tmp_base))
    try:
        _progress(f"{b.name}: setup")
        t0 = time.perf_counter()
        try:
            prepared = b.setup(tmpdir)
        except BenchAbort:
            raise
        except Exception as exc:  # e.g. the package under test does not import
            raise BenchAbort(f"setup failed: {type(exc).__name__}: {exc}") from exc
        missing = set(b.contenders) - set(prepared)
        if missing:
            raise BenchAbort(f"setup returned no Run for {', '.join(sorted(missing))}")
        result["setup_s"] = round(time.perf_counter() - t0, 3)
        for _ in range(b.warmup):
            for name in b.contenders:
                prepared[name].call()
        times: dict[str, list[float]] = {name: [] for name in b.contenders}
        order = list(b.contenders)
        for i in range(runs):
            # Interleaved, and the order rotates every round so no contender always goes first.
            k = i % len(order)
            for name in order[k:] + order[:k]:
                start = time.perf_counter()
                prepared[name].call()
                times[name].append(time.perf_counter() - start)
            _progress(
                f"{b.name}: round {i + 1}/{runs}: "
                + ", ".join(f"{n} {times[n][-1]:.3f} s" for n in order)
            )
    except BenchAbort as exc:
        result["error"] = str(exc)
        _progress(f"{b.name}: ABORTED: {exc}")
        return result
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)

    anchor_median = statistics.median(times[b.anchor])
    rows: list[dict[str, Any]] = []
    for name in b.contenders:
        xs = times[name]
        med = statistics.median(xs)
        rows.append(
            {
                "name": name,
                "command": prepared[name].shown.replace(str(tmpdir), "$TMP"),
                "runs": len(xs),
                "median_s": med,
                "p90_s": p90(xs),
                "min_s": min(xs),
                "ratio_vs_anchor": med / anchor_median,
                "times_s": xs,
            }
        )
    result["contenders"] = rows
    if b.target:
        ratio = next(r["ratio_vs_anchor"] for r in rows if r["name"] == b.target.contender)
        result["met"] = ratio <= b.target.max_ratio
    return result


def machine_info() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    versions: dict[str, str] = {}
    from importlib import metadata

    for dist in ("session-resume", "check-jsonschema", "jsonschema", "jsonschema-rs"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "executable": sys.executable,
        "versions": versions,
    }
    info["source"] = _source_revision()
    if hasattr(os, "getloadavg"):
        info["load_average_at_start"] = [round(x, 2) for x in os.getloadavg()]
    return info


def _source_revision() -> str:
    """The git commit of the source tree, "+ local changes" if the package differs from it."""
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--", "validator", "schema"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"{ROOT} (not a git checkout)"
    return head + (" + local changes" if dirty else "")


def _fmt_ratio(x: float) -> str:
    return f"{x:.3f}x"


def render_table(results: list[dict[str, Any]]) -> str:
    header = [
        "benchmark",
        "contender",
        "median s",
        "p90 s",
        "runs",
        "ratio vs anchor",
        "target",
        "met?",
    ]
    rows: list[list[str]] = []
    for res in results:
        if "error" in res:
            rows.append([res["name"], "-", "-", "-", "-", "-", "-", "ABORTED (see above)"])
            continue
        for c in res["contenders"]:
            tgt = res["target"]
            if c["name"] == res["anchor"]:
                target, met = "(anchor)", ""
            elif tgt and c["name"] == tgt["contender"]:
                target = f"<= {tgt['max_ratio']:.2f}x"
                met = "yes" if res["met"] else "NO - target missed"
            else:
                target, met = "-", ""
            rows.append(
                [
                    res["name"],
                    c["name"],
                    f"{c['median_s']:.4f}",
                    f"{c['p90_s']:.4f}",
                    str(c["runs"]),
                    _fmt_ratio(c["ratio_vs_anchor"]),
                    target,
                    met,
                ]
            )
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    right = {2, 3, 4, 5}

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out.extend(line(r) for r in rows)
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="fewer runs; skip the largest benchmarks"
    )
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these benchmarks")
    parser.add_argument(
        "--runs", type=int, metavar="N", help="timed runs per contender (overrides)"
    )
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON to FILE")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args = parser.parse_args(argv)

    if args.list:
        for b in BENCHMARKS:
            quick = f"{b.quick_runs} under --quick" if b.quick_runs else "skipped under --quick"
            tgt = (
                f"{b.target.contender} <= {b.target.max_ratio}x {b.anchor}" if b.target else "none"
            )
            print(
                f"{b.name}: {b.description}\n    contenders: {', '.join(b.contenders)}; "
                f"target: {tgt}; runs: {b.runs} ({quick})"
            )
        return 0
    known = {b.name for b in BENCHMARKS}
    unknown = [n for n in args.only or [] if n not in known]
    if unknown:
        parser.error(
            f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    if args.runs is not None and args.runs < 1:
        parser.error("--runs must be at least 1")

    selected = [b for b in BENCHMARKS if not args.only or b.name in args.only]
    command = shlex.join([sys.executable, *sys.argv])
    machine = machine_info()
    print(f"command:  {command}")
    print(
        f"machine:  {machine['platform']}; {machine['cpu']}; {machine['cores']} cores; "
        f"{machine['python']}"
    )
    print("versions: " + ", ".join(f"{k} {v}" for k, v in machine["versions"].items()))
    print(f"source:   {machine['source']}")
    if "load_average_at_start" in machine:
        print(f"load avg: {' '.join(str(x) for x in machine['load_average_at_start'])} (at start)")
    print(flush=True)

    started = datetime.now(UTC)
    results: list[dict[str, Any]] = []
    skipped: list[str] = []
    with tempfile.TemporaryDirectory(prefix="session-resume-bench-") as tmp:
        for b in selected:
            runs = b.runs
            if args.quick:
                if b.quick_runs is None and not args.only:
                    skipped.append(b.name)
                    continue
                runs = b.quick_runs or b.runs
            if args.runs is not None:
                runs = args.runs
            results.append(run_benchmark(b, runs, Path(tmp)))
    elapsed = (datetime.now(UTC) - started).total_seconds()
    if hasattr(os, "getloadavg"):
        machine["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]

    print()
    for res in results:
        print(f"{res['name']}: {res['description']}")
        for c in res.get("contenders", []):
            print(f"    {c['name']}: {c['command']}")
        if "error" in res:
            print(f"    ABORTED: {res['error']}")
    print()
    print(render_table(results))
    print()
    for res in results:
        if res.get("met") is False:
            tgt = res["target"]
            ratio = next(c for c in res["contenders"] if c["name"] == tgt["contender"])
            print(
                f"target missed: {res['name']}: {tgt['contender']} takes "
                f"{_fmt_ratio(ratio['ratio_vs_anchor'])} the time of {res['anchor']} "
                f"(target <= {tgt['max_ratio']:.2f}x)"
            )
    if skipped:
        print(f"skipped under --quick: {', '.join(skipped)}")
    print(f"total time: {elapsed:.0f} s")
    if "load_average_at_end" in machine:
        print(f"load avg: {' '.join(str(x) for x in machine['load_average_at_end'])} (at end)")

    if args.json:
        payload = {
            "format": 1,
            "command": command,
            "started": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "elapsed_s": round(elapsed, 1),
            "quick": args.quick,
            "machine": machine,
            "skipped": skipped,
            "benchmarks": results,
        }
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
