"""The conformance suite's toolchain (docs/conformance.md, docs/spec.md §11): load the
cases under ``conformance/cases``, run them through any implementation's adapter process,
compare, report, and lint the suite.

Modules: :mod:`.cases` (case loader and the session directory a case describes),
:mod:`.compare` (expected vs actual results and file trees), :mod:`.adapterproc` (the adapter
process and its NDJSON protocol), :mod:`.runner` (the run), :mod:`.report` (text, JSON, JUnit,
badge), :mod:`.lint` (the suite's self-lint), :mod:`.adapter` (the Python reference adapter) and
:mod:`.cli` (``session-resume conformance``).
"""

from __future__ import annotations

PROTOCOL_VERSION = 1
# What a case does (case.yaml `operation`): one of the four operations, or a sequence of steps.
OPERATIONS = ("validate", "migrate", "recover", "resume", "sequence")
WRITING_OPERATIONS = ("migrate", "recover")
# The write moments and session commands a sequence's steps run through the adapter
# (docs/conformance.md, "Sequence cases"): each answers written, codes, session, revision.
WRITE_OPERATIONS = (
    "init",
    "session_start",
    "session_end",
    "start",
    "checkpoint",
    "complete",
    "skip",
    "decide",
    "transition",
    "approve",
)
# What an adapter may declare in its start response: the four operations and the writes.
ADAPTER_OPERATIONS = ("validate", "migrate", "recover", "resume", *WRITE_OPERATIONS)
# Steps the runner does itself between operations (a crash's leftovers, a corrupted state).
RUNNER_STEPS = ("write", "remove")
