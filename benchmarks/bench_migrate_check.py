"""migrate-check-1000: `session-resume migrate --check` over 1,000 old (v1.0/v2.0) session
directories, against check-jsonschema validating the same files against their own version."""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from pathlib import Path
from typing import Any

from commandline import Sequential, abbrev, bench_env, check_output, process, tool
from runner import OPTIONS, ROOT, BenchAbort, Prepared, Run, benchmark, progress
from states import write_legacy_states

_MIGRATE_NOW = "2026-06-01T00:00:00Z"  # after every generated time
SMOKE_COUNT = 20  # files under --smoke


def _check_would_migrate(sr: list[str], tmpdir: Path, env: dict[str, str], count: int) -> str:
    """Every file would migrate (exit 1 is --check's "something would change"); none is
    refused and nothing else is reported. Returns the notes it gave, counted by kind."""
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
        out: dict[str, Any] = json.loads(res.stdout)
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
    return ", ".join(f"{v} {k}" for k, v in sorted(kinds.items())) or "no notes"


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
    count = SMOKE_COUNT if OPTIONS.smoke else 1000
    t0 = time.perf_counter()
    by_version = write_legacy_states(tmpdir, count, seed=1000)
    progress(f"  generated {count} v1/v2 state files in {time.perf_counter() - t0:.1f} s")
    sr = [tool("session-resume"), "migrate", "--check", "agent-output", "--root", str(tmpdir)]
    # --salvage: a generated state may hold contradictions, refused without it (docs/spec.md §9.4)
    sr += ["--now", _MIGRATE_NOW, "--salvage"]
    n_notes = _check_would_migrate(sr, tmpdir, env, count)
    anchors: list[Run] = []
    for version, files in by_version.items():
        schema = ROOT / "schema" / "session-state" / f"{version}.json"
        cj = [tool("check-jsonschema"), "--schemafile", str(schema), *files]
        check_output(cj, cwd=tmpdir, env=env, what="setup")
        anchors.append(process(cj, cwd=tmpdir, env=env, shown=abbrev(cj)))
    return Prepared(
        {
            "session-resume migrate --check": process(
                sr, cwd=tmpdir, env=env, ok_codes=(1,), shown=shlex.join(sr) + "  (exit 1)"
            ),
            "check-jsonschema (own version)": Run(
                Sequential(anchors),
                "  &&  ".join(r.shown for r in anchors),
                probe=anchors[0].probe,
            ),
        },
        notes=[
            ", ".join(f"{len(v)} v{k} files" for k, v in by_version.items())
            + f"; migrate --check says all {count} would migrate, none refused; notes: "
            f"{n_notes} (SR150: what was filled in; SR151: values kept under x-legacy)"
        ],
    )
