"""Run the suite through one adapter process and judge every case.

For each selected case: skip it if the platform lacks a feature it needs or the adapter did not
declare its operation; otherwise build its workspace in a fresh temporary directory, send
``run``, wait at most ``timeout`` seconds (on a timeout the adapter is killed and restarted),
check the answer against the message schemas, compare the result and the files, then apply the
skip list (a listed case that fails is skipped; one that passes is a failure: a stale skip).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from session_resume.conformance import (
    ADAPTER_OPERATIONS,
    PROTOCOL_VERSION,
    RUNNER_STEPS,
    WRITE_OPERATIONS,
    WRITING_OPERATIONS,
)
from session_resume.conformance.adapterproc import AdapterError, AdapterProcess
from session_resume.conformance.cases import (
    Case,
    CaseError,
    Entry,
    Workspace,
    apply_runner_step,
    materialize,
    platform_supports,
    remove_tree,
    run_arguments,
    snapshot,
    step_message,
    step_now,
)
from session_resume.conformance.compare import clip, compare_result, compare_trees
from session_resume.core import schemas
from session_resume.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEFAULT_TIMEOUT = 10.0
STDERR_LINES = 20  # of an adapter's stderr, shown with an `errored` answer
START_TIMEOUT = 60.0


class RunnerError(Exception):
    """The run cannot happen (no cases, a bad skip list, an adapter that does not start)."""


@record
class CaseOutcome:
    case: Case
    outcome: str  # passed | failed | skipped
    failure: str | None = None  # mismatch | errored | timeout | died | protocol | stale_skip
    skip: str | None = None  # unsupported | skip_list | adapter | platform
    reason: str = ""
    diff: list[str] = field(default_factory=list)
    duration: float = 0.0


@record
class RunReport:
    adapter: str
    implementation: dict[str, Any]
    operations: list[str]
    outcomes: list[CaseOutcome] = field(default_factory=list)
    duration: float = 0.0

    def count(self, outcome: str) -> int:
        return sum(1 for o in self.outcomes if o.outcome == outcome)

    @property
    def passed(self) -> int:
        return self.count("passed")

    @property
    def failed(self) -> int:
        return self.count("failed")

    @property
    def skipped(self) -> int:
        return self.count("skipped")

    @property
    def total(self) -> int:
        return len(self.outcomes)

    @property
    def pass_rate(self) -> float:
        """passed / total: skipped cases (any kind) count against the rate, as in Bowtie."""
        return self.passed / self.total if self.total else 0.0

    @property
    def ok(self) -> bool:
        return self.failed == 0


def parse_skip_file(path: Path) -> dict[str, str]:
    """``<case-id> <reason>`` per line; ``#`` starts a comment line; the reason is required."""
    out: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RunnerError(f"cannot read the skip list {path}: {exc.strerror}") from None
    for n, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        case_id, _, reason = line.partition(" ")
        reason = reason.strip()
        if not reason:
            raise RunnerError(f"{path}:{n}: {case_id}: a skipped case needs a reason")
        if case_id in out:
            raise RunnerError(f"{path}:{n}: {case_id} is listed twice")
        out[case_id] = reason
    return out


def _schema_problems(rel: str, instance: Any) -> list[str]:
    if schemas.is_valid(rel, instance):
        return []
    # each message starts with its JSON pointer (schemas.explain): never print it twice
    return [d.message for d in schemas.explain(rel, instance)][:10]


class _Session:
    """The adapter process across restarts."""

    def __init__(self, argv: list[str], label: str, env: dict[str, str] | None = None) -> None:
        self.argv = argv
        self.env = env
        self.label = label
        self.proc: AdapterProcess | None = None
        self.info: dict[str, Any] = {}

    def ensure(self) -> AdapterProcess:
        if self.proc is not None and self.proc.proc.poll() is None:
            return self.proc
        if self.proc is not None:
            self.proc.kill()
        self.proc = AdapterProcess(self.argv, env=self.env)
        try:
            answer = self.proc.start(START_TIMEOUT)
        except AdapterError as exc:
            self.proc.kill()
            raise RunnerError(f"the adapter `{self.label}` did not answer start: {exc}") from None
        problems = _schema_problems("conformance/start-response.json", answer)
        if problems:
            self.proc.kill()
            raise RunnerError(
                f"the adapter's start response is not valid (schema/conformance/"
                f"start-response.json): {'; '.join(problems)}"
            )
        if answer["version"] != PROTOCOL_VERSION:
            self.proc.kill()
            raise RunnerError(
                f"the adapter speaks protocol version {answer['version']}; "
                f"this runner speaks {PROTOCOL_VERSION}"
            )
        self.info = answer
        return self.proc

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()
            self.proc = None


def _expected_tree(case: Case, ws: Workspace, before: dict[str, Entry]) -> dict[str, Entry]:
    if case.operation not in WRITING_OPERATIONS or case.expected.get("files") != "expected":
        return before
    prefix = ws.dir.relative_to(ws.base).as_posix() + "/"
    out = {k: v for k, v in before.items() if not k.startswith(prefix)}
    for rel, entry in snapshot(case.expected_dir).items():
        out[prefix + rel] = entry
    return out


def _check_result(case: Case, result: dict[str, Any], op: str | None = None) -> list[str]:
    op = op or case.operation
    if op in WRITE_OPERATIONS:
        problems = []
        if not isinstance(result.get("written"), bool):
            problems.append(f"a {op} result needs `written` (true or false)")
        if not isinstance(result.get("codes"), list):
            problems.append(f"a {op} result needs `codes`")
        return problems
    if op == "resume":
        decision = result.get("decision")
        if not isinstance(decision, dict):
            return ["a resume result needs `decision`"]
        return [f"decision {p}" for p in _schema_problems("decision/2.json", decision)]
    problems = []
    if not isinstance(result.get("codes"), list):
        problems.append(f"a {op} result needs `codes`")
    if op in WRITING_OPERATIONS:
        allowed = (
            ("current", "migrated", "refused")
            if op == "migrate"
            else ("none", "restored_backup", "recreated", "refused")
        )
        if result.get("status") not in allowed:
            problems.append(f"a {op} result needs `status` (one of {', '.join(allowed)})")
    return problems


def run_case(session: _Session, case: Case, seq: int, timeout: float, keep: bool) -> CaseOutcome:
    """Run one case; with ``keep`` its workspace stays (named in the outcome's diff)."""
    missing = [f for f in case.requires if not platform_supports(f)]
    if missing:
        return CaseOutcome(case, "skipped", skip="platform", reason=f"needs {', '.join(missing)}")
    declared = session.info.get("operations", [])
    needed = (
        sorted({str(s.get("op")) for s in case.steps} - set(RUNNER_STEPS))
        if case.operation == "sequence"
        else [case.operation]
    )
    unsupported = [op for op in needed if op not in declared]
    if unsupported:
        return CaseOutcome(
            case,
            "skipped",
            skip="unsupported",
            reason=f"operation {', '.join(unsupported)} not supported",
        )
    base = Path(tempfile.mkdtemp(prefix=f"sr-conformance-{case.id[:40]}-"))
    try:
        outcome = _judge(session, case, seq, timeout, base)
    finally:
        if not keep:
            remove_tree(base)
    if keep and outcome.outcome == "failed":
        outcome.diff.append(f"workspace kept: {base}")
    return outcome


def _judge(session: _Session, case: Case, seq: int, timeout: float, base: Path) -> CaseOutcome:
    try:
        ws = materialize(case, base)
    except (OSError, CaseError) as exc:  # e.g. links refused by the file system
        return CaseOutcome(
            case, "skipped", skip="platform", reason=f"cannot build the workspace: {exc}"
        )
    if case.operation == "sequence":
        return _judge_sequence(session, case, seq, timeout, ws)
    before = snapshot(base)
    message = {
        "cmd": "run",
        "seq": seq,
        "case": {
            "id": case.id,
            "operation": case.operation,
            "dir": str(ws.dir),
            "root": str(ws.root),
            "now": case.now,
            "arguments": run_arguments(case, ws),
        },
    }
    result, failed = _ask(session, case, message, timeout)
    if failed is not None:
        return failed
    assert result is not None
    problems = _check_result(case, result)
    if problems:
        return CaseOutcome(
            case, "failed", failure="protocol", reason="invalid result", diff=problems
        )
    diff = compare_result(case.operation, case.expected, result)
    prefix = ws.dir.relative_to(base).as_posix() + "/"
    byte_files = [prefix + n for n in case.expected.get("bytes", [])]
    free_text = {prefix + n: list(ps) for n, ps in (case.expected.get("free_text") or {}).items()}
    for line in compare_trees(
        _expected_tree(case, ws, before), snapshot(base), as_bytes=byte_files, free_text=free_text
    ):
        # name files by their path in the session directory; others from the workspace
        diff.append(line[len(prefix) :] if line.startswith(prefix) else line)
    if diff:
        return CaseOutcome(case, "failed", failure="mismatch", diff=clip(diff))
    return CaseOutcome(case, "passed")


def _ask(
    session: _Session, case: Case, message: dict[str, Any], timeout: float, label: str = ""
) -> tuple[dict[str, Any] | None, CaseOutcome | None]:
    """Send one run request; (the result, None) or (None, the outcome of a failed exchange:
    timeout, crash, protocol error, skipped or errored answer)."""
    seq = message["seq"]
    proc = session.ensure()
    stderr_mark = proc.stderr_size()
    try:
        answer = proc.request(message, timeout)
    except AdapterError as exc:
        session.kill()
        return None, CaseOutcome(case, "failed", failure=exc.kind, reason=label + str(exc))
    problems = _schema_problems("conformance/run-response.json", answer)
    if not problems and answer.get("seq") != seq:
        problems = [f"seq {answer.get('seq')} answers a request with seq {seq}"]
    if problems:
        session.kill()  # the stream may be out of step: start afresh
        return None, CaseOutcome(
            case,
            "failed",
            failure="protocol",
            reason=label + "invalid run response (schema/conformance/run-response.json)",
            diff=problems,
        )
    if "skipped" in answer:
        sk = answer["skipped"]
        reason = sk["message"] + (f" ({sk['issue_url']})" if sk.get("issue_url") else "")
        return None, CaseOutcome(case, "skipped", skip="adapter", reason=label + reason)
    if "errored" in answer:
        err = answer["errored"]
        detail = [line for line in str(err.get("traceback", "")).splitlines()[-15:] if line]
        stderr = proc.stderr_since(stderr_mark).splitlines()[-STDERR_LINES:]
        if stderr:
            detail += ["adapter stderr (tail):", *(f"  {line}" for line in stderr)]
        return None, CaseOutcome(
            case, "failed", failure="errored", reason=label + str(err["message"]), diff=detail
        )
    result: dict[str, Any] = answer["result"]
    return result, None


def _judge_sequence(
    session: _Session, case: Case, seq: int, timeout: float, ws: Workspace
) -> CaseOutcome:
    """Run a sequence's steps in order against one workspace (docs/conformance.md,
    "Sequence cases"); the first step that fails decides the outcome. After every step the workspace
    outside the session directory must be as built, the session directory as the step's
    ``files`` names (``expected/<name>/``), and unchanged by a read-only operation."""
    start = snapshot(ws.base)
    prefix = ws.dir.relative_to(ws.base).as_posix() + "/"
    outside = {k: v for k, v in start.items() if not k.startswith(prefix)}
    previous = start
    for index, step in enumerate(case.steps):
        op = str(step["op"])
        label = f"step {index + 1} ({op}): "
        if op in RUNNER_STEPS:
            try:
                apply_runner_step(step, ws, step_now(case, index))
            except OSError as exc:
                return CaseOutcome(case, "failed", failure="mismatch", reason=f"{label}{exc}")
            previous = snapshot(ws.base)
            continue
        message = {"cmd": "run", "seq": seq, "case": step_message(case, index, ws)}
        result, failed = _ask(session, case, message, timeout, label)
        if failed is not None:
            return failed
        assert result is not None
        problems = _check_result(case, result, op)
        if problems:
            return CaseOutcome(
                case, "failed", failure="protocol", reason=f"{label}invalid result", diff=problems
            )
        diff = compare_result(op, step.get("expected") or {}, result)
        after = snapshot(ws.base)
        if step.get("files"):
            want = dict(outside)
            for rel, entry in snapshot(case.expected_dir / str(step["files"])).items():
                want[prefix + rel] = entry
        elif op in ("validate", "resume"):
            want = previous  # read-only: nothing written
        else:
            want = {**outside, **{k: v for k, v in after.items() if k.startswith(prefix)}}
        for line in compare_trees(want, after):
            diff.append(line[len(prefix) :] if line.startswith(prefix) else line)
        if diff:
            return CaseOutcome(
                case,
                "failed",
                failure="mismatch",
                reason=f"{label.rstrip(': ')} differs",
                diff=clip(diff),
            )
        previous = after
    return CaseOutcome(case, "passed")


def run_suite(
    adapter_argv: list[str],
    cases: list[Case],
    *,
    adapter_label: str | None = None,
    skip: dict[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    keep_workspaces: bool = False,
    env: dict[str, str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RunReport:
    """Run ``cases`` through the adapter. Raises :class:`RunnerError` if it cannot start.

    ``env``: the adapter's whole environment (None: the caller's, unchanged).
    ``progress(done, total)`` is called after each case."""
    label = adapter_label or " ".join(adapter_argv)
    skip = skip or {}
    if not cases:
        raise RunnerError("no case selected")
    session = _Session(adapter_argv, label, env)
    t0 = time.monotonic()
    session.ensure()
    report = RunReport(
        adapter=label,
        implementation=dict(session.info.get("implementation", {})),
        operations=[op for op in ADAPTER_OPERATIONS if op in session.info.get("operations", [])],
    )
    try:
        for seq, case in enumerate(cases, start=1):
            started = time.monotonic()
            try:
                outcome = run_case(session, case, seq, timeout, keep_workspaces)
            except RunnerError as exc:  # the adapter could not be restarted
                outcome = CaseOutcome(case, "failed", failure="died", reason=str(exc))
            outcome.duration = round(time.monotonic() - started, 4)
            report.outcomes.append(_apply_skip_list(outcome, skip))
            if progress is not None:
                progress(seq, len(cases))
    finally:
        session.stop()
    report.duration = time.monotonic() - t0
    return report


def _apply_skip_list(o: CaseOutcome, skip: dict[str, str]) -> CaseOutcome:
    reason = skip.get(o.case.id)
    if reason is None:
        return o
    if o.outcome == "passed":
        return CaseOutcome(
            o.case,
            "failed",
            failure="stale_skip",
            reason=f"listed in the skip list ({reason}) but passes: remove it from the list",
            duration=o.duration,
        )
    if o.outcome == "failed":
        return CaseOutcome(
            o.case,
            "skipped",
            skip="skip_list",
            reason=f"{reason} [{o.failure}]",
            diff=o.diff,
            duration=o.duration,
        )
    return o
