"""The Markdown tables of docs/benchmarks.md from the JSON of one run.

    python benchmarks/run.py --quick --json /tmp/bench.json
    python benchmarks/doctables.py /tmp/bench.json

Prints the run's machine table, the goals table (one line per goal, as the run printed it)
and one table per benchmark (median, p90 or max, runs, ratio against the anchor).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from runner import fmt_anchor_ratio, fmt_s, fmt_spread, fmt_value, goal_rows  # noqa: E402


def _md(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines)


def portable(command: str) -> str:
    """The run's command line as a reader types it: the interpreter as `python`, a file it
    writes as `RUN.json`, a path to this checkout relative to it (no machine's paths)."""
    import shlex

    words = shlex.split(command)
    out = []
    for i, w in enumerate(words):
        if i == 0 and ("/" in w or w.startswith("python")):
            out.append("python")
        elif i > 0 and words[i - 1] == "--json":
            out.append("RUN.json")
        elif os.path.isabs(w) and "benchmarks/" in w:
            out.append(w[w.index("benchmarks/") :])
        else:
            out.append(w)
    return shlex.join(out)


def machine_table(report: dict[str, Any]) -> str:
    m = report["machine"]
    rows = [
        ["command", f"`{portable(report['command'])}`"],
        ["date", f"{report['started']}, total {report['elapsed_s']:.0f} s"],
        ["machine", f"{m['platform']}; {m['cpu']}; {m['cores']} cores"],
        ["Python", m["python"]],
        ["versions", ", ".join(f"{k} {v}" for k, v in m["versions"].items())],
        ["source", f"`{m['source']}`"],
        ["temp dir", m["temp_dir"]],
    ]
    if "load_average_at_start" in m:
        start = " / ".join(str(x) for x in m["load_average_at_start"])
        end = " / ".join(str(x) for x in m.get("load_average_at_end", []))
        rows.append(["load average", f"{start} at start, {end} at end (1, 5, 15 min)"])
    return _md(["", ""], rows)


def benchmark_table(res: dict[str, Any]) -> str:
    if "error" in res or "unavailable" in res:
        return f"({res.get('error') or 'not available: ' + res['unavailable']})"
    unit = res.get("unit")
    rows = []
    for c in res["contenders"]:
        name = c["name"] + (" (anchor)" if c["name"] == res["anchor"] else "")
        if "unavailable" in c:
            rows.append([name, "not available", "", "", "", ""])
        elif unit is None:
            rows.append(
                [
                    name,
                    fmt_s(c["median_s"]),
                    fmt_s(c["p90_s"]),
                    fmt_spread(c),
                    str(c["runs"]),
                    fmt_anchor_ratio(c),
                ]
            )
        else:
            rows.append(
                [
                    name,
                    fmt_value(c["median"], unit),
                    fmt_value(c["max"], unit),
                    "-",
                    str(c["runs"]),
                    fmt_anchor_ratio(c),
                ]
            )
    spread = "p90" if unit is None else "max"
    out = _md(["contender", "median", spread, "p90/median", "runs", "ratio"], rows)
    extra = [
        f"{c['name']}: not available: {c['unavailable']}"
        for c in res["contenders"]
        if "unavailable" in c
    ]
    extra += [
        f"{c['name']}: **not comparable**: {c['not_comparable']}"
        for c in res["contenders"]
        if "not_comparable" in c
    ]
    extra += res.get("derived") or []
    return out + ("\n\n" + "\n".join(f"- {d}" for d in extra) if extra else "")


def main(argv: list[str]) -> int:
    report = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    import runner

    runner.PENDING[:] = [(p["module"], p["what"], p["goal"]) for p in report.get("pending", [])]
    print(machine_table(report))
    print()
    print(_md(["what", "measured", "goal", "met?"], goal_rows(report["benchmarks"])))
    for res in report["benchmarks"]:
        print(f"\n### {res['name']}\n")
        print(benchmark_table(res))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
