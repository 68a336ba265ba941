"""Benchmark data: realistic, distinct, valid session-state files.

``write_states`` writes v3.0 states of the built-in workflows at random stages of their run
(``make_state``); ``write_legacy_states`` writes v1.0/v2.0 states varied from the real-world
fixtures in tests/fixtures/migrate. Both are seeded: the same seed writes the same bytes.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from runner import ROOT, BenchAbort

STATE_FILE = "00-session-state.json"
MIGRATE_FIXTURES = ROOT / "tests" / "fixtures" / "migrate"

_BASE_TIME = datetime(2025, 1, 6, 8, 0, tzinfo=UTC)  # all generated times lie in 2025
ORGS = [
    "contoso", "fabrikam", "northwind", "adventure-works", "tailspin", "woodgrove", "litware",
    "proseware", "wingtip", "alpine-ski", "margies-travel", "fourth-coffee", "relecloud",
]  # fmt: skip
APPS = [
    "portal", "api", "data-platform", "landing-zone", "payments", "analytics", "intranet",
    "iot-hub", "ml-ops", "edge-cache", "crm-sync", "booking", "reporting", "search",
]  # fmt: skip
REGIONS = [
    "swedencentral", "westeurope", "northeurope", "germanywestcentral", "francecentral",
    "uksouth", "eastus2", "centralus", "australiaeast", "japaneast",
]  # fmt: skip
COMPLIANCE = ["None", "GDPR", "HIPAA", "PCI-DSS", "ISO 27001", "SOC 2", "GDPR, ISO 27001"]
_PATTERNS = [
    "hub-spoke web app", "serverless API", "n-tier web app", "event-driven microservices",
    "data lakehouse", "AKS microservices", "static web app + Functions",
]  # fmt: skip
STRATEGIES = ["phased", "single deployment", "blue-green", "canary by region"]
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
_TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


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


def ts(dt: datetime) -> str:
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


@dataclass
class _Project:
    """One generated project's draws, shared by the parts of ``make_state``. The order in
    which the parts draw from ``rng`` is the order of the original single function: the same
    seed gives the same files."""

    rng: random.Random
    wf: Any
    session_dir: str
    clock: datetime
    iac: str = ""
    region: str = ""
    complexity: str = ""
    events: int = 0
    log_steps: list[tuple[str, str, str]] = field(default_factory=list)  # key, agent, time
    review_audit: dict[str, Any] = field(default_factory=dict)

    def tick(self, lo: int = 3, hi: int = 180) -> str:
        self.clock += timedelta(minutes=self.rng.randint(lo, hi), seconds=self.rng.randint(0, 59))
        self.events += 1
        return ts(self.clock)

    def agent_for(self, spec: _StepSpec) -> str:
        if len(spec.agents) == 1:
            return spec.agents[0]
        by_tool = [a for a in spec.agents if self.iac in a]
        return by_tool[0] if by_tool else self.rng.choice(spec.agents)

    def context_files(self, spec: _StepSpec) -> list[str]:
        names = list(spec.startup_files) or [STATE_FILE, "01-notes.md", "02-plan.md"]
        limit = spec.max_files if spec.max_files is not None else len(names)
        count = self.rng.randint(1, min(limit, len(names)))
        return [f"{self.session_dir}/{f}" for f in names[:count]]


def _complete_step(p: _Project, i: int, spec: _StepSpec, rec: dict[str, Any]) -> None:
    """``rec`` becomes a completed step (times, context, artifacts, telemetry, audit)."""
    rng = p.rng
    rec["started"] = p.tick()
    rec["context_files_used"] = p.context_files(spec)
    artifacts = [f"{p.session_dir}/{i + 1:02d}-{_slug(spec.name)}.md"]
    if rng.random() < 0.3:
        artifacts.append(f"{p.session_dir}/{i + 1:02d}-{_slug(spec.name)}-diagram.png")
    rec["artifacts"] = artifacts
    p.log_steps.append((spec.key, rec["agent"], p.tick(1, 30)))
    rec["completed"] = p.tick()
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
    if spec.review_audited and not p.wf.free_steps:
        planned = {"simple": 1, "standard": 2, "complex": 3}[p.complexity]
        executed = planned if rng.random() < 0.8 else planned - 1
        p.review_audit[f"step_{spec.key}"] = {
            "complexity": p.complexity,
            "passes_planned": planned,
            "passes_executed": executed,
            "skipped": list(range(executed + 1, planned + 1)),
            "skip_reasons": [f"pass {executed}: 0 must_fix"] if executed < planned else [],
            "models_used": [rng.choice(_MODELS) for _ in range(executed)],
        }


def _start_step(p: _Project, i: int, spec: _StepSpec, rec: dict[str, Any]) -> None:
    """``rec`` becomes the step in progress (maybe at a checkpoint, maybe with a draft)."""
    rng = p.rng
    rec["started"] = p.tick()
    rec["status"] = "in_progress"
    rec["context_files_used"] = p.context_files(spec)
    if spec.checkpoints:
        reached = rng.randint(0, len(spec.checkpoints) - 1)
        rec["sub_step"] = spec.checkpoints[reached - 1] if reached else None
    elif p.wf.free_steps and rng.random() < 0.6:
        rec["sub_step"] = f"phase_{rng.randint(1, 4)}"
    if rng.random() < 0.4:
        rec["artifacts"] = [f"{p.session_dir}/{i + 1:02d}-{_slug(spec.name)}.draft.md"]
    p.log_steps.append((spec.key, rec["agent"], rec["started"]))


def _steps(p: _Project, specs: list[_StepSpec], done: int, active: bool) -> dict[str, Any]:
    steps: dict[str, Any] = {}
    for i, spec in enumerate(specs):
        rec: dict[str, Any] = {
            "name": spec.name,
            "agent": p.agent_for(spec) if i <= done or len(spec.agents) == 1 else "",
            "status": "pending",
            "sub_step": None,
            "started": None,
            "completed": None,
            "artifacts": [],
            "context_files_used": [],
        }
        if i < done and spec.optional and p.rng.random() < 0.35:
            rec.update(status="skipped", skip_reason="not needed for this project")
        elif i < done:
            _complete_step(p, i, spec, rec)
        elif i == done and active:
            _start_step(p, i, spec, rec)
        if p.rng.random() < 0.05:
            rec["x-ui"] = {"collapsed": rec["status"] != "in_progress"}
        steps[spec.key] = rec
    return steps


def _decision_log(p: _Project) -> list[dict[str, Any]]:
    rng, log_steps = p.rng, p.log_steps
    decision_log = []
    n_log = rng.randint(0, 1 + 2 * len(log_steps)) if log_steps else 0
    picks = sorted((rng.choice(log_steps) for _ in range(n_log)), key=lambda x: x[2])
    for d, (key, agent, when) in enumerate(picks):
        entry: dict[str, Any] = {
            "id": f"D{d + 1:03d}",
            "step": int(key) if key.isdigit() else key,
            "agent": agent,
            "title": rng.choice(["Region", "IaC tool", "Network topology", "SKU", "Identity"]),
            "choice": rng.choice(
                [p.region, p.iac, "private endpoints", "P1v3", "managed identity"]
            ),
            "rationale": "Agreed with the product owner after comparing cost and risk.",
            "timestamp": when,
        }
        if rng.random() < 0.3:
            entry["alternatives"] = rng.sample(REGIONS, 2)
        decision_log.append(entry)
    if len(decision_log) >= 2 and rng.random() < 0.2:
        decision_log[0]["status"] = "superseded"
        decision_log[0]["superseded_by"] = decision_log[-1]["id"]
    return decision_log


def _decisions(p: _Project, done: int) -> dict[str, Any]:
    rng = p.rng
    decisions: dict[str, Any] = {}
    values = {
        "region": p.region,
        "compliance": rng.choice(COMPLIANCE),
        "budget": f"~${rng.choice([50, 150, 400, 1200, 5000])}/mo",
        "architecture_pattern": rng.choice(_PATTERNS) if done >= 2 else "",
        "deployment_strategy": rng.choice(STRATEGIES) if done >= 5 else "",
        "iac_tool": p.iac if done >= 1 else "",
    }
    for dk in p.wf.decisions:
        if dk.key == "iac_tool" or dk.key in values:
            decisions[dk.key] = values.get(dk.key, "")
        elif dk.key == "complexity":
            decisions[dk.key] = p.complexity
        elif dk.enum is not None:
            if dk.required or rng.random() < 0.5:
                decisions[dk.key] = rng.choice(list(dk.enum))
        elif dk.required:
            decisions[dk.key] = ""
    if not p.wf.decisions:  # workflows without decision keys still record some
        decisions.update(
            language=rng.choice(["Python", "TypeScript", "Go", "C#"]),
            test_framework=rng.choice(["pytest", "vitest", "go test", "xunit"]),
        )
    return decisions


def make_state(index: int, wf: Any, rng: random.Random) -> dict[str, Any]:
    """A valid v3.0 state of workflow ``wf`` at a random stage of its run."""
    project = f"{rng.choice(ORGS)}-{rng.choice(APPS)}-{index:05d}"
    clock = _BASE_TIME + timedelta(days=rng.randrange(0, 300), minutes=rng.randrange(0, 1440))
    p = _Project(rng, wf, wf.session_dir.format(project=project), clock)

    specs = _step_specs(wf, rng)
    n = len(specs)
    done = min(n, int(rng.triangular(0, n + 1, n / 2)))  # most projects are mid-way
    active = done < n and (done > 0 or rng.random() < 0.6) and rng.random() < 0.85
    p.iac = rng.choice(["Bicep", "Terraform"])
    p.region = rng.choice(REGIONS)
    p.complexity = rng.choice(["simple", "standard", "standard", "complex"])

    steps = _steps(p, specs, done, active)
    if active:
        current = int(specs[done].key.split("_")[0])
    elif done:
        current = int(specs[done - 1].key.split("_")[0])
    else:
        current = 0
    decision_log = _decision_log(p)
    decisions = _decisions(p, done)

    doc: dict[str, Any] = {}
    if rng.random() < 0.5:
        doc["$schema"] = "https://schemas.session-resume.dev/session-state/3.0.json"
    doc.update(schema_version="3.0", project=project, workflow=wf.id)
    field_values = {
        "iac_tool": p.iac if done >= 1 else "",
        "region": p.region,
        "branch": rng.choice(["main", "main", "develop", f"feature/{project}"]),
    }
    for f in wf.fields:
        if f.name in field_values:
            doc[f.name] = field_values[f.name]
        elif f.required:
            doc[f.name] = f.schema.get("default", "")
    findings = rng.sample(_FINDINGS, rng.choice([0, 0, 1, 1, 2, 3]))
    doc.update(
        revision=p.events + rng.randint(0, 5),
        updated=p.tick(1, 60),
        current_step=current,
        decisions=decisions,
        decision_log=decision_log,
        open_findings=findings,
        steps=steps,
    )
    if p.review_audit:
        doc["review_audit"] = p.review_audit
    return doc


def _write(top: Path, rel: str, doc: Any, rng: random.Random) -> None:
    target = top / rel
    target.parent.mkdir(parents=True)
    indent = rng.choice([2, 2, 2, 4, None])
    target.write_text(json.dumps(doc, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")


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
        _write(top, rel, doc, rng)
        paths.append(rel)
    return sorted(paths)


# --- v1.0/v2.0 states, for migrate ---------------------------------------------------------


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
            return ts(t + shift)
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
        project = f"{rng.choice(ORGS)}-{rng.choice(APPS)}-{i:05d}"
        shift = -timedelta(days=rng.randrange(0, 400), minutes=rng.randrange(0, 1440))
        doc = _vary(src, shift=shift, old=old, new=project)
        doc["project"] = project
        decisions = doc.get("decisions")
        if isinstance(decisions, dict):
            region = rng.choice(REGIONS)
            decisions["region"] = region
            if isinstance(doc.get("region"), str):
                doc["region"] = region
            decisions["compliance"] = rng.choice(COMPLIANCE)
            decisions["deployment_strategy"] = rng.choice(STRATEGIES)
        rel = f"agent-output/{project}/{STATE_FILE}"
        _write(top, rel, doc, rng)
        by_version.setdefault(_legacy_version(doc), []).append(rel)
    return {v: sorted(paths) for v, paths in sorted(by_version.items())}
