"""The fuzz suite's own fixture: every test's time is counted under the label of the property
it ran, and the summary of inputs tried is printed at the end (see ``profiles.py``)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from .profiles import _LABEL, SECONDS, _FuzzSummary


@pytest.fixture(autouse=True)
def _count_time(request: pytest.FixtureRequest) -> Iterator[None]:
    pm = request.config.pluginmanager
    if pm.get_plugin("session-resume-fuzz-summary") is None:
        pm.register(_FuzzSummary(), "session-resume-fuzz-summary")
    _LABEL["current"] = request.node.name
    start = time.perf_counter()
    yield
    label = _LABEL.get(request.node.name)
    if label is not None:
        SECONDS[label] += time.perf_counter() - start
