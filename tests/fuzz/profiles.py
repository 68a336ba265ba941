"""The Hypothesis profiles of the fuzz suite, and the count of inputs each property tried.

Profiles (selected with ``HYPOTHESIS_PROFILE``): ``bounded`` (default, part of the normal
suite: ~150 examples per property, derandomized so the suite is reproducible) and ``fuzz``
(``nox -s fuzz``: 5,000 examples per property, random seed, the CLI 200 runs).
``SESSION_RESUME_FUZZ_EXAMPLES`` overrides the per-property count of either profile. The
number of inputs each property tried is printed in the terminal summary (the plugin is
registered by this package's conftest.py).
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, settings

# --- profiles ------------------------------------------------------------------------------

_HEALTH = [
    HealthCheck.too_slow,
    HealthCheck.filter_too_much,
    HealthCheck.data_too_large,
    HealthCheck.large_base_example,
]
settings.register_profile(
    "bounded",
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=_HEALTH,
    print_blob=True,
)
settings.register_profile(
    "fuzz",
    max_examples=5000,
    deadline=None,
    suppress_health_check=_HEALTH,
    print_blob=True,
)
PROFILE_NAME = os.environ.get("HYPOTHESIS_PROFILE", "bounded")
if PROFILE_NAME not in ("bounded", "fuzz"):
    PROFILE_NAME = "bounded"  # another suite's profile: this module keeps its own bound
_BASE = settings.get_profile(PROFILE_NAME)
_N = int(os.environ.get("SESSION_RESUME_FUZZ_EXAMPLES") or 0) or _BASE.max_examples
# Not load_profile(): that would change the settings of every other module's tests too.
PROFILE = settings(_BASE, max_examples=_N)
DIR_PROFILE = PROFILE  # the session-directory properties (real files, fsync) share the count
# The CLI property starts a process per example: "a few dozen" in the normal suite.
CLI_PROFILE = settings(_BASE, max_examples=24 if PROFILE_NAME == "bounded" else 200)


# --- counting what was tried, printed in the terminal summary ------------------------------

TRIED: Counter[str] = Counter()
SECONDS: Counter[str] = Counter()
_LABEL: dict[str, str] = {}  # test function -> the label its inputs are counted under


class _FuzzSummary:
    """Prints how many inputs each property tried, whatever the capture mode."""

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not TRIED:
            return
        terminalreporter.section("session-resume fuzz: inputs tried")
        terminalreporter.write_line(
            f"profile {PROFILE_NAME!r}: {PROFILE.max_examples} examples per property, "
            f"{CLI_PROFILE.max_examples} CLI runs; an input is counted each time a property "
            "body runs (including inputs rejected by assume() and Hypothesis' shrinking)"
        )
        width = max(len(k) for k in TRIED)
        for name in sorted(TRIED):
            terminalreporter.write_line(
                f"  {name:<{width}}  {TRIED[name]:>7} inputs  {SECONDS[name]:7.1f} s"
            )
        terminalreporter.write_line(
            f"  {'total':<{width}}  {sum(TRIED.values()):>7} inputs  {sum(SECONDS.values()):7.1f} s"
        )


def tried(label: str) -> None:
    TRIED[label] += 1
    _LABEL[_LABEL["current"]] = label
