"""The files of a session directory (docs/spec.md §1): the names of the state, its ``.bak``,
lock and temp files and the pre-migration copy, the files a writer creates or replaces, the
directory's own ``.gitignore`` (written when a session is new), and why a file may not be
written (:func:`write_target_problem`, the path policy's check of one name). Storage layer;
the store (:mod:`~session_resume.storage.store`) offers these names too.
"""

from __future__ import annotations

import os
import re
import stat

from session_resume.core.codes import diag
from session_resume.core.handoff_rules import HANDOFF
from session_resume.core.lease import SENTINEL
from session_resume.storage import fileio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from session_resume.core.diagnostics import Diagnostic
    from session_resume.storage.held import HeldDir

STATE = "00-session-state.json"
BAK = STATE + ".bak"
LOCK = STATE + ".lock"
TMP_PREFIX = "." + STATE + "."
TMP_SUFFIX = fileio.TMP_SUFFIX
# The pre-migration file, kept for good beside the state (docs/spec.md §1, §9.1 step 7):
# ``00-session-state.v2.0.json`` for a 2.0 state, ``00-session-state.v2.0-1.json`` (up to
# ``-99``) when something else holds that name. Not a state file: discovery, validate and
# resume never read it.
PRE_MIGRATION = re.compile(r"^00-session-state\.v([0-9]+\.[0-9]+)(?:-[0-9]{1,2})?\.json\Z")
PRE_MIGRATION_TRIES = 100  # names tried for the kept file before the migration is refused


def pre_migration_name(version: str, n: int = 0) -> str:
    """The name the pre-migration file of a ``version`` state is kept under (the ``n``-th
    free one when ``n``: the name is taken by something that is not this state's copy)."""
    return f"00-session-state.v{version}{f'-{n}' if n else ''}.json"


# The files a writer may create or replace in a session directory, besides the state.
WRITTEN_FILES = (LOCK, SENTINEL, "00-worklog.jsonl", HANDOFF)


# The files written in place (appended to, or locked): refused when hard-linked (SR107).
IN_PLACE_FILES = (LOCK, "00-worklog.jsonl")


# The session directory's own `.gitignore` (docs/spec.md §1): what a session leaves beside the
# files meant to be committed (the state, worklog, handoff, deliverables) never shows in
# `git status`: the lock, the lease, the `.bak`, temp files and kept corrupt copies.
GITIGNORE = ".gitignore"
GITIGNORE_TEXT = (
    "# Written by session-resume when it created this session (docs/spec.md §1): the lock,\n"
    "# the lease, the .bak, temp files and kept corrupt copies are this machine's, never\n"
    "# committed. The state, worklog, handoff and deliverables are.\n"
    f"{LOCK}\n"
    "00-session.active\n"
    f"{BAK}\n"
    f"{TMP_PREFIX}*{TMP_SUFFIX}\n"
    f"{STATE}.corrupt-*\n"
)


def write_gitignore(h: HeldDir) -> bool:
    """Write the session directory's `.gitignore` when the session is new (no state file yet)
    and none is there; never replaces a file or follows a link (``O_EXCL``). True when
    written."""
    if h.exists(STATE) or h.exists(GITIGNORE):
        return False
    try:
        fd = h.open(GITIGNORE, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except FileExistsError:
        return False
    try:
        fileio.write_all(fd, GITIGNORE_TEXT.encode())
    finally:
        os.close(fd)
    return True


def write_target_problem(
    held: HeldDir, name: str, *, links_only: bool = False
) -> Diagnostic | None:
    """Why ``name`` in ``held`` may not be written (None: it may): a link out of the root or
    dangling, not a regular file (unless ``links_only``), a file written in place with another
    name."""
    try:
        lst = held.stat(name)
    except OSError as exc:
        return diag("SR104", f"cannot stat: {exc.strerror}", file=held.name(name))
    if lst is None:
        return None
    if stat.S_ISLNK(lst.st_mode):
        _real, problem = held._link_target(name, held.name(name))
        if problem is not None:
            return problem
        try:
            lst = os.stat(name, dir_fd=held.fd)
        except OSError as exc:
            return diag("SR104", f"cannot stat: {exc.strerror}", file=held.name(name))
    if links_only:
        return None
    if not stat.S_ISREG(lst.st_mode):
        kind = "a directory" if stat.S_ISDIR(lst.st_mode) else "not a regular file"
        return diag("SR102", f"{name} is {kind}; refusing to write it", file=held.name(name))
    if name in IN_PLACE_FILES and lst.st_nlink > 1:
        return diag(
            "SR107",
            f"{name} has {lst.st_nlink} names (a hard link); it is written in place, so the "
            "other name's file would change too: refusing it",
            file=held.name(name),
        )
    return None
