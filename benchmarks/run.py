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

* A benchmark that cannot run HERE (a tool or an adapter not installed, not enough free disk)
  is reported as "not available: <reason>" (``BenchUnavailable``), which is not a failure; so is
  a single optional contender (``Prepared.unavailable``). The anchor is never optional.

Adding a benchmark: write a ``setup(tmpdir) -> {contender name: Run}`` function and decorate
it with ``@benchmark(...)`` (name, contenders, anchor, target, run counts). ``process(...)``
makes a Run that executes a command and fails the benchmark on an unexpected exit status;
any other zero-argument callable can be timed in process with ``Run(call, shown)``. A setup
may instead return ``Prepared(runs, notes=[...], unavailable={contender: reason})``; notes
(what the data is, its size) are printed with the benchmark. ``derive(medians, info)`` returns
extra report lines computed from the medians and ``Prepared.info`` (a breakdown, a throughput).
"""

from __future__ import annotations

import argparse
import copy
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
from dataclasses import dataclass, field
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


class BenchUnavailable(Exception):
    """The benchmark cannot run on this machine now (a missing tool, not enough disk): it is
    reported as "not available: <reason>", which does not fail the run."""


@dataclass(frozen=True)
class Run:
    """One prepared contender: ``call()`` is what gets timed; ``shown`` is how it is reported.
    ``before()``, if given, runs untimed right before every call (e.g. evicting a file from the
    page cache)."""

    call: Callable[[], None]
    shown: str
    before: Callable[[], None] | None = None


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
    """``contender`` should take at most ``max_ratio`` times the anchor's median."""

    contender: str
    max_ratio: float


@dataclass(frozen=True)
class Benchmark:
    name: str
    description: str
    contenders: tuple[str, ...]
    anchor: str
    setup: Callable[[Path], dict[str, Run] | Prepared]
    target: Target | None
    runs: int  # timed runs per contender (default mode)
    quick_runs: int | None  # under --quick; None = skipped under --quick
    warmup: int = 1  # untimed runs per contender before timing
    # extra report lines from the medians and the setup's Prepared.info
    derive: Callable[[dict[str, float], dict[str, Any]], list[str]] | None = None


BENCHMARKS: list[Benchmark] = []
SetupFn = Callable[[Path], dict[str, Run] | Prepared]


@dataclass
class Options:
    """Run-wide options a setup may consult (set by ``main``)."""

    quick: bool = False


OPTIONS = Options()


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
    derive: Callable[[dict[str, float], dict[str, Any]], list[str]] | None = None,
) -> Callable[[SetupFn], SetupFn]:
    """Register ``setup`` as a benchmark. ``setup(tmpdir)`` prepares the data in ``tmpdir``
    (a fresh empty directory), checks it, and returns one Run per contender."""
    if anchor not in contenders:
        raise ValueError(f"{name}: anchor {anchor!r} is not a contender")
    if target is not None and target.contender not in contenders:
        raise ValueError(f"{name}: target contender {target.contender!r} is not a contender")

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
                target=target,
                runs=runs,
                quick_runs=quick_runs,
                warmup=warmup,
                derive=derive,
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


# --- save() against bare I/O -------------------------------------------------------------------

_SAVE_NOW = datetime(2026, 11, 20, 15, 0, tzinfo=UTC)  # after the example's `updated`
_SAVE, _CHECKS, _BARE = "store.save()", "save()'s checks only", "bare write+fsync+replace"


def _fsync_dir(d: Path) -> None:
    fd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _save_breakdown(med: dict[str, float], info: dict[str, Any]) -> list[str]:
    save, checks, bare = med[_SAVE], med[_CHECKS], med[_BARE]
    rest = save - checks
    return [
        f"breakdown of save()'s median {_fmt_s(save)}: checks (parse + schema of the current "
        f"file twice, validation of the new document, two serializations, deepcopy) "
        f"{_fmt_s(checks)} = {checks / save:.0%}; the rest (lock + temp + fsync + .bak link + "
        f"replace + directory fsync) ~{_fmt_s(rest)} = {rest / bare:.2f}x the bare write",
        f"state file written: {info['bytes']:,} bytes",
    ]


@benchmark(
    "save-vs-bare-io",
    description="in process, repeated on one session directory: store.save() of the bundled "
    "example state (apex, step 2 in progress) vs a bare O_EXCL temp write of the same bytes + "
    "fsync + os.replace + directory fsync; a third contender times only the checks save() "
    "makes (no lock, no write)",
    contenders=(_SAVE, _CHECKS, _BARE),
    anchor=_BARE,
    target=Target(_SAVE, 1.3),
    runs=300,
    quick_runs=60,
    warmup=5,
    derive=_save_breakdown,
)
def save_vs_bare_io(tmpdir: Path) -> Prepared:
    from session_resume import ValidateOptions, load_workflow, store, validate_document

    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    doc.pop("$schema", None)  # its relative path points into the source tree
    wf = load_workflow(doc["workflow"])
    sdir = tmpdir / "agent-output" / doc["project"]
    sdir.mkdir(parents=True)
    for f in EXAMPLE.parent.iterdir():
        if f.name != STATE_FILE:
            shutil.copyfile(f, sdir / f.name)
    bare_dir = tmpdir / "bare"
    bare_dir.mkdir()

    # As a writer command calls it (commands/write.py): a Workflow object and the repository
    # root; no worklog event (that append is its own write, not part of the comparison).
    def save() -> None:
        store.save(sdir, doc, now=_SAVE_NOW, workflow=wf, root=tmpdir)

    # Data check: two saves (the second rotates a valid .bak), the file loads as ok.
    save()
    save()
    loaded = store.load(sdir, root=tmpdir)
    if loaded.status != "ok" or loaded.revision != 2 or not (sdir / store.BAK).is_file():
        raise BenchAbort(
            f"store.save() did not leave a valid state (status {loaded.status}, "
            f"revision {loaded.revision}): " + "; ".join(d.message for d in loaded.diagnostics)
        )
    data = (sdir / STATE_FILE).read_bytes()
    report = validate_document(data, file=STATE_FILE, options=ValidateOptions(now=_SAVE_NOW))
    if report.diagnostics:
        raise BenchAbort(
            "the saved state is not clean: "
            + "; ".join(f"{d.code} {d.message}" for d in report.diagnostics)
        )
    bare_state = bare_dir / STATE_FILE
    bare_tmp = bare_dir / f".{STATE_FILE}.bench.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)

    def bare() -> None:
        fd = os.open(bare_tmp, flags, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(bare_tmp, bare_state)
        _fsync_dir(bare_dir)

    # What save() does besides locking and writing, in the order it does it (store.py): load()
    # reads and classifies the current file (parse + 3.0 schema), the document is copied and
    # stamped, serialized and fully validated (_check_writable: schema, semantic and workflow
    # rules), serialized again to be written, and the current file is read and classified once
    # more to decide whether it may become .bak (_replace_state -> is_valid_state_bytes).
    def checks() -> None:
        current = store.load(sdir, root=tmpdir)
        new = copy.deepcopy(doc)
        new["updated"] = "2026-11-20T15:00:00Z"
        new["revision"] = current.revision + 1
        rep = validate_document(
            store.serialize(new),
            file=str(sdir / STATE_FILE),
            options=ValidateOptions(workflow=wf, now=_SAVE_NOW),
        )
        if rep.errors():
            raise BenchAbort("save()'s checks found errors")
        store.serialize(new)
        store.is_valid_state_bytes((sdir / STATE_FILE).read_bytes())

    bare()
    checks()
    if bare_state.read_bytes() != data:
        raise BenchAbort("the bare write did not write the bytes save() wrote")
    return Prepared(
        {
            _SAVE: Run(save, "store.save(dir, doc, now=..., workflow=apex, root=...)"),
            _CHECKS: Run(
                checks,
                "store.load() + deepcopy + validate_document(serialize(doc)) + serialize() + "
                "store.is_valid_state_bytes()",
            ),
            _BARE: Run(
                bare,
                "os.open(O_CREAT|O_EXCL) + write + fsync + close + os.replace + fsync(dir)",
            ),
        },
        notes=[
            f"the bundled example state ({len(data):,} bytes), saved into {sdir.name}/ "
            f"under the temp dir; the bare write goes to a sibling directory"
        ],
        info={"bytes": len(data)},
    )


# --- migrate --check over 1,000 old files ----------------------------------------------------

MIGRATE_FIXTURES = ROOT / "tests" / "fixtures" / "migrate"
_MIGRATE_NOW = "2026-06-01T00:00:00Z"  # after every generated time
_TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def _legacy_version(doc: dict[str, Any]) -> str:
    v = doc.get("schema_version")
    return v if isinstance(v, str) else "1.0"  # no version (or `$schema: session-state-v1`)


def _vary(value: Any, *, shift: timedelta, old: str, new: str) -> Any:
    """Every timestamp moved by ``shift``, every mention of the old project renamed."""
    if isinstance(value, dict):
        return {k: _vary(v, shift=shift, old=old, new=new) for k, v in value.items()}
    if isinstance(value, list):
        return [_vary(v, shift=shift, old=old, new=new) for v in value]
    if isinstance(value, str):
        if _TS.match(value):
            t = datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
            return _ts(t + shift)
        return value.replace(old, new) if old else value
    return value


def write_legacy_states(top: Path, count: int, seed: int) -> dict[str, list[str]]:
    """``count`` distinct v1.0/v2.0 states under ``top/agent-output/<project>/``, varied from
    the real-world fixtures in tests/fixtures/migrate (every variant they carry: no version,
    ``$schema: session-state-v1``, step 3.5, old findings, v2 lock/claim, ...). Returns the
    relative paths of the files by version."""
    fixtures = sorted(MIGRATE_FIXTURES.glob("v[12]-*.json"))
    if not fixtures:
        raise BenchAbort(f"no v1/v2 fixtures in {MIGRATE_FIXTURES}")
    sources = [json.loads(f.read_text(encoding="utf-8")) for f in fixtures]
    rng = random.Random(seed)
    by_version: dict[str, list[str]] = {}
    for i in range(count):
        src = rng.choice(sources)
        old = src.get("project", "") if isinstance(src.get("project"), str) else ""
        project = f"{rng.choice(_ORGS)}-{rng.choice(_APPS)}-{i:05d}"
        shift = -timedelta(days=rng.randrange(0, 400), minutes=rng.randrange(0, 1440))
        doc = _vary(src, shift=shift, old=old, new=project)
        doc["project"] = project
        decisions = doc.get("decisions")
        if isinstance(decisions, dict):
            region = rng.choice(_REGIONS)
            decisions["region"] = region
            if isinstance(doc.get("region"), str):
                doc["region"] = region
            decisions["compliance"] = rng.choice(_COMPLIANCE)
            decisions["deployment_strategy"] = rng.choice(_STRATEGIES)
        rel = f"agent-output/{project}/{STATE_FILE}"
        target = top / rel
        target.parent.mkdir(parents=True)
        indent = rng.choice([2, 2, 2, 4, None])
        target.write_text(
            json.dumps(doc, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        by_version.setdefault(_legacy_version(doc), []).append(rel)
    return {v: sorted(paths) for v, paths in sorted(by_version.items())}


class _Sequence:
    """Run several commands one after the other as one contender."""

    def __init__(self, runs: list[Run]) -> None:
        self.runs = runs

    def __call__(self) -> None:
        for r in self.runs:
            r.call()


@benchmark(
    "migrate-check-1000",
    description="1,000 session directories holding v1.0/v2.0 states (varied from "
    "tests/fixtures/migrate): `session-resume migrate --check` (parse, chain 1.0 -> 2.0 -> 3.0 "
    "with a schema check after each step, JSON Patch) vs check-jsonschema validating the same "
    "1,000 files once against their own version's schema (one call per version)",
    contenders=("session-resume migrate --check", "check-jsonschema (own version)"),
    anchor="check-jsonschema (own version)",
    target=None,
    runs=5,
    quick_runs=3,
)
def migrate_check_1000(tmpdir: Path) -> Prepared:
    env = bench_env(tmpdir)
    count = 1000
    t0 = time.perf_counter()
    by_version = write_legacy_states(tmpdir, count, seed=1000)
    _progress(f"  generated {count} v1/v2 state files in {time.perf_counter() - t0:.1f} s")
    sr = [tool("session-resume"), "migrate", "--check", "agent-output", "--root", str(tmpdir)]
    sr += ["--now", _MIGRATE_NOW]
    # Data check: every file would migrate (exit 1 is --check's "something would change");
    # none is refused and nothing else is reported.
    res = subprocess.run(
        [*sr, "--format", "json"],
        cwd=tmpdir,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        out = json.loads(res.stdout)
    except ValueError:
        raise BenchAbort(
            f"`migrate --check --format json` exited {res.returncode} without JSON:\n"
            f"{(res.stdout + res.stderr)[-2000:]}"
        ) from None
    statuses: dict[str, int] = {}
    for f in out["files"]:
        statuses[f["status"]] = statuses.get(f["status"], 0) + 1
    if res.returncode != 1 or statuses != {"would_migrate": count} or out["problems"]:
        raise BenchAbort(
            f"migrate --check exited {res.returncode}: {statuses}, problems {out['problems']}; "
            f"expected all {count} files to be would_migrate"
        )
    kinds: dict[str, int] = {}
    for f in out["files"]:
        for n in f["notes"]:
            key = f"{n['code']} {n['severity']}"
            kinds[key] = kinds.get(key, 0) + 1
    n_notes = ", ".join(f"{v} {k}" for k, v in sorted(kinds.items())) or "no notes"
    anchors: list[Run] = []
    for version, files in by_version.items():
        schema = ROOT / "schema" / "session-state" / f"{version}.json"
        cj = [tool("check-jsonschema"), "--schemafile", str(schema), *files]
        check_output(cj, cwd=tmpdir, env=env, what="setup")
        anchors.append(process(cj, cwd=tmpdir, env=env, shown=_abbrev(cj)))
    return Prepared(
        {
            "session-resume migrate --check": process(
                sr, cwd=tmpdir, env=env, ok_codes=(1,), shown=shlex.join(sr) + "  (exit 1)"
            ),
            "check-jsonschema (own version)": Run(
                _Sequence(anchors), "  &&  ".join(r.shown for r in anchors)
            ),
        },
        notes=[
            ", ".join(f"{len(v)} v{k} files" for k, v in by_version.items())
            + f"; migrate --check says all {count} would migrate, none refused; notes: "
            f"{n_notes} (SR150: what was filled in; SR151: values kept under x-legacy)"
        ],
    )


# --- resume on a 1 GB worklog --------------------------------------------------------------

_RESUME_NOW = "2026-11-20T16:00:00Z"  # the lease below is then stale: an orphaned session
_SESSION = "5e55b1d0c0ffee42"
_LARGE = "large worklog"
_LARGE_COLD = "large worklog, evicted from cache"
_EMPTY = "empty worklog"


def _event(ts: str, seq: int, event: str, **extra: Any) -> bytes:
    rec = {"v": 1, "ts": ts, "seq": seq, "session": _SESSION, "event": event, **extra}
    return json.dumps(rec, separators=(",", ":")).encode() + b"\n"


def _current_session_events(first_seq: int) -> list[bytes]:
    """The session the state file describes (examples/…/contoso-portal): it crashed in step 2
    after checkpoint phase_2_waf, without a session_end."""
    d = "agent-output/contoso-portal"
    evs: list[tuple[str, str, dict[str, Any]]] = [
        ("2026-11-20T12:39:30Z", "session_start", {"detail": {"owner": "copilot-agent"}}),
        ("2026-11-20T12:40:00Z", "step_start", {"step": "1"}),
        ("2026-11-20T12:55:00Z", "checkpoint", {"step": "1", "sub_step": "phase_1_discovery"}),
        ("2026-11-20T13:05:00Z", "decision", {"detail": {"id": "D001"}}),
        ("2026-11-20T13:20:00Z", "step_complete", {"step": "1"}),
        ("2026-11-20T14:00:00Z", "step_start", {"step": "2"}),
        ("2026-11-20T14:10:00Z", "checkpoint", {"step": "2", "sub_step": "phase_1_prereqs"}),
        ("2026-11-20T14:20:00Z", "heartbeat", {}),
        (
            "2026-11-20T14:32:10Z",
            "checkpoint",
            {
                "step": "2",
                "sub_step": "phase_2_waf",
                "detail": {"artifacts": [f"{d}/02-architecture-assessment.md"]},
            },
        ),
    ]
    return [_event(ts, first_seq + i, ev, **x) for i, (ts, ev, x) in enumerate(evs)]


def _write_history(fh: Any, size: int, rng: random.Random) -> int:
    """Past sessions of the project, as valid JSONL with seq 1, 2, ..., until ``size`` bytes.
    Built a whole session (36 lines) per %-format and written in ~16 MB chunks. Returns the
    last seq written."""
    d = "agent-output/contoso-portal"
    body = [
        b'"event":"session_start","detail":{"owner":"copilot-agent","host":"build-07","pid":%d}',
        b'"event":"step_start","step":"2"',
        b'"event":"checkpoint","step":"2","sub_step":"phase_1_prereqs","detail":{"context_files":'
        b'["' + d.encode() + b'/00-session-state.json","' + d.encode() + b'/01-requirements.md"]}',
        *[b'"event":"heartbeat"'] * 28,
        b'"event":"note","detail":{"text":"WAF pillar review half done; cost pillar pending"}',
        b'"event":"checkpoint","step":"2","sub_step":"phase_2_waf","detail":{"artifacts":["'
        + d.encode()
        + b'/02-architecture-assessment.md"]}',
        b'"event":"finding_add","detail":{"title":"No RTO stated for the order database"}',
        b'"event":"heartbeat"',
        b'"event":"session_end"',
    ]
    # one line: {"v":1,"ts":"<day, hour, minute>:<second>Z","seq":N,"session":"<id>",<body>};
    # a past session's events lie one second apart, sessions at least a minute apart, and all
    # of them between 2020-01-01 and the start of the current session (2026-11-20).
    head = b'{"v":1,"ts":"%s%s","seq":%d,"session":"%s",'
    template = b"".join(head + line.replace(b"%d", b"%%d") + b"}\n" for line in body)
    template = template.replace(b"%%d", b"%d")  # the pid placeholder of session_start
    seconds = [f"{i:02d}Z".encode() for i in range(len(body))]
    start, end = datetime(2020, 1, 1, tzinfo=UTC), datetime(2026, 11, 19, tzinfo=UTC)
    per_block = len(template) + 4 * len(body) * 8  # roughly: the placeholders' expansions
    minutes = max(1, int((end - start).total_seconds() / 60 / max(1, size // per_block)))
    step = timedelta(minutes=minutes)
    when = start
    seq, written, chunk = 0, 0, []
    chunk_bytes = 0
    while written + chunk_bytes < size:
        prefix = when.strftime("%Y-%m-%dT%H:%M:").encode()
        sid = f"{rng.getrandbits(64):016x}".encode()
        args: list[Any] = []
        for i in range(len(body)):
            seq += 1
            args += [prefix, seconds[i], seq, sid]
            if i == 0:
                args.append(rng.randrange(1000, 99999))
        block = template % tuple(args)
        chunk.append(block)
        chunk_bytes += len(block)
        when += step
        if chunk_bytes >= 16 << 20:
            fh.write(b"".join(chunk))
            written += chunk_bytes
            chunk, chunk_bytes = [], 0
    fh.write(b"".join(chunk))
    return seq


@benchmark(
    "resume-large-worklog",
    description="cold `session-resume resume DIR` (an orphaned session: stale lease, crashed "
    "in step 2 after a checkpoint) with a 1 GB worklog (100 MB under --quick) vs the same "
    "session with an empty worklog; the third contender drops the large file from the page "
    "cache before each run (posix_fadvise DONTNEED)",
    contenders=(_EMPTY, _LARGE, _LARGE_COLD),
    anchor=_EMPTY,
    target=Target(_LARGE, 2.0),
    runs=15,
    quick_runs=7,
)
def resume_large_worklog(tmpdir: Path) -> Prepared:
    from session_resume import sentinel

    size = (100 if OPTIONS.quick else 1000) * 1000 * 1000
    label = "100 MB" if OPTIONS.quick else "1 GB"
    free = shutil.disk_usage(tmpdir).free
    if free < 3 * size:
        raise BenchUnavailable(
            f"only {free / 1e9:.1f} GB free in {tmpdir.parent}; the {label} worklog needs "
            f"{3 * size / 1e9:.1f} GB free"
        )
    env = bench_env(tmpdir)
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    doc.pop("$schema", None)
    sent = sentinel.make(
        _SESSION,
        owner="copilot-agent",
        now=datetime(2026, 11, 20, 12, 39, 30, tzinfo=UTC),
        host="build-07",
    )
    sent["heartbeat"] = "2026-11-20T14:32:10Z"
    dirs: dict[str, Path] = {}
    for name in ("empty", "large"):
        root = tmpdir / name
        d = root / "agent-output" / doc["project"]
        d.mkdir(parents=True)
        for f in EXAMPLE.parent.iterdir():
            if f.name != STATE_FILE:
                shutil.copyfile(f, d / f.name)
        (d / STATE_FILE).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        (d / sentinel.SENTINEL).write_text(json.dumps(sent) + "\n", encoding="utf-8")
        # the artifacts were written before the last checkpoint (14:32:10), as an agent does
        written = datetime(2026, 11, 20, 14, 30, tzinfo=UTC).timestamp()
        for f in d.iterdir():
            os.utime(f, (written, written))
        dirs[name] = d
    (dirs["empty"] / "00-worklog.jsonl").write_bytes(b"")
    big = dirs["large"] / "00-worklog.jsonl"
    t0 = time.perf_counter()
    with open(big, "wb", buffering=0) as fh:
        last = _write_history(fh, size, random.Random(size))
        fh.write(b"".join(_current_session_events(last + 1)))
        os.fsync(fh.fileno())  # clean pages, so they can be evicted; the space is really used
    big_size = big.stat().st_size
    _progress(
        f"  wrote a {big_size / 1e9:.2f} GB worklog ({last + 9:,} events) in "
        f"{time.perf_counter() - t0:.1f} s"
    )

    def argv(name: str) -> list[str]:
        root = tmpdir / name
        return [tool("session-resume"), "resume", str(dirs[name]), "--root", str(root)] + [
            "--now",
            _RESUME_NOW,
            "--format",
            "json",
        ]

    # Data check: both answer the same (resume_from_checkpoint with an orphan report), except
    # that the orphan report of the large one lists the crashed session's last events.
    answers, tails = {}, {}
    for name in ("empty", "large"):
        res = check_output(argv(name), cwd=tmpdir / name, env=env, what="setup")
        answer = json.loads(res.stdout.replace(str(tmpdir / name), "$ROOT"))
        tails[name] = (answer.get("orphan") or {}).pop("last_events", None)
        answers[name] = answer
    if answers["empty"] != answers["large"]:
        raise BenchAbort(
            "resume answers differently with the large worklog:\n"
            f"empty: {json.dumps(answers['empty'])[:1500]}\nlarge: "
            f"{json.dumps(answers['large'])[:1500]}"
        )
    action = answers["large"].get("action")
    if action != "resume_from_checkpoint" or not answers["large"].get("orphan"):
        raise BenchAbort(f"unexpected resume answer: {json.dumps(answers['large'])[:1500]}")
    # (the report's events are the worklog's last ones; they must end with the crashed
    # session's own events)
    expected_tail = [json.loads(line) for line in _current_session_events(last + 1)]
    got = tails["large"] or []
    k = min(len(got), len(expected_tail))
    if tails["empty"] != [] or not k or got[-k:] != expected_tail[-k:]:
        raise BenchAbort(f"the orphan report's last events are unexpected: {tails}"[:1500])

    runs = {
        _EMPTY: process(argv("empty"), cwd=tmpdir / "empty", env=env),
        _LARGE: process(argv("large"), cwd=tmpdir / "large", env=env),
    }
    unavailable: dict[str, str] = {}
    if hasattr(os, "posix_fadvise"):

        def evict() -> None:
            fd = os.open(big, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)

        large = runs[_LARGE]
        runs[_LARGE_COLD] = Run(large.call, large.shown + "  (after fadvise DONTNEED)", evict)
    else:
        unavailable[_LARGE_COLD] = "os.posix_fadvise is not available on this platform"
    return Prepared(
        runs,
        notes=[
            f"large worklog = {label}: {big_size:,} bytes, {last + 9:,} valid JSONL events; "
            f"both sessions answer `{action}` with the same orphan report (apart from its "
            "last events, which only the large worklog has)"
        ],
        unavailable=unavailable,
    )


# --- the conformance suite ------------------------------------------------------------------

_PY_ADAPTER, _NODE_ADAPTER = "python reference adapter", "node adapter"
NODE_ADAPTER = ROOT / "conformance" / "js" / "adapter.mjs"
PY_SKIP = ROOT / "conformance" / "adapters" / "python" / "skip.txt"
NODE_SKIP = ROOT / "conformance" / "adapters" / "js" / "skip.txt"


def _conformance_rate(med: dict[str, float], info: dict[str, Any]) -> list[str]:
    out = []
    for name, s in med.items():
        c = info[name]
        line = (
            f"{name}: {c['total']} cases ({c['passed']} passed, {c['failed']} failed, "
            f"{c['skipped']} skipped) in {_fmt_s(s)} = {c['total'] / s:.0f} cases/s"
        )
        if c["ran"] != c["total"]:
            line += f" ({c['ran']} reached the adapter: {c['ran'] / s:.0f}/s)"
        out.append(line)
    return out


@benchmark(
    "conformance-suite",
    description="wall time of `session-resume conformance run` over the whole case suite "
    "(one cold runner process; it starts the adapter once and builds a workspace per case) "
    "with the Python reference adapter and, when present, the Node adapter; absolute time "
    "and cases/s (no target)",
    contenders=(_PY_ADAPTER, _NODE_ADAPTER),
    anchor=_PY_ADAPTER,
    target=None,
    runs=3,
    quick_runs=2,
    warmup=0,  # setup runs the exact timed commands once: that is the warm-up
    derive=_conformance_rate,
)
def conformance_suite(tmpdir: Path) -> Prepared:
    try:
        import session_resume.conformance.runner  # type: ignore[import-untyped]  # noqa: F401
    except Exception as exc:
        raise BenchUnavailable(
            f"the conformance runner does not import ({type(exc).__name__}: {exc})"
        ) from None
    env = bench_env(tmpdir)
    work = tmpdir / "work"  # the runner's per-case workspaces (TMPDIR)
    work.mkdir()
    env["TMPDIR"] = str(work)
    sr = tool("session-resume")
    listing = subprocess.run(
        [sr, "conformance", "list"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if listing.returncode != 0:
        raise BenchUnavailable(
            f"`session-resume conformance list` exited {listing.returncode}: "
            f"{(listing.stdout + listing.stderr).strip()[-500:]}"
        )
    adapters = {_PY_ADAPTER: (f"{sys.executable} -m session_resume.conformance.adapter", PY_SKIP)}
    unavailable: dict[str, str] = {}
    node = shutil.which("node")
    if node is None:
        unavailable[_NODE_ADAPTER] = "node is not on PATH"
    elif not NODE_ADAPTER.is_file():
        unavailable[_NODE_ADAPTER] = f"{NODE_ADAPTER.relative_to(ROOT)} does not exist (yet)"
    else:
        adapters[_NODE_ADAPTER] = (f"{node} {NODE_ADAPTER}", NODE_SKIP)
    runs: dict[str, Run] = {}
    info: dict[str, Any] = {}
    for name, (cmd, skip) in adapters.items():
        argv = [sr, "conformance", "run", "--adapter", cmd, "--format", "json"]
        if skip.is_file():
            argv += ["--skip", str(skip)]
        res = subprocess.run(
            argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True
        )
        try:
            report = json.loads(res.stdout)
            summary = report["summary"]
        except (ValueError, KeyError, TypeError):
            reason = (
                f"`{_abbrev(argv)}` exited {res.returncode} without a report: "
                f"{(res.stdout + res.stderr).strip()[-800:]}"
            )
            if name == _PY_ADAPTER:
                raise BenchUnavailable(reason) from None
            unavailable[name] = reason
            continue
        # A failing case is the suite's verdict, not a reason not to time it, unless the case
        # hung or killed the adapter: then the time measures the timeout, not the suite.
        broken = [
            c["id"]
            for c in report.get("cases", [])
            if c.get("outcome") == "failed" and c.get("failure") in ("timeout", "died")
        ]
        if broken:
            raise BenchAbort(
                f"{name}: {len(broken)} case(s) timed out or killed the adapter "
                f"({', '.join(broken[:5])}); the wall time would measure timeouts"
            )
        failures: dict[str, int] = {}
        for c in report.get("cases", []):
            if c.get("outcome") == "failed":
                kind = str(c.get("failure", "failed"))
                failures[kind] = failures.get(kind, 0) + 1
        info[name] = {
            "failure_kinds": failures,
            "total": summary["total"],
            "passed": summary["passed"],
            "failed": summary["failed"],
            "skipped": summary["skipped"],
            # cases the adapter ran (skip-list cases ran and failed; platform/unsupported ones
            # never reached the adapter)
            "ran": sum(
                1
                for c in report.get("cases", [])
                if c.get("outcome") != "skipped" or c.get("skip") == "skip_list"
            ),
        }
        runs[name] = process(
            argv,
            cwd=ROOT,
            env=env,
            ok_codes=(0, 1),
            shown=shlex.join(argv).replace(str(ROOT) + "/", ""),
        )
    return Prepared(
        runs,
        notes=[
            f"{name}: {c['total']} cases: {c['passed']} passed, {c['failed']} failed"
            + (
                " (" + ", ".join(f"{n} {k}" for k, n in sorted(c["failure_kinds"].items())) + ")"
                if c["failure_kinds"]
                else ""
            )
            + f", {c['skipped']} skipped"
            for name, c in info.items()
        ],
        unavailable=unavailable,
        info=info,
    )


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
            _progress(f"  {note}")
        order = [n for n in b.contenders if n in prepared.runs]
        for _ in range(b.warmup):
            for name in order:
                run = prepared.runs[name]
                if run.before is not None:
                    run.before()
                run.call()
        times: dict[str, list[float]] = {name: [] for name in order}
        last_report = 0.0
        for i in range(runs):
            # Interleaved, and the order rotates every round so no contender always goes first.
            k = i % len(order)
            for name in order[k:] + order[:k]:
                run = prepared.runs[name]
                if run.before is not None:
                    run.before()
                start = time.perf_counter()
                run.call()
                times[name].append(time.perf_counter() - start)
            now = time.perf_counter()
            if runs <= 50 or i + 1 == runs or now - last_report >= 2.0:
                last_report = now
                _progress(
                    f"{b.name}: round {i + 1}/{runs}: "
                    + ", ".join(f"{n} {_fmt_s(times[n][-1])}" for n in order)
                )
    except BenchUnavailable as exc:
        result["unavailable"] = str(exc)
        _progress(f"{b.name}: not available: {exc}")
        return result
    except BenchAbort as exc:
        result["error"] = str(exc)
        _progress(f"{b.name}: ABORTED: {exc}")
        return result
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)

    anchor_median = statistics.median(times[b.anchor])
    rows: list[dict[str, Any]] = []
    medians: dict[str, float] = {}
    for name in b.contenders:
        if name not in times:
            rows.append({"name": name, "unavailable": prepared.unavailable[name]})
            continue
        xs = times[name]
        med = medians[name] = statistics.median(xs)
        rows.append(
            {
                "name": name,
                "command": prepared.runs[name].shown.replace(str(tmpdir), "$TMP"),
                "runs": len(xs),
                "median_s": med,
                "p90_s": p90(xs),
                "min_s": min(xs),
                "ratio_vs_anchor": med / anchor_median,
                "times_s": xs,
            }
        )
    result["contenders"] = rows
    if b.derive is not None:
        result["derived"] = b.derive(medians, prepared.info)
    if b.target:
        ratio = next(
            (r["ratio_vs_anchor"] for r in rows if r["name"] == b.target.contender and "runs" in r),
            None,
        )
        result["met"] = None if ratio is None else ratio <= b.target.max_ratio
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
    node = shutil.which("node")  # the conformance benchmark's Node adapter
    if node is not None:
        try:
            versions["node"] = subprocess.run(
                [node, "--version"], capture_output=True, text=True, timeout=10, check=True
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            versions["node"] = "unknown version"
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "executable": sys.executable,
        "versions": versions,
    }
    info["source"] = _source_revision()
    info["temp_dir"] = _temp_dir_info()
    if hasattr(os, "getloadavg"):
        info["load_average_at_start"] = [round(x, 2) for x in os.getloadavg()]
    return info


def _temp_dir_info() -> str:
    """Where the benchmark data lives: the I/O benchmarks (fsync, a 1 GB file) depend on it."""
    tmp = os.path.realpath(tempfile.gettempdir())
    fs, mount = "unknown filesystem", ""
    try:
        with open("/proc/mounts", encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) < 3:
                    continue
                point = parts[1].replace("\\040", " ")
                inside = tmp == point or tmp.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= len(mount):
                    fs, mount = f"{parts[2]} on {parts[0]}", point
    except OSError:
        pass
    free = shutil.disk_usage(tmp).free / 1e9
    return f"{tmp} ({fs}{f' mounted at {mount}' if mount else ''}; {free:.0f} GB free)"


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
            [
                "git",
                "-C",
                str(ROOT),
                "status",
                "--porcelain",
                "--",
                "validator",
                "schema",
                "conformance",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"{ROOT} (not a git checkout)"
    if not dirty:
        return head
    # Uncommitted changes: a digest of what was measured, so two runs can tell whether they
    # measured the same sources.
    return f"{head} + local changes (sources sha256 {_sources_digest()})"


def _sources_digest() -> str:
    """sha256 over the package sources, schemas, workflows and conformance cases (path+bytes)."""
    import hashlib

    h = hashlib.sha256()
    for top in ("validator", "schema", "conformance"):
        for f in sorted((ROOT / top).rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc":
                h.update(f.relative_to(ROOT).as_posix().encode() + b"\0")
                h.update(f.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def _fmt_ratio(x: float) -> str:
    return f"{x:.3f}x"


def _fmt_s(x: float) -> str:
    """A duration with a unit that keeps three or four significant digits."""
    if x >= 1:
        return f"{x:.3f} s"
    if x >= 1e-3:
        return f"{x * 1e3:.2f} ms"
    return f"{x * 1e6:.1f} us"


def render_table(results: list[dict[str, Any]]) -> str:
    header = [
        "benchmark",
        "contender",
        "median",
        "p90",
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
        if "unavailable" in res:
            rows.append([res["name"], "-", "-", "-", "-", "-", "-", "not available (see above)"])
            continue
        tgt = res["target"]
        for c in res["contenders"]:
            if c["name"] == res["anchor"]:
                target, met = "(anchor)", ""
            elif tgt and c["name"] == tgt["contender"]:
                target = f"<= {tgt['max_ratio']:.2f}x"
                met = {True: "yes", False: "NO - target missed", None: "not checked"}[res["met"]]
            else:
                target, met = "-", ""
            if "unavailable" in c:
                rows.append([res["name"], c["name"], "-", "-", "-", "-", target, "not available"])
                continue
            rows.append(
                [
                    res["name"],
                    c["name"],
                    _fmt_s(c["median_s"]),
                    _fmt_s(c["p90_s"]),
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

    OPTIONS.quick = args.quick
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
    print(f"temp dir: {machine['temp_dir']}")
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
        for note in res.get("notes", []):
            print(f"    data: {note}")
        for c in res.get("contenders", []):
            if "unavailable" in c:
                print(f"    {c['name']}: not available: {c['unavailable']}")
            else:
                print(f"    {c['name']}: {c['command']}")
        for extra in res.get("derived", []):
            print(f"    => {extra}")
        if "error" in res:
            print(f"    ABORTED: {res['error']}")
        if "unavailable" in res:
            print(f"    not available: {res['unavailable']}")
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
