"""The benchmarks: every one still runs (benchmarks/run.py --smoke), and their own logic,
tested on tiny data: the stability check that refuses a contender not in its installed
condition (a planted one compiles on every run), resume-context's counting of characters, and
the benchmark page generated from one run's JSON.

No timing is asserted (benchmarks are never timed assertions in the test suite): the smoke test
checks that every registered benchmark set up, ran, and produced its table row with a ratio
against its anchor, or says why it has none.
"""

from __future__ import annotations

import collections
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

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
        # a contender not in its installed condition here (e.g. check-jsonschema in a dev
        # environment that also holds the test extra) has no ratio, and says why
        anchor_ok = anchor and "not_comparable" not in anchor[0]
        assert anchor and anchor[0]["ratio_vs_anchor"] == (1.0 if anchor_ok else None), (
            name,
            res["contenders"],
        )
        for c in rows:
            # timed contenders keep their times; a benchmark with a unit (peak RSS) its values
            measured = c["times_s"] if res["unit"] is None else c["values"]
            assert c["runs"] == 2 and len(measured) == 2, (name, c)
            if anchor_ok and "not_comparable" not in c:
                assert c["ratio_vs_anchor"] > 0, (name, c)
            else:
                assert c["ratio_vs_anchor"] is None, (name, c)
        # an optional contender that cannot run here says why
        for c in res["contenders"]:
            assert "ratio_vs_anchor" in c or c.get("unavailable"), (name, c)
        # and the printed table carries the same row
        assert re.search(rf"^{re.escape(name)}\s", proc.stdout, re.M), name
        # every goal has its verdict, and a line in the goals table
        for goal in res["targets"]:
            # (or why not: not comparable here, or its contender not available here)
            why_not = goal.get("not_comparable") or goal.get("unavailable")
            assert "ratio" in goal or "value" in goal or why_not, (name, goal)
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


def _bench_modules() -> Any:
    """The benchmark harness modules (runner, commandline), imported from benchmarks/."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import commandline
        import runner
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    return runner, commandline


def test_a_contender_that_compiles_on_every_run_gets_no_ratio(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A planted contender imports a package that has no bytecode and may not write any
    (PYTHONDONTWRITEBYTECODE=1): it compiles its sources in every run. The benchmark prints
    "not comparable" for it, in its row and in the goals table, and no ratio of it."""
    runner, commandline = _bench_modules()
    pkg = tmp_path / "planted" / "compiles_every_run"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("VALUE = sum(range(10))\n", encoding="utf-8")
    env = commandline.bench_env(tmp_path)
    planted_env = {**env, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(pkg.parent)}
    argv = [sys.executable, "-c", "import compiles_every_run"]
    b = runner.Benchmark(
        name="planted",
        description="a contender that compiles on every run, against the bare interpreter",
        contenders=("planted", "bare"),
        anchor="bare",
        setup=lambda tmpdir: {
            "planted": commandline.process(argv, cwd=tmp_path, env=planted_env),
            "bare": commandline.process([sys.executable, "-c", "pass"], cwd=tmp_path, env=env),
        },
        targets=(runner.Target("planted", 100.0),),
        runs=3,
        quick_runs=3,
    )
    res = runner.run_benchmark(b, 3, tmp_path)
    assert not list(pkg.rglob("*.pyc"))  # it really had no bytecode, in every run
    rows = {c["name"]: c for c in res["contenders"]}
    assert "compiles 1 Python source file(s)" in rows["planted"]["not_comparable"]
    assert "compiles_every_run/__init__.py" in rows["planted"]["not_comparable"]
    assert rows["planted"]["ratio_vs_anchor"] is None
    assert "not_comparable" not in rows["bare"] and rows["bare"]["ratio_vs_anchor"] == 1.0
    (goal,) = res["targets"]
    assert "ratio" not in goal and goal["met"] is None and "planted" in goal["not_comparable"]
    runner.print_results([res], [], 1.0, {})
    out = capsys.readouterr().out
    table = [line for line in out.splitlines() if line.startswith("planted  ")]
    assert table and all(line.split()[1] != "planted" or "not comparable" in line for line in table)
    assert "planted: NOT COMPARABLE: it compiles" in out
    goals = [line for line in out.splitlines() if line.startswith("planted: planted vs bare")]
    assert len(goals) == 1 and goals[0].split()[4:6] == ["not", "comparable"], goals
    assert not re.search(r"\d\.\d{3}x", goals[0]), goals  # no measured ratio
    # the same contender with its bytecode written once (as installed) is comparable
    planted_env.pop("PYTHONDONTWRITEBYTECODE")
    res = runner.run_benchmark(b, 3, tmp_path)
    assert list(pkg.rglob("*.pyc"))
    rows = {c["name"]: c for c in res["contenders"]}
    assert "not_comparable" not in rows["planted"], rows["planted"]
    assert rows["planted"]["ratio_vs_anchor"] > 0 and "ratio" in res["targets"][0]


def test_stability_refuses_a_cold_first_run_and_a_foreign_package() -> None:
    runner, _ = _bench_modules()
    assert runner.stability([1.0, 1.1, 0.9, 1.0]) is None
    assert runner.stability([3.0, 1.0, 1.0, 1.0]) is None  # 3x is the limit, not over it
    why = runner.stability([3.5, 1.0, 1.0, 1.0])
    assert why is not None and "first timed run took 3.5x its median" in why
    why = runner.stability([1.0, 1.0], foreign=["lark", "rfc3987-syntax"])
    assert why is not None and "loads lark, rfc3987-syntax" in why
    # an anchor that is not comparable leaves every other contender without a ratio
    b = runner.Benchmark(
        name="t", description="", contenders=("a", "anchor"), anchor="anchor",
        setup=lambda tmpdir: {}, targets=(runner.Target("a", 1.0),), runs=4, quick_runs=4,
    )  # fmt: skip
    prepared = runner.Prepared(runs={n: runner.Run(lambda: None, n) for n in ("a", "anchor")})
    result: dict[str, Any] = {}
    times = {"a": [1.0, 1.0, 1.0, 1.0], "anchor": [9.0, 1.0, 1.0, 1.0]}
    runner._summarise(b, prepared, times, Path("/nonexistent"), result)
    rows = {c["name"]: c for c in result["contenders"]}
    assert rows["a"]["ratio_vs_anchor"] is None and "not_comparable" not in rows["a"]
    assert "anchor: its first timed run" in result["targets"][0]["not_comparable"]
    assert rows["anchor"]["p90_over_median"] > 1


def test_verbose_output_names_compiled_sources_and_loaded_distributions() -> None:
    _, commandline = _bench_modules()
    err = (
        "# code object from '/x/__pycache__/a.cpython-311.pyc'\n"
        "# code object from /tmp/p/b.py\n"
        "import 'b' # <_frozen_importlib_external.SourceFileLoader object at 0x1>\n"
    )
    assert commandline.compiled_sources(err) == ["/tmp/p/b.py"]
    import sysconfig

    site = sysconfig.get_paths()["purelib"]
    err = f"# code object from '{site}/packaging/__pycache__/version.cpython-311.pyc'\n"
    assert commandline.loaded_distributions(err) == {"packaging"}
    assert "packaging" in commandline.requirement_closure("packaging")


def test_resume_context_counts_characters_on_tiny_data() -> None:
    """resume-context's counting: the CLI path is the skill plus the answer; the upstream
    reading is its SKILL.md, the state file(s) and the step's context-budget row; the hook
    path is the additionalContext alone, in either place the hosts put it; the MCP path reads
    what a host shows of the tool's result."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import bench_resume_context as rc
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    assert rc.cli_reading("skill", "é!") == 7  # characters, not bytes
    row = rc.budget_row("2")
    assert row.startswith("| 2    | Architect") and len(row) == 126
    assert all(len(r) == 126 for r in rc.UPSTREAM_BUDGET_ROWS.values())
    assert rc.upstream_reading(["{}", '{"a"'], "2") == rc.UPSTREAM_SKILL_CHARS + 6 + 126
    assert rc.upstream_reading(["{}"], "3_5") == rc.UPSTREAM_SKILL_CHARS + 2  # no row
    specific = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "ab"}}
    assert rc.hook_context(json.dumps(specific)) == "ab"
    assert rc.hook_context(json.dumps({"additionalContext": "abc"})) == "abc"
    for nothing in ("", "{}", "not json", "[1]", json.dumps({"hookSpecificOutput": 5})):
        assert rc.hook_context(nothing) is None, nothing
    # a host hands the model the structured content when there is one, else the text
    both = {"content": [{"type": "text", "text": "plan"}], "structuredContent": {"a": "é"}}
    assert rc.host_view(both) == '{"a":"é"}'
    text = {"content": [{"type": "text", "text": "pl"}, {"type": "image"}, {"type": "text"}]}
    assert rc.host_view(text) == "pl" and rc.host_view({}) == ""
    # every situation has its goals, each against its own upstream reading
    goals = {(g.contender, g.against, g.max_ratio) for g in rc._goals()}
    for s in rc.SITUATIONS:
        assert (f"{s}: CLI", f"{s}: upstream", 0.8) in goals
        assert (f"{s}: MCP", f"{s}: upstream", 0.8) in goals
        assert (f"{s}: hook", f"{s}: upstream", 0.4) in goals
    med = {f"{s}: {p}": 10.0 for s in rc.SITUATIONS for p in ("CLI", "upstream")}
    parts = {"skill": 6, "answer": 4, "state": 2, "row": 1}
    (line,) = rc._derive(med, {"parts": {"mid-step": parts}})
    assert "SKILL.md 6 + resume answer 4 = 1.00x" in line and "hook not available" in line


def test_the_benchmark_page_is_what_its_run_gives() -> None:
    """docs/benchmarks.md is generated from docs/benchmarks.json (one run): it cannot drift."""
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "docpage.py"), "check"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


def test_the_page_says_when_its_run_is_not_a_default_one() -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import docpage
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    report = json.loads((REPO / "docs" / "benchmarks.json").read_text(encoding="utf-8"))
    default = {**report, "default": True, "quick": False, "smoke": False, "only": None}
    page = docpage.render({**default, "runs": None})
    # the command as the page shows it: without the paths of the machine that ran it
    assert "Not a default run" not in page and docpage.portable(report["command"]) in page
    quick = docpage.render({**default, "default": False, "quick": True, "only": ["x", "y"]})
    assert "**Not a default run** (--quick, --only x y)" in quick
    assert "## Method" in page and "## Goals, side by side in this run" in page
    assert "CHANGELOG.md" in page


def test_a_scratch_directory_inside_a_git_work_tree_is_refused(tmp_path: Path) -> None:
    """nox's session tmp (TMPDIR) lies inside the checkout, where the benchmarks' sessions are
    git-ignored: `validate DIR` listed none of them and every data check aborted. run.py now
    refuses such a TMPDIR before any benchmark, saying what to set; outside a work tree it runs."""
    repo = tmp_path / "repo"
    scratch = repo / ".nox" / "tmp"
    scratch.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitignore").write_text(".nox/\n", encoding="utf-8")
    argv = [sys.executable, str(RUN), "--only", "resume-context", "--quick"]
    proc = subprocess.run(
        argv,
        env={**_env_without_tmpdir(), "TMPDIR": str(scratch)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode != 0
    assert f"the temporary directory {scratch} is inside the git work tree" in proc.stderr
    assert "TMPDIR" in proc.stderr and "resume-context: setup" not in proc.stderr
    outside = tmp_path / "outside"
    outside.mkdir()
    proc = subprocess.run(
        argv,
        env={**_env_without_tmpdir(), "TMPDIR": str(outside)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "ABORTED" not in proc.stderr


def _env_without_tmpdir() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "TMPDIR"}
