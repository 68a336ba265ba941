"""`python -X importtime` profiles of two cold commands, as Markdown tables for
docs/benchmarks.md: a `validate` of the bundled example and a `checkpoint` (the write moment
of checkpoint-cold), the top 15 imports by cumulative time.

    python benchmarks/importtime.py [--runs N] [--top N]

Each command runs once untimed (warm OS caches, bytecode as installed, as in the benchmarks),
then N times under ``-X importtime``; a module's figures are the medians over the runs.
"""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench_write_cold import checkpoint_argv, prepare_session  # noqa: E402
from commandline import bench_env, check_output, tool  # noqa: E402
from runner import EXAMPLE  # noqa: E402
from states import STATE_FILE  # noqa: E402

_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def _profile(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[dict[str, int], ...]:
    """One run under -X importtime: (self us, cumulative us, depth) per module, and the wall
    time of the process in us."""
    t0 = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = int((time.perf_counter() - t0) * 1e6)
    if res.returncode != 0:
        raise SystemExit(f"`{shlex.join(argv)}` exited {res.returncode}:\n{res.stderr[-2000:]}")
    own: dict[str, int] = {}
    cum: dict[str, int] = {}
    depth: dict[str, int] = {}
    for line in res.stderr.splitlines():
        m = _LINE.match(line)
        if m:
            name = m.group(4)
            own[name], cum[name] = int(m.group(1)), int(m.group(2))
            depth[name] = (len(m.group(3)) - 1) // 2
    return own, cum, depth, {"wall": wall}


def table(title: str, runs: list[tuple[dict[str, int], ...]], top: int) -> str:
    """The Markdown table of the top ``top`` modules by median cumulative time."""
    own: dict[str, list[int]] = defaultdict(list)
    cum: dict[str, list[int]] = defaultdict(list)
    depth: dict[str, int] = {}
    for o, c, d, _ in runs:
        for name in c:
            own[name].append(o[name])
            cum[name].append(c[name])
            depth[name] = d[name]
    med = {n: statistics.median(xs) for n, xs in cum.items()}
    total = sum(statistics.median(cum[n]) for n in cum if depth[n] == 0)
    wall = statistics.median(r[3]["wall"] for r in runs) / 1e3
    out = [
        f"**{title}** — median of {len(runs)} runs: {wall:.1f} ms wall, of which "
        f"{total / 1e3:.1f} ms in imports ({len(cum)} modules imported)",
        "",
        "| # | module (depth) | cumulative | self |",
        "|---|---|---|---|",
    ]
    for i, name in enumerate(sorted(med, key=lambda n: -med[n])[:top], start=1):
        out.append(
            f"| {i} | `{name}` ({depth[name]}) | {med[name] / 1e3:.1f} ms | "
            f"{statistics.median(own[name]) / 1e3:.1f} ms |"
        )
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="profiled runs per command")
    parser.add_argument("--top", type=int, default=15, help="modules per table")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="session-resume-importtime-"))
    try:
        env = bench_env(tmp)
        shutil.copyfile(EXAMPLE, tmp / STATE_FILE)
        validate = [tool("session-resume"), "validate", STATE_FILE, "--root", str(tmp)]
        root, _ = prepare_session(tmp)
        checkpoints = [checkpoint_argv(root, s) for s in ("phase_3_cost", "phase_2_waf")]
        for argv, cwd in ((validate, tmp), *((c, root) for c in checkpoints)):
            check_output(argv, cwd=cwd, env=env, what="warm-up")
        v = [_profile(validate, tmp, env) for _ in range(args.runs)]
        c = [_profile(checkpoints[i % 2], root, env) for i in range(args.runs)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(table("`session-resume validate 00-session-state.json` (the example)", v, args.top))
    print()
    print(table("`session-resume checkpoint 2 <id> --project contoso-portal ...`", c, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
