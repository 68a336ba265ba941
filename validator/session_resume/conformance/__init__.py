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
OPERATIONS = ("validate", "migrate", "recover", "resume")
WRITING_OPERATIONS = ("migrate", "recover")
