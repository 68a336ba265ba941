"""docs/benchmarks.md shows the run's command as a reader would type it, without the paths of
the machine that ran it (the interpreter of a nox environment in someone's checkout, a
temporary file), and it is what docs/benchmarks.json gives."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))

from doctables import portable  # noqa: E402


def test_the_page_names_no_machine_path() -> None:
    page = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    commands = re.findall(r"`([^`]*benchmarks/run\.py[^`]*)`", page)
    assert commands, "the page names the run's command"
    for c in commands:
        assert not re.search(r"(^|\s)/", c), c


def test_portable_command() -> None:
    cmd = "/work/x/.nox/bench_docs/bin/python benchmarks/run.py --json /tmp/abc/b.json"
    assert portable(cmd) == "python benchmarks/run.py --json RUN.json"
    assert portable("python3 /home/u/sr/benchmarks/run.py --quick") == (
        "python benchmarks/run.py --quick"
    )


def test_the_page_is_what_the_figures_give() -> None:
    proc = subprocess.run(
        [sys.executable, "benchmarks/docpage.py", "check"], cwd=REPO, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
