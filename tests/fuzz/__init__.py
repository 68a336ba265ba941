"""Fuzzing (issue 8): Hypothesis properties over validate, migrate, recover and decide.

One test module per property group (``test_fuzz_<group>.py``: reader, validate, migrate,
decide, handoff, workflow, session_read, recover, writers, cli); the shared Hypothesis
profiles and the count of inputs tried are in ``profiles.py``, the strategies in
``strategies.py``, the shared checks in ``checks.py``, the session-directory builder in
``sessiondirs.py``.

Inputs come in three families:

* **structured documents**: a valid state (``apex_state()``, or a real v1/v2/v3 file from
  ``fixtures/migrate``) mutated field by field: a value replaced, deleted or inserted at a
  random JSON pointer, with random JSON values, wrong types, hostile strings (paths that
  escape, control characters, lone surrogates, huge strings) and deep nesting;
* **bytes**: random bytes, and bytes near a valid file (truncated, byte order marks, UTF-16,
  flipped, inserted and deleted bytes, duplicate keys, NaN, trailing garbage, deep arrays);
* **session directories**: random combinations of state, ``.bak``, worklog, sentinel, lock,
  temp and ``.corrupt-*`` entries, each absent, a regular file with random contents, a
  directory, a FIFO or a symbolic link (inside the directory, dangling, or out of the root).

Properties: nothing escapes but a coded diagnostic (or the coded ``MigrationError`` /
``StoreError``); ``migrate`` is pure and idempotent, its result validates against the 3.0
schema and its JSON Patch reproduces it; ``decide`` is total, deterministic, pure and its
output follows ``schema/decision/2.json``; ``recover`` never touches ``.bak`` and never loses
the corrupt file; a failed ``save`` leaves state and ``.bak`` byte for byte as they were; the
CLI answers random bytes with an exit code, never a traceback or SR900.

Profiles (registered in ``profiles.py``, selected with ``HYPOTHESIS_PROFILE``): ``bounded``
(default, part of the normal suite: ~150 examples per property, derandomized so the suite is
reproducible) and ``fuzz`` (``nox -s fuzz``: 5,000 examples per property, random seed, the CLI
200 runs). ``SESSION_RESUME_FUZZ_EXAMPLES`` overrides the per-property count of either
profile. The number of inputs each property tried is printed in the terminal summary.

Bugs these properties found are kept at the end of their group's module as plain examples
(the minimal reproduction, with the commit that fixed it). A bug found and not yet fixed gets
a ``test_known_bug_*`` test in its group's module, marked ``xfail(strict=True)``, and the
properties step around exactly its inputs with an ``assume`` naming that test, so they keep
looking for new ones; when the fix lands the xfail flips to XPASS (a failure under strict):
delete the marker and the ``assume`` together.
"""
