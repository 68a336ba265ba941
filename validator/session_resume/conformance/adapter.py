"""The Python reference adapter: ``python -m session_resume.conformance.adapter``.

Speaks the adapter protocol (schema/conformance/*.json) on stdin/stdout and answers each case
with the library functions the CLI uses: :func:`validate`, :func:`state_repair.migrate_session`,
:func:`state_repair.recover`, and :func:`snapshot.take` + :func:`resume_decision.decide`; the
steps of a sequence case with the write services (:mod:`session_resume.services.writes`,
:mod:`session_resume.services.leases`).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

from session_resume import __version__, records
from session_resume.conformance import ADAPTER_OPERATIONS, PROTOCOL_VERSION
from session_resume.core import lease as lease_rules
from session_resume.core.resume_decision import Options, decide
from session_resume.core.timeutil import parse_now
from session_resume.core.validation import ValidateOptions
from session_resume.core.workflow import WorkflowError, load_workflow, state_workflow_spec
from session_resume.services import leases, writes
from session_resume.services.context import WriteContext, session_dir_for_project
from session_resume.services.errors import ServiceError
from session_resume.services.resume import with_workflow_files
from session_resume.services.validation import validate
from session_resume.storage.snapshot import take
from session_resume.storage.state_repair import migrate_session, recover
from session_resume.storage.store import StoreError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _now(value: str) -> Any:
    return parse_now(value)


def session_dir(case: dict[str, Any]) -> str:
    """The session directory of a run request: ``dir``, or the one ``name`` names as a command
    line would (docs/spec.md §1, "Naming a session"): a project by the workflow's
    ``session_dir`` pattern under the root; a relative path under the root when it exists
    there, else under the current directory (``cwd``); ``./`` and ``../`` always the latter."""
    if case.get("dir"):
        return str(case["dir"])
    name, root = case["name"], Path(case["root"])
    if "project" in name:
        workflow = case["arguments"].get("workflow") or "apex"
        return str(session_dir_for_project(root, name["project"], workflow))
    path = str(name["path"])
    cwd = Path(case.get("cwd") or root)
    if os.path.isabs(path):
        return path
    if path in (".", "..") or path.startswith(("./", "../")):
        return os.path.normpath(cwd / path)
    under_root = root / path
    return str(under_root if os.path.lexists(under_root) else cwd / path)


def op_validate(case: dict[str, Any]) -> dict[str, Any]:
    a = case["arguments"]
    opts = ValidateOptions(
        workflow=a["workflow"],
        check_artifacts=a["check_artifacts"],
        now=_now(case["now"]),
        skew_seconds=a["skew_seconds"],
        max_size=a["max_size"],
        root=Path(case["root"]),
    )
    reports = validate([a["path"]], opts)
    return {"codes": sorted({d.code for r in reports for d in r.diagnostics})}


def op_migrate(case: dict[str, Any]) -> dict[str, Any]:
    a = case["arguments"]
    try:
        out = migrate_session(
            session_dir(case),
            now=_now(case["now"]),
            write=True,
            workflow=a["workflow"],
            root=case["root"],
            salvage=a.get("salvage", False),
        )
    except WorkflowError as exc:
        return {"status": "refused", "codes": sorted({d.code for d in exc.diagnostics})}
    return {"status": out.status, "codes": sorted({d.code for d in out.notes})}


def op_recover(case: dict[str, Any]) -> dict[str, Any]:
    a = case["arguments"]
    try:
        res = recover(
            session_dir(case),
            now=_now(case["now"]),
            workflow=a["workflow"],
            project=a["project"],
            root=case["root"],
        )
    except (StoreError, WorkflowError) as exc:
        return {"status": "refused", "codes": sorted({d.code for d in exc.diagnostics})}
    return {"status": res.action, "codes": sorted({d.code for d in res.diagnostics})}


def op_resume(case: dict[str, Any]) -> dict[str, Any]:
    a = case["arguments"]
    snap = take(session_dir(case), root=case["root"])
    # The runner says whether the lease's owner process lives: never probe the real machine.
    snap = records.replace(snap, owner_alive=a["owner_alive"])
    spec = a["workflow"] or state_workflow_spec((snap.document or {}).get("workflow"))
    wf = load_workflow(spec)
    snap = with_workflow_files(snap, Path(session_dir(case)), wf)
    opts = Options(session=a["session"], stale_seconds=a["stale_seconds"], takeover=a["takeover"])
    return {"decision": decide(snap, a["step"], _now(case["now"]), wf, opts)}


@contextlib.contextmanager
def _minting(session_id: str) -> Iterator[None]:
    """A write that must choose a new session id (an implicit lease, a takeover naming none)
    chooses ``session_id``: the runner fixes it, so that the files are the case's."""
    original = lease_rules.new_session_id
    lease_rules.new_session_id = lambda: session_id
    try:
        yield
    finally:
        lease_rules.new_session_id = original


def _write(case: dict[str, Any], run: Callable[[Any], Any]) -> dict[str, Any]:
    """Run one write service; its answer: written, the refusal's codes, the session id it
    wrote under and the revision it wrote."""
    a = case["arguments"]
    where = Path(session_dir(case))
    if case["operation"] != "init" and not where.is_dir():
        return {"written": False, "codes": ["SR100"], "session": None, "revision": None}
    ctx = WriteContext(
        session_dir=where,
        now=_now(case["now"]),
        root=Path(case["root"]),
        session=a["session"],
        owner=a["owner"],
        stale_seconds=a["stale_seconds"],
    )
    try:
        with _minting(a["new_session"]):
            res = run(ctx)
    except (ServiceError, WorkflowError) as exc:
        codes = sorted({d.code for d in exc.diagnostics})
        return {"written": False, "codes": codes, "session": None, "revision": None}
    revision = getattr(res, "revision", None)
    written = getattr(res, "action", "written") not in ("none",)
    return {"written": written, "codes": [], "session": res.session, "revision": revision}


def _write_op(case: dict[str, Any]) -> dict[str, Any]:
    a, op = case["arguments"], case["operation"]
    runs: dict[str, Callable[[Any], Any]] = {
        "init": lambda c: writes.init_session(c, a["project"], workflow=a["workflow"]),
        "session_start": lambda c: leases.start_session(c, takeover=a["takeover"]),
        "session_end": lambda c: leases.end_session(c, reason=a.get("reason")),
        "start": lambda c: writes.start_step(c, a["step"], force=a["force"]),
        "checkpoint": lambda c: writes.checkpoint(
            c, a["step"], a["sub_step"], a["artifacts"], a["context_files"]
        ),
        "complete": lambda c: writes.complete_step(c, a["step"]),
        "skip": lambda c: writes.skip_step(c, a["step"], a["reason"], force=a["force"]),
        "decide": lambda c: writes.set_decision(c, a["key"], a["value"]),
        "transition": lambda c: writes.transition(
            c, a["complete"], a["start"], a["decisions"], force=a["force"]
        ),
        # the handoff is the Python toolchain's rendering: the suite compares the state
        "approve": lambda c: writes.approve_gate(c, a["step"], a["decisions"], handoff=False),
    }
    return _write(case, runs[op])


OPS = {
    "validate": op_validate,
    "migrate": op_migrate,
    "recover": op_recover,
    "resume": op_resume,
    **dict.fromkeys(ADAPTER_OPERATIONS[4:], _write_op),
}


def handle(message: dict[str, Any]) -> dict[str, Any] | None:
    cmd = message.get("cmd")
    if cmd == "start":
        return {
            "version": PROTOCOL_VERSION,
            "implementation": {
                "name": "session-resume (Python reference)",
                "language": "python",
                "version": __version__,
                "notes": f"CPython {platform.python_version()}",
            },
            "operations": list(ADAPTER_OPERATIONS),
        }
    if cmd == "run":
        seq = message.get("seq")
        case = message.get("case") or {}
        try:
            return {"seq": seq, "result": OPS[case["operation"]](case)}
        except Exception as exc:  # noqa: BLE001 - reported to the runner as errored
            return {
                "seq": seq,
                "errored": {
                    "message": f"{type(exc).__name__}: {exc}",
                    "traceback": traceback.format_exc(),
                },
            }
    return None


def main() -> int:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if message.get("cmd") == "stop":
            return 0
        answer = handle(message)
        if answer is not None:
            sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
