"""The Python reference adapter: ``python -m session_resume.conformance.adapter``.

Speaks the adapter protocol (schema/conformance/*.json) on stdin/stdout and answers each case
with the library functions the CLI uses: :func:`validate`, :func:`state_repair.migrate_session`,
:func:`state_repair.recover`, and :func:`snapshot.take` + :func:`resume_decision.decide`.
"""

from __future__ import annotations

import json
import platform
import sys
import traceback
from pathlib import Path

from session_resume import __version__, records
from session_resume.conformance import OPERATIONS, PROTOCOL_VERSION

TYPE_CHECKING = False  # typing is imported for the type checker only (cold start)
if TYPE_CHECKING:
    from typing import Any


def _now(value: str) -> Any:
    # lazy: `conformance list` and `lint` need no runner
    from session_resume.core.timeutil import parse_now

    return parse_now(value)


def op_validate(case: dict[str, Any]) -> dict[str, Any]:
    # lazy: `conformance list` and `lint` need no runner
    from session_resume.core.validation import ValidateOptions

    # lazy: `conformance list` and `lint` need no runner
    from session_resume.services.validation import validate

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
    # lazy: `conformance list` and `lint` need no runner
    from session_resume.core.workflow import WorkflowError

    # lazy: `conformance list` and `lint` need no runner
    from session_resume.storage.state_repair import migrate_session

    a = case["arguments"]
    try:
        out = migrate_session(
            case["dir"],
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
    # lazy: `conformance list` and `lint` need no runner
    from session_resume.core.workflow import WorkflowError

    # lazy: `conformance list` and `lint` need no runner
    from session_resume.storage.state_repair import recover

    # lazy: `conformance list` and `lint` need no runner
    from session_resume.storage.store import StoreError

    a = case["arguments"]
    try:
        res = recover(
            case["dir"],
            now=_now(case["now"]),
            workflow=a["workflow"],
            project=a["project"],
            root=case["root"],
        )
    except (StoreError, WorkflowError) as exc:
        return {"status": "refused", "codes": sorted({d.code for d in exc.diagnostics})}
    return {"status": res.action, "codes": sorted({d.code for d in res.diagnostics})}


def op_resume(case: dict[str, Any]) -> dict[str, Any]:
    # lazy: `conformance list` and `lint` need no runner
    from session_resume.core.resume_decision import Options, decide

    # lazy: `conformance list` and `lint` need no runner
    from session_resume.core.workflow import load_workflow, state_workflow_spec

    # lazy: `conformance list` and `lint` need no runner
    from session_resume.storage.snapshot import take

    a = case["arguments"]
    snap = take(case["dir"], root=case["root"])
    # The runner says whether the lease's owner process lives: never probe the real machine.
    snap = records.replace(snap, owner_alive=a["owner_alive"])
    spec = a["workflow"] or state_workflow_spec((snap.document or {}).get("workflow"))
    wf = load_workflow(spec)
    opts = Options(session=a["session"], stale_seconds=a["stale_seconds"], takeover=a["takeover"])
    return {"decision": decide(snap, a["step"], _now(case["now"]), wf, opts)}


OPS = {"validate": op_validate, "migrate": op_migrate, "recover": op_recover, "resume": op_resume}


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
            "operations": list(OPERATIONS),
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
