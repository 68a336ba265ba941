"""dotagent "checkpoint" skill (``memory/state/phase.json`` + ``execution.json``) → a v3.0
session under the ``dotagent`` workflow.

:func:`map_dotagent` is pure: the parsed checkpoint files and the facts about the outputs
they name (exists, modification time, parses) in, an :class:`ImportPlan` out.
:func:`read_source` gathers those facts and changes nothing in the memory directory.

The modules: :mod:`.source` (the parsed checkpoint and its paths), :mod:`.read` (reading the
memory directory), :mod:`.mapping` (the mapping, with the session header, lease and document),
:mod:`.phases` (completed phases and the phase in progress → steps, checkpoints and events),
:mod:`.tasks` (execution.json's task recovery), :mod:`.approvals` (user approvals → the
decision log), :mod:`.context` (what the parts of one mapping share).

Summary (details and differences from the skill's own resume in ``docs/importers.md``):

* a phase in ``completed_phases`` → its step ``complete`` (``completed`` = ``completed_at``)
  with its ``output`` as artifact (SR816 if the output is missing);
* the ``current_phase`` with ``phase_status`` ``in_progress`` → its step in progress at the
  checkpoint the skill's "Determine Resume Point" table finds from the files on disk
  (demand.json; designs / final_design.json; execution.json; verification.json; reflections),
  or with no checkpoint (restart) when none exists. ``failed`` → in progress with no
  checkpoint and an open finding (SR818); ``pending``/``complete`` → pending (the phase has
  not started);
* IMPLEMENTATION's tasks (``execution.json``) are recovered as the skill says: a ``running``
  task with no (readable) output → ``pending`` with ``attempts`` + 1 (scenario 1, SR819); one
  whose output exists → the status the output reports (scenario 2, SR820). The reconciled
  copy is written to ``state/execution.json`` in the session directory (the workflow's place
  for it); the source file is not touched;
* ``interruption_safe: false`` → SR815; user approvals → ``decision_log`` entries; the
  archives under ``state/.archive/`` are listed (SR821) and one can be imported instead;
* a phase still in progress gets a lease whose heartbeat is ``last_updated``, so ``resume``
  reports the crashed session as orphaned (SR512); otherwise the worklog ends the session.
"""

from __future__ import annotations

from session_resume.importers.dotagent.mapping import map_dotagent
from session_resume.importers.dotagent.read import list_archives, read_source
from session_resume.importers.dotagent.source import (
    ARCHIVE_DIR,
    EXECUTION_FILE,
    PHASES,
    SOURCE,
    ArchiveEntry,
    DotagentSource,
    FileFacts,
    memory_relative,
    task_output,
)

__all__ = [
    "ARCHIVE_DIR",
    "EXECUTION_FILE",
    "PHASES",
    "SOURCE",
    "ArchiveEntry",
    "DotagentSource",
    "FileFacts",
    "list_archives",
    "map_dotagent",
    "memory_relative",
    "read_source",
    "task_output",
]
