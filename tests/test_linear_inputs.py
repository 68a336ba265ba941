"""Every reader near-linear in its input (issue 18): 10x the input costs at most 15x the time.

Each test times the same reader on a small and a ten-times-larger hostile input in one run and
asserts the ratio; a floor on the small timing keeps tiny timings from flaking (no absolute
time is asserted). Inputs over the limits are refused before they are read whole.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from session_resume.core.jsonread import parse_json_bytes
from session_resume.core.yamlsafe import MAX_YAML_DEPTH, load_yaml_text
from session_resume.services.validation import validate_file
from session_resume.storage import worklog

from conftest import apex_state

FLOOR = 0.05  # seconds: a small run faster than this counts as this


def cost(fn: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(2):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def assert_near_linear(make: Callable[[int], Callable[[], object]], n: int) -> None:
    small, big = make(n), make(10 * n)
    t_small, t_big = cost(small), cost(big)
    ratio = t_big / max(t_small, FLOOR)
    assert ratio <= 15, f"{n}: {t_small:.4f} s, {10 * n}: {t_big:.4f} s (x{ratio:.1f})"


def test_duplicate_keys() -> None:
    def make(n: int) -> Callable[[], object]:
        data = ("{" + ",".join('"k":1' for _ in range(n)) + "}").encode()
        return lambda: parse_json_bytes(data)

    assert_near_linear(make, 800)


def test_non_finite_numbers() -> None:
    def make(n: int) -> Callable[[], object]:
        data = ("{" + ",".join(f'"k{i}":NaN' for i in range(n)) + "}").encode()
        return lambda: parse_json_bytes(data)

    assert_near_linear(make, 400)


def test_schema_findings(tmp_path: Path) -> None:
    """Was quadratic in jsonschema's uniqueItems (64,000 findings: minutes)."""

    def make(n: int) -> Callable[[], object]:
        doc = apex_state()
        doc["open_findings"] = [{"bad": i} for i in range(n)]
        p = tmp_path / str(n) / "00-session-state.json"
        p.parent.mkdir()
        p.write_text(json.dumps(doc))
        return lambda: validate_file(p)

    assert_near_linear(make, 1_000)


def test_worklog_tail_after_a_giant_torn_line(tmp_path: Path) -> None:
    """Was quadratic: the tail reader re-joined and re-split its buffer for every chunk."""

    def make(n: int) -> Callable[[], object]:
        p = tmp_path / f"{n}.jsonl"
        p.write_bytes(b'{"v":1,"seq":1}\n' + b'{"v":1,"x":"' + b"x" * n)
        return lambda: worklog.read_tail(p, 10)

    assert_near_linear(make, 400_000)


@pytest.mark.parametrize("style", ["flow", "block"])
def test_yaml_nesting_is_refused_early(style: str) -> None:
    def text(n: int) -> str:
        if style == "flow":
            return "a: " + "[" * n + "]" * n + "\n"
        return "".join("  " * i + "- \n" for i in range(min(n, 400)))

    res = load_yaml_text(text(20_000), file="x.yaml")
    assert res.value is None and "nests deeper" in res.diagnostics[0].message
    assert load_yaml_text(text(MAX_YAML_DEPTH - 2), file="x.yaml").diagnostics == []

    def make(n: int) -> Callable[[], object]:
        t = text(n)
        return lambda: load_yaml_text(t, file="x.yaml")

    assert_near_linear(make, 2_000)


def test_handoff_with_many_artifacts() -> None:
    """Was quadratic: the handoff's path list was deduplicated by list membership."""
    from datetime import UTC, datetime

    from session_resume.core.workflow import load_workflow
    from session_resume.rendering.handoff import render_handoff

    wf = load_workflow("apex")

    def make(n: int) -> Callable[[], object]:
        doc = apex_state()
        doc["steps"]["1"]["artifacts"] = [f"agent-output/demo/a{i}.md" for i in range(n)]
        return lambda: render_handoff(doc, wf, now=datetime(2026, 3, 3, tzinfo=UTC))

    assert_near_linear(make, 2_000)
