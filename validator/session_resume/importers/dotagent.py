"""dotagent "checkpoint" skill (``memory/state/phase.json`` + ``execution.json``) → a v3.0
session under the ``dotagent`` workflow.

:func:`map_dotagent` is pure: the parsed checkpoint files and the facts about the outputs
they name (exists, modification time, parses) in, an :class:`ImportPlan` out.
:func:`read_source` gathers those facts and changes nothing in the memory directory.

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

import copy
import json
import os
import posixpath
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.core.jsonread import parse_json_bytes
from session_resume.core.timeutil import format_ts
from session_resume.importers.common import (
    ImportEvent,
    ImportPlan,
    ImportRefused,
    Timestamps,
    current_step_of,
    derive_session_id,
    latest,
    old_source_note,
    repo_path,
    under,
)
from session_resume.storage.fileio import read_limited

SOURCE = "dotagent"
PHASES = ("REQUIREMENTS", "ARCHITECTURE", "IMPLEMENTATION", "VERIFICATION", "REFLECTION")
PHASE_STATUSES = ("pending", "in_progress", "complete", "failed")
RUNNING = ("running", "in_progress")
TASK_DONE = ("pre_complete", "verified", "complete", "completed", "done")
PHASE_FILE = "state/phase.json"
EXECUTION_FILE = "state/execution.json"
ARCHIVE_DIR = "state/.archive"
DEMAND = "reports/demand.json"
FINAL_DESIGN = "reports/final_design.json"
DESIGNS = "reports/designs"
VERIFICATION = ("reports/verification.json", "verification.json")
REFLECTIONS = "reflections"
MEMORY = "memory"


@dataclass(frozen=True)
class FileFacts:
    """What is known about a file the checkpoint names (read by :func:`read_source`)."""

    mtime: float | None = None  # None: missing
    json_ok: bool = False
    value: Any = None  # the parsed JSON of task outputs


@dataclass(frozen=True)
class ArchiveEntry:
    name: str
    workflow_id: str | None
    last_updated: str | None
    files: tuple[str, ...]


@dataclass
class DotagentSource:
    """The parsed checkpoint. Paths in ``facts``, ``designs`` and ``reflections`` are relative
    to the memory directory; ``repo_prefix`` is the memory directory's repository-relative
    path (None when it is outside the repository)."""

    dir: str
    phase: dict[str, Any]
    execution: dict[str, Any] | None = None
    facts: dict[str, FileFacts] = field(default_factory=dict)
    designs: list[str] = field(default_factory=list)
    reflections: list[str] = field(default_factory=list)
    archives: list[ArchiveEntry] = field(default_factory=list)
    temp_files: list[str] = field(default_factory=list)
    repo_prefix: str | None = ""
    from_archive: str | None = None

    @property
    def state_dir(self) -> str:
        return f"{ARCHIVE_DIR}/{self.from_archive}" if self.from_archive else "state"

    def resolve(self, rel: str | None) -> str | None:
        """An archived workflow's own state files are in its archive folder."""
        if self.from_archive and rel in ("state/execution.json", "state/phase.json"):
            return f"{self.state_dir}/{posixpath.basename(rel)}"
        return rel

    def fact(self, rel: str | None) -> FileFacts:
        return self.facts.get(self.resolve(rel) or "", FileFacts())


def memory_relative(path: Any, memory_dir: str) -> str | None:
    """A path as the checkpoint writes it (``memory/reports/demand.json``, from the project
    root) relative to the memory directory; None when it points elsewhere."""
    if not isinstance(path, str) or not path.strip() or "\0" in path:
        return None
    p = path.strip().replace("\\", "/")
    if p.startswith("/"):
        rel = under(p, memory_dir)
        return rel if rel not in (None, ".") else None
    norm = posixpath.normpath(p)
    head, _, rest = norm.partition("/")
    if head in (MEMORY, posixpath.basename(memory_dir)) and rest:
        norm = rest
    if norm in (".", "") or norm == ".." or norm.startswith("../"):
        return None
    return norm


def task_output(task: dict[str, Any], memory_dir: str) -> str | None:
    for k in ("output_path", "output", "output_file"):
        rel = memory_relative(task.get(k), memory_dir)
        if rel is not None:
            return rel
    ident = task.get("id")
    if isinstance(ident, str) and re.match(r"^[A-Za-z0-9._-]+$", ident):
        return f"tasks/{ident}/output.json"
    return None


# --- pure mapping ----------------------------------------------------------------------------


def map_dotagent(
    src: DotagentSource,
    *,
    now: datetime,
    project: str,
    template_steps: dict[str, Any],
) -> ImportPlan:
    """The v3.0 session a dotagent checkpoint becomes (pure). ``template_steps``: the
    ``dotagent`` workflow's steps, all pending (``Workflow.template_state``)."""
    f_phase = posixpath.join(src.dir, src.state_dir, "phase.json")
    f_exec = posixpath.join(src.dir, src.state_dir, "execution.json")
    notes: list[Diagnostic] = []
    clock = Timestamps(now)
    now_ts = format_ts(now)
    ph = src.phase
    wid = ph.get("workflow_id")
    workflow_id = wid if isinstance(wid, str) and wid else None
    current = ph.get("current_phase")
    if current not in PHASES:
        raise ImportRefused(
            [
                diag(
                    "SR801",
                    f"current_phase is {current!r}, not one of {', '.join(PHASES)}",
                    file=f_phase,
                    pointer="/current_phase",
                )
            ]
        )
    status = ph.get("phase_status")
    if status not in PHASE_STATUSES:
        notes.append(
            diag(
                "SR808",
                f"phase_status is {status!r}, not pending/in_progress/complete/failed; the "
                "phase is taken as interrupted (in_progress)",
                file=f_phase,
                pointer="/phase_status",
            )
        )
        status = "in_progress"
    started_at = clock.ts(ph.get("started_at"), f_phase, where="started_at")
    last_updated = clock.ts(ph.get("last_updated"), f_phase, where="last_updated")
    sid = derive_session_id("da", workflow_id or "", str(ph.get("started_at") or ""))
    if ph.get("interruption_safe") is not True:
        notes.append(
            diag(
                "SR815",
                "interruption_safe is "
                + json.dumps(ph.get("interruption_safe"))
                + ": the last checkpoint write did not finish (the skill's validation fails "
                "and asks whether to start fresh); the state was imported as it is",
                file=f_phase,
                pointer="/interruption_safe",
            )
        )
    if src.temp_files:
        notes.append(
            diag(
                "SR806",
                "ignored temp file(s) of an interrupted checkpoint write: "
                + ", ".join(sorted(src.temp_files)),
                file=posixpath.join(src.dir, src.state_dir),
            )
        )
    if src.archives:
        notes.append(
            diag(
                "SR821",
                f"{len(src.archives)} archived workflow(s) under {ARCHIVE_DIR}/: "
                + ", ".join(a.name for a in src.archives)
                + " (import one with --archive NAME)",
                file=posixpath.join(src.dir, ARCHIVE_DIR),
            )
        )

    steps = copy.deepcopy(template_steps)
    key_of = {p: str(i + 1) for i, p in enumerate(PHASES)}
    legacy_paths: list[dict[str, Any]] = []

    def artifact(rel: str | None, why: str) -> str | None:
        if rel is None:
            return None
        repo = repo_path(src.repo_prefix, rel)
        if repo is None:
            legacy_paths.append({"path": rel, "why": why, "code": "SR812"})
            notes.append(
                diag(
                    "SR812",
                    f"{rel} ({why}) is outside the repository; it is kept under x-legacy",
                    file=f_phase,
                )
            )
        return repo

    # --- completed phases --------------------------------------------------------------------
    completed: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    raw_done = ph.get("completed_phases")
    for i, entry in enumerate(raw_done if isinstance(raw_done, list) else []):
        if not isinstance(entry, dict) or entry.get("phase") not in PHASES:
            notes.append(
                diag(
                    "SR817",
                    f"completed_phases[{i}] is not a {{phase, completed_at, output}} entry of "
                    "a known phase; ignored (kept under x-legacy)",
                    file=f_phase,
                    pointer=f"/completed_phases/{i}",
                )
            )
            continue
        order.append(entry["phase"])
        completed[entry["phase"]] = entry
    expected = list(PHASES[: len(order)])
    if order != expected:
        notes.append(
            diag(
                "SR817",
                "completed_phases is "
                + (", ".join(order) or "empty")
                + f", not the canonical order {', '.join(expected)} without gaps or repeats",
                file=f_phase,
                pointer="/completed_phases",
            )
        )
    done_keys = [i for i, p in enumerate(PHASES) if p in completed]
    nxt = PHASES[max(done_keys) + 1] if done_keys and max(done_keys) + 1 < len(PHASES) else None
    if current in completed and status == "in_progress":
        notes.append(
            diag(
                "SR817",
                f"{current} is in completed_phases and also the phase in progress; it is taken "
                "as being run again",
                file=f_phase,
                pointer="/current_phase",
            )
        )
    elif done_keys and current not in completed and nxt is not None and current != nxt:
        notes.append(
            diag(
                "SR817",
                f"current_phase is {current} but the phase after the last completed one is {nxt}",
                file=f_phase,
                pointer="/current_phase",
            )
        )

    events: list[ImportEvent] = []
    base = {"source": SOURCE, "synthesized": True}
    if started_at:
        events.append(
            ImportEvent(
                "session_start", started_at, sid, detail={**base, "workflow_id": workflow_id}
            )
        )
    for p, entry in completed.items():
        if p == current and status == "in_progress":
            continue
        key = key_of[p]
        st = steps[key]
        done_at = clock.ts(entry.get("completed_at"), f_phase, where=f"{p} completed_at")
        st.update(status="complete", completed=done_at or last_updated or now_ts, sub_step=None)
        out_rel = src.resolve(memory_relative(entry.get("output"), src.dir))
        if entry.get("output") is not None and out_rel is None:
            legacy_paths.append({"path": entry.get("output"), "why": f"{p} output"})
        repo = artifact(out_rel, f"{p} output")
        if repo is not None:
            st["artifacts"].append(repo)
        if out_rel is not None and src.fact(out_rel).mtime is None:
            notes.append(
                diag(
                    "SR816",
                    f"{p} is complete but its output {entry.get('output')} does not exist "
                    "(the skill's 'artifacts exist' check fails)",
                    file=f_phase,
                    pointer="/completed_phases",
                )
            )
        events.append(
            ImportEvent(
                "step_complete",
                st["completed"],
                sid,
                step=key,
                detail={**base, "phase": p, "output": entry.get("output")},
            )
        )

    # --- the phase in progress -----------------------------------------------------------------
    reconciled: list[dict[str, Any]] = []
    files: dict[str, bytes] = {}
    findings: list[str] = []
    running = status in ("in_progress", "failed")
    ckey = key_of[current]
    execution = src.execution
    new_exec = None
    if execution is not None:
        new_exec, reconciled = _reconcile(src, execution, now_ts, f_exec, notes)
        files[EXECUTION_FILE] = (
            json.dumps(new_exec, ensure_ascii=False, separators=(",", ":")) + "\n"
        ).encode("utf-8")
    if running:
        st = steps[ckey]
        prev_done = [
            steps[key_of[p]]["completed"]
            for p in PHASES[: PHASES.index(current)]
            if steps[key_of[p]]["status"] == "complete"
        ]
        began = latest(*prev_done, started_at) or last_updated or now_ts
        st.update(status="in_progress", started=began, completed=None, attempts=1)
        events.append(
            ImportEvent("step_start", began, sid, step=ckey, detail={**base, "estimated": True})
        )
        if status == "failed":
            findings.append(f"dotagent phase {current} failed")
            notes.append(
                diag(
                    "SR818",
                    f"phase {current} failed; the skill would not resume it (it starts "
                    "fresh). Step "
                    f"{ckey} is in progress with no checkpoint (run the phase again) and a "
                    "finding is open",
                    file=f_phase,
                    pointer="/phase_status",
                )
            )
        else:
            sub, evidence, arts = _resume_point(src, current, new_exec, f_phase, notes)
            for rel in arts:
                repo = artifact(rel, f"{current} output")
                if repo is not None and repo not in st["artifacts"]:
                    st["artifacts"].append(repo)
            if sub is not None:
                st["sub_step"] = sub
                when = src.fact(evidence).mtime
                cp_ts = _mtime_ts(when, now_ts) if when is not None else began
                cp_ts = max(cp_ts, began)
                events.append(
                    ImportEvent(
                        "checkpoint",
                        cp_ts,
                        sid,
                        step=ckey,
                        sub_step=sub,
                        detail={**base, "evidence": evidence},
                    )
                )

    # --- approvals → decision log --------------------------------------------------------------
    log: list[dict[str, Any]] = []
    approvals = ph.get("user_checkpoints")
    for entry in approvals if isinstance(approvals, list) else []:
        if not isinstance(entry, dict) or entry.get("phase") not in PHASES:
            continue
        when_ts = clock.ts(entry.get("approved_at"), f_phase, where="approved_at")
        rec: dict[str, Any] = {
            "id": f"D{len(log) + 1:03d}",
            "title": f"{entry['phase']} approval",
            "choice": "approved",
            "rationale": "the user approved the phase gate (dotagent user_checkpoints)",
            "step": key_of[entry["phase"]],
            "agent": "user",
        }
        if when_ts:
            rec["timestamp"] = when_ts
        log.append(rec)
    log.sort(key=lambda r: r.get("timestamp") or "")
    for i, rec in enumerate(log):
        rec["id"] = f"D{i + 1:03d}"
        events.append(
            ImportEvent(
                "decision",
                rec.get("timestamp") or last_updated or now_ts,
                sid,
                step=rec["step"],
                detail={**base, "decision": rec["id"], "title": rec["title"]},
            )
        )

    # The last activity the checkpoint itself declares (file times are not trusted for it:
    # a copied or restored memory directory has fresh ones).
    declared = [e.ts for e in events if not (e.detail or {}).get("evidence")]
    last_activity = latest(last_updated, started_at, *declared) or now_ts
    lease = None
    if running:
        lease = {
            "v": 1,
            "session": sid,
            "owner": SOURCE,
            "pid": None,
            "host": "",
            "started": started_at or last_activity,
            "heartbeat": last_activity,
        }
    else:
        events.append(
            ImportEvent(
                "session_end",
                last_activity,
                sid,
                detail={**base, "phase_status": status, "current_phase": current},
            )
        )
    events.sort(key=lambda e: e.ts)
    for r in reconciled:
        events.append(
            ImportEvent(
                "note",
                now_ts,
                sid,
                step=key_of["IMPLEMENTATION"],
                detail={"source": SOURCE, "reconciled_task": r},
            )
        )
    notes += old_source_note(latest(started_at, last_updated), now, f_phase)

    x_import: dict[str, Any] = {
        "source": SOURCE,
        "source_dir": src.dir,
        "imported": now_ts,
        "session": sid,
        "workflow_id": workflow_id,
        "current_phase": current,
        "phase_status": ph.get("phase_status"),
        "interruption_safe": ph.get("interruption_safe"),
        "from_archive": src.from_archive,
        "archives": [a.name for a in src.archives],
        "execution": EXECUTION_FILE if execution is not None else None,
        "reconciled_tasks": reconciled,
        "last_activity": last_activity,
    }
    legacy: dict[str, Any] = {"phase": ph}
    if legacy_paths:
        legacy["paths"] = legacy_paths
    doc: dict[str, Any] = {
        "schema_version": "3.0",
        "project": project,
        "workflow": "dotagent",
        "revision": 0,
        "updated": now_ts,
        "current_step": current_step_of(steps),
        "decisions": {},
        "open_findings": findings,
        "steps": steps,
        "x-import": x_import,
        "x-legacy": {SOURCE: legacy},
    }
    if log:
        doc["decision_log"] = log
    notes = clock.notes() + notes
    detail = {
        "source": SOURCE,
        "source_dir": src.dir,
        "workflow_id": workflow_id,
        "current_phase": current,
        "phase_status": ph.get("phase_status"),
        "interruption_safe": ph.get("interruption_safe"),
        "from_archive": src.from_archive,
        "events": len(events),
        "reconciled_tasks": reconciled,
        "codes": sorted({d.code for d in notes}),
    }
    return ImportPlan(
        source=SOURCE,
        workflow="dotagent",
        document=doc,
        session=sid,
        imported_detail=detail,
        events=events,
        lease=lease,
        files=files,
        diagnostics=notes,
    )


def _reconcile(
    src: DotagentSource,
    execution: dict[str, Any],
    now_ts: str,
    file: str,
    notes: list[Diagnostic],
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The executor's recovery checks (scenarios 1 and 2) on a copy of execution.json."""
    new = copy.deepcopy(execution)
    changes: list[dict[str, Any]] = []
    tasks = new.get("tasks")
    for i, task in enumerate(tasks if isinstance(tasks, list) else []):
        if not isinstance(task, dict):
            continue
        ident = task.get("id", f"#{i}")
        out = task_output(task, src.dir)
        facts = src.fact(out)
        status = task.get("status")
        if status in RUNNING:
            value = facts.value if facts.json_ok else None
            reported = value.get("status") if isinstance(value, dict) else None
            if facts.mtime is not None and isinstance(reported, str) and reported:
                task["status"] = reported
                if reported in TASK_DONE and not task.get("completed_at") and facts.mtime:
                    task["completed_at"] = _mtime_ts(facts.mtime, now_ts)
                changes.append(
                    {"task": ident, "scenario": 2, "from": status, "to": reported, "output": out}
                )
                notes.append(
                    diag(
                        "SR820",
                        f"task {ident} was {status} but its output {out} exists and reports "
                        f"{reported!r}: the task is {reported!r} now (the skill's recovery "
                        "scenario 2)",
                        file=file,
                        pointer=f"/tasks/{i}/status",
                    )
                )
                continue
            prev = task.get("attempts")
            attempts = (prev if isinstance(prev, int) and not isinstance(prev, bool) else 0) + 1
            task.update(status="pending", attempts=attempts)
            why = (
                "no output"
                if facts.mtime is None
                else "an output that is not a readable result (a write cut short)"
            )
            changes.append(
                {
                    "task": ident,
                    "scenario": 1,
                    "from": status,
                    "to": "pending",
                    "attempts": attempts,
                    "output": out,
                }
            )
            notes.append(
                diag(
                    "SR819",
                    f"task {ident} was {status} with {why}: it is pending again, attempt "
                    f"{attempts} (the skill's recovery scenario 1)"
                    + ("; that is over the retry limit of 3" if attempts > 3 else ""),
                    file=file,
                    pointer=f"/tasks/{i}",
                )
            )
        elif status in TASK_DONE and facts.mtime is None:
            notes.append(
                diag(
                    "SR816",
                    f"task {ident} is {status} but its output {out} does not exist",
                    file=file,
                    pointer=f"/tasks/{i}",
                )
            )
    return new, changes


def _mtime_ts(mtime: float, cap: str) -> str:
    return min(format_ts(datetime.fromtimestamp(mtime, UTC)), cap)


def _resume_point(
    src: DotagentSource,
    phase: str,
    execution: dict[str, Any] | None,
    file: str,
    notes: list[Diagnostic],
) -> tuple[str | None, str | None, list[str]]:
    """(checkpoint, the file proving it, the phase's outputs so far): the skill's "Determine
    Resume Point" table."""
    if phase == "REQUIREMENTS":
        f = src.fact(DEMAND)
        if f.mtime is not None and f.json_ok:
            return "demand_written", DEMAND, [DEMAND]
        if f.mtime is not None:
            notes.append(
                diag(
                    "SR816",
                    f"{DEMAND} exists but is not valid JSON: the PM runs again",
                    file=file,
                )
            )
        return None, None, []
    if phase == "ARCHITECTURE":
        designs = [d for d in src.designs if src.fact(d).mtime is not None]
        final = src.fact(FINAL_DESIGN)
        if final.mtime is not None and final.json_ok:
            return "final_design_written", FINAL_DESIGN, [*designs, FINAL_DESIGN]
        if designs:
            newest = max(designs, key=lambda d: src.fact(d).mtime or 0)
            return "designs_written", newest, designs
        return None, None, []
    if phase == "IMPLEMENTATION":
        if execution is None:
            return None, None, []
        tasks = [t for t in execution.get("tasks") or [] if isinstance(t, dict)]
        outputs = [
            o
            for o in (task_output(t, src.dir) for t in tasks)
            if o is not None and src.fact(o).mtime is not None
        ]
        if (
            tasks
            and all(t.get("status") in TASK_DONE for t in tasks)
            and len(outputs) == len(tasks)
        ):
            newest = max(outputs, key=lambda o: src.fact(o).mtime or 0)
            return "tasks_complete", newest, outputs
        return "execution_planned", EXECUTION_FILE, outputs
    if phase == "VERIFICATION":
        for rel in VERIFICATION:
            if src.fact(rel).mtime is not None:
                return "verification_written", rel, [rel]
        return None, None, []
    refl = [r for r in src.reflections if src.fact(r).mtime is not None]
    if refl:
        return "reflection_written", max(refl, key=lambda r: src.fact(r).mtime or 0), refl
    return None, None, []


# --- reading the memory directory (I/O) ----------------------------------------------------------


def _load_json(path: Path, what: str, *, required: bool) -> Any:
    if not os.path.lexists(path):
        if not required:
            return None
        raise ImportRefused([diag("SR800", f"no {what} here", file=str(path))], exit_code=2)
    res = read_limited(path)
    if res.data is None:
        raise ImportRefused(
            [
                diag("SR801", f"cannot read {what}: {d.message}", file=str(path))
                for d in res.diagnostics
            ]
        )
    parsed = parse_json_bytes(res.data, file=str(path))
    if parsed.corrupt or not isinstance(parsed.value, dict):
        raise ImportRefused(
            [
                diag(
                    "SR801",
                    f"{what} is not a readable JSON object"
                    + "".join(f" ({d.code}: {d.message})" for d in parsed.diagnostics[:1])
                    + "; the skill would call the state corrupted",
                    file=str(path),
                )
            ]
        )
    return parsed.value


def _facts(path: Path, *, keep_value: bool) -> FileFacts:
    try:
        st = os.stat(path)
    except OSError:
        return FileFacts()
    if not path.is_file():
        return FileFacts(st.st_mtime)
    res = read_limited(path)
    if res.data is None:
        return FileFacts(st.st_mtime)
    parsed = parse_json_bytes(res.data, require_object=False)
    ok = not parsed.corrupt and parsed.value is not None
    return FileFacts(st.st_mtime, ok, parsed.value if ok and keep_value else None)


def _json_files(d: Path) -> list[Path]:
    try:
        return sorted(p for p in d.iterdir() if p.suffix == ".json" and p.is_file())
    except OSError:
        return []


def list_archives(memory_dir: Path) -> list[ArchiveEntry]:
    base = memory_dir / ARCHIVE_DIR
    out = []
    try:
        entries = sorted(p for p in base.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return []
    for p in entries:
        wid = None
        updated = None
        try:
            ph = _load_json(p / "phase.json", "phase.json", required=False)
        except ImportRefused:
            ph = None
        if isinstance(ph, dict):
            wid = ph.get("workflow_id") if isinstance(ph.get("workflow_id"), str) else None
            lu = ph.get("last_updated")
            updated = lu if isinstance(lu, str) else None
        out.append(
            ArchiveEntry(
                p.name, wid, updated, tuple(sorted(x.name for x in p.iterdir() if x.is_file()))
            )
        )
    return out


def read_source(
    memory_dir: str | os.PathLike[str],
    *,
    repo_root: Path,
    archive: str | None = None,
) -> DotagentSource:
    """Read ``memory/`` (or one archived workflow with ``archive``: a folder name under
    ``state/.archive/``, or ``latest``). Nothing in it is written, renamed or locked."""
    d = Path(os.path.abspath(memory_dir))
    if not d.is_dir():
        raise ImportRefused([diag("SR800", "no such directory", file=str(d))], exit_code=2)
    if (d / "memory" / "state").is_dir() and not (d / "state").is_dir():
        d = d / "memory"  # the project directory was given
    archives = list_archives(d)
    chosen = None
    if archive is not None:
        names = [a.name for a in archives]
        if archive == "latest" and archives:
            chosen = max(archives, key=lambda a: (a.last_updated or "", a.name)).name
        elif archive in names:
            chosen = archive
        else:
            raise ImportRefused(
                [
                    diag(
                        "SR800",
                        f"no archived workflow {archive!r} under {ARCHIVE_DIR}/ (found: "
                        + (", ".join(names) or "none")
                        + ")",
                        file=str(d / ARCHIVE_DIR),
                    )
                ],
                exit_code=2,
            )
    state_dir = d / (f"{ARCHIVE_DIR}/{chosen}" if chosen else "state")
    if not (state_dir / "phase.json").exists():
        hint = ""
        if (state_dir / "phase.json.tmp").exists():
            hint = (
                "; phase.json.tmp exists: a checkpoint write was cut short before its rename, "
                "inspect it by hand"
            )
        elif archives:
            hint = (
                "; the workflow was archived: import one with --archive NAME ("
                + ", ".join(a.name for a in archives)
                + ")"
            )
        raise ImportRefused(
            [
                diag(
                    "SR800",
                    "no phase.json: this is not a dotagent memory directory with a workflow" + hint,
                    file=str(state_dir / "phase.json"),
                )
            ],
            exit_code=2,
        )
    phase = _load_json(state_dir / "phase.json", "phase.json", required=True)
    execution = _load_json(state_dir / "execution.json", "execution.json", required=False)
    mem = d.as_posix()
    wanted: set[str] = {DEMAND, FINAL_DESIGN, *VERIFICATION}
    for entry in phase.get("completed_phases") or []:
        if isinstance(entry, dict):
            rel = memory_relative(entry.get("output"), mem)
            if rel is not None:
                wanted.add(rel)
                if chosen and rel in ("state/execution.json", "state/phase.json"):
                    wanted.add(f"{ARCHIVE_DIR}/{chosen}/{posixpath.basename(rel)}")
    outputs: set[str] = set()
    for t in (execution or {}).get("tasks") or []:
        if isinstance(t, dict):
            rel = task_output(t, mem)
            if rel is not None:
                outputs.add(rel)
    designs = [f"{DESIGNS}/{p.name}" for p in _json_files(d / DESIGNS)]
    reflections = [f"{REFLECTIONS}/{p.name}" for p in _json_files(d / REFLECTIONS)]
    facts = {
        rel: _facts(d / rel, keep_value=False) for rel in wanted | set(designs) | set(reflections)
    }
    facts.update({rel: _facts(d / rel, keep_value=True) for rel in outputs})
    exec_rel = f"{ARCHIVE_DIR}/{chosen}/execution.json" if chosen else EXECUTION_FILE
    facts[exec_rel] = _facts(d / exec_rel, keep_value=False)
    try:
        prefix: str | None = d.relative_to(Path(os.path.abspath(repo_root))).as_posix()
        prefix = "" if prefix == "." else prefix
    except ValueError:
        prefix = None
    temps = sorted(
        f"{state_dir.relative_to(d).as_posix()}/{p.name}"
        for p in state_dir.iterdir()
        if p.name.endswith(".tmp")
    )
    return DotagentSource(
        dir=mem,
        phase=phase,
        execution=execution,
        facts=facts,
        designs=designs,
        reflections=reflections,
        archives=archives,
        temp_files=temps,
        repo_prefix=prefix,
        from_archive=chosen,
    )
