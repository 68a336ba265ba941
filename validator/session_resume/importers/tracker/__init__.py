"""session-tracker v2.1 ``.session`` directory → a v3.0 session under the ``generic`` workflow.

:func:`map_tracker` is pure (parsed files in, an :class:`ImportPlan` out); :func:`read_source`
reads the directory (and changes nothing in it). The rules, and every place the result differs
from what session-tracker itself would say, are in ``docs/importers.md``.

The modules: :mod:`.source` (the parsed directory), :mod:`.read` (reading it, I/O),
:mod:`.mapping` (the mapping, with the crash signature, lease and document), :mod:`.steps`
(todo items → steps), :mod:`.files` (the file inventory → artifacts and context files),
:mod:`.history` (the worklog split into sessions, and what it says about each item),
:mod:`.events` (worklog lines → worklog events).

Summary of the mapping:

* every todo item becomes a step keyed by the item's ``id`` (its decimal value); an id that
  cannot be a key, or a duplicate, gets the next free key (SR810). ``x-todo-ids`` remembers
  the id and the text of every item, so a later ``sync-todos`` finds the same steps;
* statuses: ``completed`` → ``complete``, ``in_progress`` → ``in_progress``, ``pending`` →
  ``pending``, ``skipped`` → ``skipped``; anything else → ``pending`` with the original kept
  under the step's ``x-legacy`` (SR808; ``blocked`` also opens a finding). Only one step may
  be in progress: the tracker's ``current_step_id`` if it is one of them, else the one started
  last; the others become ``pending`` (SR809);
* the file inventory: paths relative to the tracker's project root (relative keys, and
  absolute ones under it or under v2.1's hard-coded ``/home/z/my-project``) become
  repository-relative; one file under a relative and an absolute key is one file (SR811);
  ``working``/``completed`` files are the step's artifacts, ``reading`` ones its context
  files; files still ``working``/``reading`` are reported as possibly incomplete;
* the worklog: one event per tracker line (the original under ``detail.original``), lines
  that do not parse kept as ``note`` events (SR807); ``init`` starts a tracker session, so a
  worklog that spans several sessions keeps them apart;
* the crash signature: a session still marked active (``SESSION_ACTIVE``, or not completed and
  no ``session_done`` of *this* session) gets a lease whose heartbeat is its last activity, so
  ``resume`` reports it orphaned (SR512); a finished one gets its ``session_end``.
"""

from __future__ import annotations

from session_resume.importers.tracker.history import salvage
from session_resume.importers.tracker.mapping import map_tracker
from session_resume.importers.tracker.read import read_source, read_worklog
from session_resume.importers.tracker.source import (
    DEFAULT_PROJECT_ROOT,
    FORMAT_VERSION,
    SOURCE,
    TrackerSource,
    WorklogLine,
)

__all__ = [
    "DEFAULT_PROJECT_ROOT",
    "FORMAT_VERSION",
    "SOURCE",
    "TrackerSource",
    "WorklogLine",
    "map_tracker",
    "read_source",
    "read_worklog",
    "salvage",
]
