"""Importers of the other seeds' formats (session-tracker v2.1, dotagent's checkpoint skill,
TodoWrite / Tasks lists) into a v3.0 session.

Each format has a **pure** mapping (parsed source data in, an :class:`~.common.ImportPlan`
out: the v3.0 state, the worklog events, the lease and coded notes; no I/O, the clock
injected) and a small reading part that gathers the source data. :mod:`.apply` writes a plan
into a session directory through the store (``store.save``, ``worklog.append``,
``sentinel.write``). The mapping rules are documented in ``docs/importers.md``.
"""

from __future__ import annotations

from session_resume.importers.common import ImportEvent, ImportPlan, ImportRefused

__all__ = ["ImportEvent", "ImportPlan", "ImportRefused"]
