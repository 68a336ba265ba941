"""conformance-suite: the wall time of the whole conformance suite through the Python
reference adapter and, when present, the Node adapter (absolute time and cases/s)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from commandline import abbrev, bench_env, process, tool
from runner import OPTIONS, ROOT, BenchAbort, BenchUnavailable, Prepared, Run, benchmark, fmt_s

_PY_ADAPTER, _NODE_ADAPTER = "python reference adapter", "node adapter"
NODE_ADAPTER = ROOT / "conformance" / "js" / "adapter.mjs"
PY_SKIP = ROOT / "conformance" / "adapters" / "python" / "skip.txt"
NODE_SKIP = ROOT / "conformance" / "adapters" / "js" / "skip.txt"
SMOKE_CASES = "handoff/*"  # the cases run under --smoke (a group of about twenty)


def _conformance_rate(med: dict[str, float], info: dict[str, Any]) -> list[str]:
    out = []
    for name, s in med.items():
        c = info[name]
        line = (
            f"{name}: {c['total']} cases ({c['passed']} passed, {c['failed']} failed, "
            f"{c['skipped']} skipped) in {fmt_s(s)} = {c['total'] / s:.0f} cases/s"
        )
        if c["ran"] != c["total"]:
            line += f" ({c['ran']} reached the adapter: {c['ran'] / s:.0f}/s)"
        out.append(line)
    return out


def _adapters() -> tuple[dict[str, tuple[str, Path]], dict[str, str]]:
    """The adapter commands (with their skip lists) that can run here, and why the others
    cannot."""
    adapters = {_PY_ADAPTER: (f"{sys.executable} -m session_resume.conformance.adapter", PY_SKIP)}
    unavailable: dict[str, str] = {}
    node = shutil.which("node")
    if node is None:
        unavailable[_NODE_ADAPTER] = "node is not on PATH"
    elif not NODE_ADAPTER.is_file():
        unavailable[_NODE_ADAPTER] = f"{NODE_ADAPTER.relative_to(ROOT)} does not exist (yet)"
    else:
        adapters[_NODE_ADAPTER] = (f"{node} {NODE_ADAPTER}", NODE_SKIP)
    return adapters, unavailable


def _counts(name: str, cases: list[Any], summary: dict[str, Any]) -> dict[str, Any]:
    """What one run of the suite reported: totals, failures by kind, cases that ran."""
    # A failing case is the suite's verdict, not a reason not to time it, unless the case
    # hung or killed the adapter: then the time measures the timeout, not the suite.
    broken = [
        c["id"]
        for c in cases
        if c.get("outcome") == "failed" and c.get("failure") in ("timeout", "died")
    ]
    if broken:
        raise BenchAbort(
            f"{name}: {len(broken)} case(s) timed out or killed the adapter "
            f"({', '.join(broken[:5])}); the wall time would measure timeouts"
        )
    failures: dict[str, int] = {}
    for c in cases:
        if c.get("outcome") == "failed":
            kind = str(c.get("failure", "failed"))
            failures[kind] = failures.get(kind, 0) + 1
    return {
        "failure_kinds": failures,
        "total": summary["total"],
        "passed": summary["passed"],
        "failed": summary["failed"],
        "skipped": summary["skipped"],
        # cases the adapter ran (skip-list cases ran and failed; platform/unsupported ones
        # never reached the adapter)
        "ran": sum(
            1 for c in cases if c.get("outcome") != "skipped" or c.get("skip") == "skip_list"
        ),
    }


def _note(name: str, c: dict[str, Any]) -> str:
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(c["failure_kinds"].items()))
    return (
        f"{name}: {c['total']} cases: {c['passed']} passed, {c['failed']} failed"
        + (f" ({kinds})" if kinds else "")
        + f", {c['skipped']} skipped"
    )


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
    adapters, unavailable = _adapters()
    runs: dict[str, Run] = {}
    info: dict[str, Any] = {}
    for name, (cmd, skip) in adapters.items():
        argv = [sr, "conformance", "run", "--adapter", cmd, "--format", "json"]
        if skip.is_file():
            argv += ["--skip", str(skip)]
        if OPTIONS.smoke:
            argv += ["--cases", SMOKE_CASES]
        res = subprocess.run(
            argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True
        )
        try:
            report = json.loads(res.stdout)
            summary = report["summary"]
        except (ValueError, KeyError, TypeError):
            reason = (
                f"`{abbrev(argv)}` exited {res.returncode} without a report: "
                f"{(res.stdout + res.stderr).strip()[-800:]}"
            )
            if name == _PY_ADAPTER:
                raise BenchUnavailable(reason) from None
            unavailable[name] = reason
            continue
        info[name] = _counts(name, report.get("cases", []), summary)
        runs[name] = process(
            argv,
            cwd=ROOT,
            env=env,
            ok_codes=(0, 1),
            shown=shlex.join(argv).replace(str(ROOT) + "/", ""),
        )
    return Prepared(
        runs,
        notes=[_note(name, c) for name, c in info.items()],
        unavailable=unavailable,
        info=info,
    )
