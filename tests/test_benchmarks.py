"""The benchmark runner still runs every benchmark (benchmarks/run.py --smoke).

A smoke run: tiny data, two timed runs per contender. No timing is asserted (benchmarks are
never timed assertions in the test suite); the test checks that every registered benchmark
set up, ran, and produced its table row with a ratio against its anchor.
"""

from __future__ import annotations

import collections
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

# Test tier (README "Test tiers"): a smoke run of every benchmark (a minute of CPU).
pytestmark = pytest.mark.slow

RUN = REPO / "benchmarks" / "run.py"


def _registered() -> list[str]:
    out = subprocess.run(
        [sys.executable, str(RUN), "--list"], capture_output=True, text=True, check=True
    ).stdout
    return re.findall(r"^(\S+): ", out, re.M)


@pytest.mark.skipif(
    not any(
        (Path(sys.executable).parent / n).is_file()
        for n in ("check-jsonschema", "check-jsonschema.exe")
    ),
    reason="check-jsonschema (the anchor of the validate benchmarks) is not installed: "
    "pip install -e '.[bench]'",
)
def test_smoke_run_gives_every_benchmark_a_row_with_a_ratio(tmp_path: Path) -> None:
    names = _registered()
    assert len(names) >= 7, names
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, str(RUN), "--smoke", "--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["smoke"] is True and report["skipped"] == []
    results = {b["name"]: b for b in report["benchmarks"]}
    assert list(results) == names
    for name, res in results.items():
        assert "error" not in res and "unavailable" not in res, (name, res)
        rows = [c for c in res["contenders"] if "ratio_vs_anchor" in c]
        anchor = [c for c in rows if c["name"] == res["anchor"]]
        assert anchor and anchor[0]["ratio_vs_anchor"] == 1.0, (name, res["contenders"])
        for c in rows:
            # timed contenders keep their times; a benchmark with a unit (peak RSS) its values
            measured = c["times_s"] if res["unit"] is None else c["values"]
            assert c["runs"] == 2 and len(measured) == 2, (name, c)
            assert c["ratio_vs_anchor"] > 0, (name, c)
        # an optional contender that cannot run here says why
        for c in res["contenders"]:
            assert "ratio_vs_anchor" in c or c.get("unavailable"), (name, c)
        # and the printed table carries the same row
        assert re.search(rf"^{re.escape(name)}\s", proc.stdout, re.M), name
        # every goal has its verdict, and a line in the goals table
        for goal in res["targets"]:
            assert "ratio" in goal or "value" in goal, (name, goal)
            assert re.search(
                rf"^{re.escape(name)}: {re.escape(goal['contender'])}\s", proc.stdout, re.M
            )


@pytest.mark.parametrize("n", range(2, 8))
def test_rounds_are_shuffled_so_no_contender_mostly_follows_another(n: int) -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from runner import round_orders
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    names = [f"c{i}" for i in range(n)]
    rounds = [order for order, _ in zip(round_orders(names, "bench"), range(600), strict=False)]
    assert all(sorted(order) == names for order in rounds)  # each contender once a round
    again = [order for order, _ in zip(round_orders(names, "bench"), range(600), strict=False)]
    assert again == rounds  # the seed: the same orders in every run
    calls = [name for order in rounds for name in order]
    follows = collections.Counter(zip(calls, calls[1:], strict=False))
    pairs = [(a, b) for a in names for b in names if a != b]
    mean = sum(follows[p] for p in pairs) / len(pairs)
    # A rotation would give some pairs every round and others never.
    assert all(0.7 * mean <= follows[p] <= 1.3 * mean for p in pairs), follows


def test_the_save_breakdown_prints_the_floor_of_the_durability_contract() -> None:
    """save-vs-bare-io says what no validating save() with these system calls can beat: its
    system calls plus its checks, against the bare durable I/O."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import bench_save as b
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    med = {b._SAVE: 2.0e-3, b._BARE: 1.0e-3, b._CALLS: 1.2e-3, b._CHECKS: 0.5e-3}
    zero = dict.fromkeys(b._COUNTED, 0)
    info = {"counted": 5, "per_save": zero, "per_bare": zero, "bytes": 3069, "line": 130}
    lines = b._breakdown(med, info)
    floor = [line for line in lines if line.startswith("save()'s system calls plus its checks")]
    assert len(floor) == 1 and "= 1.70x the bare durable I/O" in floor[0], lines
    del med[b._CHECKS]
    assert not any("plus its checks" in line for line in b._breakdown(med, info))
