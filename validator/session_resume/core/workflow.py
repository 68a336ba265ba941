"""Workflow definitions: ordered steps, checkpoints, context budgets, decision keys, fields.

``load_workflow`` reads a built-in by name or a YAML file by path, validates it against
``schema/workflow/1.json`` and returns a typed :class:`Workflow`.
"""

from __future__ import annotations

import functools
import json
import os
import zlib
from collections.abc import Callable
from pathlib import Path

from session_resume.core.codes import diag
from session_resume.core.diagnostics import (
    Diagnostic,
    DiagnosticsError,
    pointer_join,
    pointer_split,
)
from session_resume.core.versions import CURRENT
from session_resume.records import field, record
from session_resume.resources import schema_dir

# lazy imports: a cached workflow needs no schema check

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The built-in workflows are the files in schema/workflows/: adding one is adding its YAML.
BUILTINS: tuple[str, ...] = tuple(
    sorted(
        n[: -len(".yaml")] for n in os.listdir(schema_dir() / "workflows") if n.endswith(".yaml")
    )
)
# The workflow of a session that names none and whose project configures none.
DEFAULT_WORKFLOW = "apex"
WORKFLOW_SCHEMA = "workflow/1.json"


class WorkflowError(DiagnosticsError):
    """A workflow could not be loaded; ``diagnostics`` say why."""


@record(frozen=True)
class Checkpoint:
    id: str
    after: str


@record(frozen=True)
class Deliverable:
    """A file a step writes (relative to the session directory) and the checkpoint whose
    work first writes it: from that checkpoint on it exists (docs/spec.md §10)."""

    file: str
    written_at: str


@record(frozen=True)
class Budget:
    max_startup_files: int
    startup_files: tuple[str, ...]
    notes: str = ""


@record(frozen=True)
class StepDef:
    key: str
    name: str
    agents: tuple[str, ...]
    optional: bool
    review_audited: bool
    gate: dict[str, Any] | None
    checkpoints: tuple[Checkpoint, ...]
    legacy_checkpoints: dict[str, str]
    budget: Budget | None
    review_checkpoint: str | None = None  # the audit is recorded just before it
    deliverables: tuple[Deliverable, ...] = ()

    @property
    def checkpoint_ids(self) -> list[str]:
        return [c.id for c in self.checkpoints]

    def deliverables_due(self, sub_step: str | None) -> list[Deliverable]:
        """The deliverables that exist once ``sub_step`` is recorded: those written at it or
        at an earlier checkpoint (none for a ``sub_step`` that is not a checkpoint)."""
        ids = self.checkpoint_ids
        if sub_step not in ids:
            return []
        reached = ids.index(sub_step)
        return [d for d in self.deliverables if ids.index(d.written_at) <= reached]

    @property
    def default_agent(self) -> str:
        """The step's agent when the workflow names one only, else empty."""
        return self.agents[0] if len(self.agents) == 1 else ""


def pending_step(name: str, agent: str = "") -> dict[str, Any]:
    """A step's record in a state before it starts (a template's, an importer's, or the first
    `start` of a step its state does not list)."""
    return {
        "name": name,
        "agent": agent,
        "status": "pending",
        "sub_step": None,
        "started": None,
        "completed": None,
        "artifacts": [],
        "context_files_used": [],
    }


@record(frozen=True)
class DecisionKey:
    key: str
    required: bool
    description: str
    enum: tuple[Any, ...] | None = None
    legacy_top_level: bool = False  # an old state's top-level key of this name moves here


@record(frozen=True)
class FieldDef:
    name: str
    required: bool
    description: str
    schema: dict[str, Any]
    mirrors_decision: str | None = None  # the decision key holding the same value


@record(frozen=True)
class HandoffValue:
    """A labelled value of the state shown in the handoff: the top-level field ``value``,
    else the decision key of that name; ``missing`` when it is empty."""

    label: str
    value: str
    missing: str = "—"


@record(frozen=True)
class Workflow:
    """A validated workflow definition."""

    id: str
    version: int
    title: str
    description: str
    session_dir: str
    free_steps: bool
    steps: tuple[StepDef, ...]
    decisions: tuple[DecisionKey, ...]
    fields: tuple[FieldDef, ...]
    adopts_unnamed_states: bool = False
    handoff_header: tuple[HandoffValue, ...] = ()
    handoff_facts: tuple[HandoffValue, ...] = ()
    source: str = ""
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def step(self, key: str) -> StepDef | None:
        for s in self.steps:
            if s.key == key:
                return s
        return None

    @property
    def step_keys(self) -> list[str]:
        return [s.key for s in self.steps]

    def state_fragment(self) -> dict[str, Any]:
        """JSON Schema for the workflow-specific parts of a state (fields and decisions)."""
        props: dict[str, Any] = {f.name: f.schema for f in self.fields}
        required = [f.name for f in self.fields if f.required]
        dprops: dict[str, Any] = {}
        for d in self.decisions:
            dprops[d.key] = {"enum": list(d.enum)} if d.enum is not None else {}
        drequired = [d.key for d in self.decisions if d.required]
        props["decisions"] = {"type": "object", "properties": dprops, "required": drequired}
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": props,
            "required": required,
        }

    @functools.cached_property
    def fragment_check(self) -> Callable[[Any], bool]:
        """The fast yes/no check of :meth:`state_fragment` (made once per workflow)."""
        # lazy: the schemas module only when a state is checked against a workflow
        from session_resume.core.schemas import fast_check

        return fast_check(self.state_fragment())

    def template_state(self, project: str, now: str) -> dict[str, Any]:
        """A fresh state of the current version for this workflow: every step pending."""
        steps: dict[str, Any] = {s.key: pending_step(s.name, s.default_agent) for s in self.steps}
        decisions = {d.key: "" for d in self.decisions if d.required}
        doc: dict[str, Any] = {
            "schema_version": CURRENT,
            "project": project,
            "workflow": self.id,
            "revision": 0,
            "updated": now,
            "current_step": 0,
            "decisions": decisions,
            "open_findings": [],
            "steps": steps,
        }
        return doc


def state_workflow_spec(own: object, configured: str | None = None) -> str:
    """Which workflow to load for a state whose ``workflow`` field is ``own``.

    The field comes from an untrusted file: it may name a built-in workflow, or the project's
    configured one by its id, and is never used as a path (else a state could make the tool
    read any file it names). Raises :class:`WorkflowError` (SR403) otherwise.
    """
    if own is None:
        return configured or DEFAULT_WORKFLOW
    if isinstance(own, str) and own in BUILTINS:
        return own
    if isinstance(own, str) and configured:
        try:
            if load_workflow(configured).id == own:
                return configured
        except WorkflowError:
            pass
    raise WorkflowError(
        [
            diag(
                "SR403",
                f"the state names workflow {str(own)[:80]!r}, which is "
                f"neither built in ({', '.join(BUILTINS)}) nor the project's "
                "configured workflow; a state's workflow field is never read "
                "as a path",
                pointer="/workflow",
            )
        ]
    )


def _builtin_path(name: str) -> Path:
    return schema_dir() / "workflows" / f"{name}.yaml"


def load_workflow(name_or_path: str | os.PathLike[str] = DEFAULT_WORKFLOW) -> Workflow:
    """Load a built-in workflow by name (one of :data:`BUILTINS`) or a YAML file.

    Raises :class:`WorkflowError` with coded diagnostics (SR400–SR403) when it cannot.
    """
    spec = os.fspath(name_or_path)
    if spec in BUILTINS:
        return _load_builtin(spec)
    path = Path(spec)
    if not path.is_file():
        raise WorkflowError(
            [
                diag(
                    "SR403",
                    f"no built-in workflow named {spec!r} and no file at that path "
                    f"(built-ins: {', '.join(BUILTINS)})",
                    file=spec,
                )
            ]
        )
    return _load_file(path)


@functools.cache
def _load_builtin(name: str) -> Workflow:
    # Read once a process, like the schemas (resources.load_schema): the package's own data
    # files change only with the package. A workflow file of a project is read every time.
    return _load_file(_builtin_path(name))


def _load_file(path: Path) -> Workflow:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise WorkflowError(
            [diag("SR403", f"cannot read workflow file: {exc.strerror}", file=str(path))]
        ) from None
    return _parse_cached(str(path), data)


@functools.lru_cache(maxsize=32)
def _parse_cached(file: str, data: bytes) -> Workflow:
    raw = _cache_get(data)
    if raw is None:
        raw = _parse_yaml_definition(file, data)
        _cache_put(data, raw)
        _warm_builtins(file)
    return _build(raw, file)


def _warm_builtins(file: str) -> None:
    """A built-in definition was just parsed, so the YAML parser is loaded: cache the other
    built-ins too, so that a later command looking a project up among every built-in's session
    directory (`--project` with no workflow named) does not load the parser again."""
    paths = [_builtin_path(name) for name in BUILTINS]
    if file not in {str(p) for p in paths}:
        return
    for path in paths:
        try:
            data = path.read_bytes()
            if str(path) != file and _cache_get(data) is None:
                _cache_put(data, _parse_yaml_definition(str(path), data))
        except (OSError, WorkflowError):
            continue


def _parse_yaml_definition(file: str, data: bytes) -> dict[str, Any]:
    from session_resume.core import schemas
    from session_resume.core.yamlsafe import load_yaml_text, yaml_position

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WorkflowError(
            [diag("SR400", f"invalid UTF-8 at byte {exc.start}", file=file)]
        ) from None
    res = load_yaml_text(text, file=file)
    if res.diagnostics:
        raise WorkflowError(res.diagnostics)
    raw = res.value
    if not isinstance(raw, dict):
        raise WorkflowError([diag("SR400", "a workflow definition is a mapping", file=file)])
    # Round-trip through JSON: rejects YAML-only types (dates, sets) before schema validation.
    try:
        raw = json.loads(json.dumps(raw))
        json.dumps(raw, ensure_ascii=False).encode("utf-8")  # no lone surrogate ("\ud800")
    except UnicodeEncodeError:
        raise WorkflowError(
            [diag("SR400", "a string holds a lone surrogate, which is not text", file=file)]
        ) from None
    except (TypeError, ValueError) as exc:
        raise WorkflowError(
            [diag("SR400", f"non-JSON value in workflow: {exc}", file=file)]
        ) from None
    if not schemas.is_valid(WORKFLOW_SCHEMA, raw):
        diags = []
        for d in schemas.explain(WORKFLOW_SCHEMA, raw, file=file, code_for=lambda *_: "SR400"):
            line, col = yaml_position(text, list(pointer_split(d.pointer)))
            diags.append(
                diag("SR400", d.message, file=file, pointer=d.pointer, line=line, column=col)
            )
        raise WorkflowError(diags)
    problems = _semantic_problems(raw, file)
    if problems:
        raise WorkflowError(problems)
    definition: dict[str, Any] = raw
    return definition


def session_dir_escapes(pattern: str) -> bool:
    """Whether a ``session_dir`` pattern could leave the repository: absolute (``/x``,
    ``C:x``, ``\\x``), or a ``..`` component (``../x-{project}``)."""
    parts = pattern.replace("\\", "/").split("/")
    return pattern.startswith(("/", "\\")) or ":" in pattern or ".." in parts


def _plain_relative(path: str) -> bool:
    """Whether ``path`` names a file inside a directory as written: relative, ``/``-separated,
    no empty, ``.`` or ``..`` component, no control character."""
    parts = path.split("/")
    return (
        "\\" not in path
        and ":" not in path
        and all(p not in ("", ".", "..") for p in parts)
        and all(ord(c) >= 32 and c != "\x7f" for c in path)
    )


def _semantic_problems(raw: dict[str, Any], file: str) -> list[Diagnostic]:
    out: list[Diagnostic] = []

    def problem(message: str, at: list[str | int]) -> None:
        out.append(diag("SR400", message, file=file, pointer=pointer_join(at)))

    seen: set[str] = set()
    files: set[str] = set()  # deliverables: one step writes each
    if session_dir_escapes(raw["session_dir"]):
        problem(
            "session_dir must be a relative path inside the repository (no leading `/`, "
            "no drive, no `..` component)",
            ["session_dir"],
        )
    for i, s in enumerate(raw.get("steps", [])):
        if s["key"] in seen:
            problem(f"step key {s['key']!r} is defined twice", ["steps", i, "key"])
        seen.add(s["key"])
        ids = [c["id"] for c in s.get("checkpoints", [])]
        for dup in sorted({x for x in ids if ids.count(x) > 1}):
            problem(
                f"checkpoint {dup!r} is defined twice in step {s['key']}",
                ["steps", i, "checkpoints"],
            )
        review_cp = s.get("review_checkpoint")
        if review_cp is not None and (review_cp not in ids or not s.get("review_audited")):
            problem(
                f"review_checkpoint {review_cp!r} of step {s['key']} is not a checkpoint "
                "of a review_audited step",
                ["steps", i, "review_checkpoint"],
            )
        for j, d in enumerate(s.get("deliverables") or []):
            at: list[str | int] = ["steps", i, "deliverables", j]
            if d["written_at"] not in ids:
                problem(
                    f"deliverable {d['file']!r} of step {s['key']} is written at "
                    f"{d['written_at']!r}, which is not a checkpoint of the step",
                    [*at, "written_at"],
                )
            if not _plain_relative(d["file"]):
                problem(
                    f"deliverable {d['file']!r} of step {s['key']} must be a plain path inside "
                    "the session directory (relative, `/`-separated, no `.` or `..` component)",
                    [*at, "file"],
                )
            elif d["file"] in files:
                problem(f"deliverable {d['file']!r} is listed twice", [*at, "file"])
            files.add(d["file"])
        for old, new in (s.get("legacy_checkpoints") or {}).items():
            if new not in ids:
                problem(
                    f"legacy checkpoint {old!r} maps to {new!r}, which is "
                    "not a checkpoint of the step",
                    ["steps", i, "legacy_checkpoints", old],
                )
    keys = {d.get("key") for d in raw.get("decisions", []) if isinstance(d, dict)}
    for i, s in enumerate(raw.get("steps", [])):
        gate = s.get("gate") if isinstance(s.get("gate"), dict) else {}
        for j, k in enumerate(gate.get("decisions") or []):
            if k not in keys:
                problem(
                    f"gate decision {k!r} of step {s['key']} is not a key of `decisions`",
                    ["steps", i, "gate", "decisions", j],
                )
    review = raw.get("review")
    if isinstance(review, dict):
        if review["tier_decision"] not in keys:
            problem(
                f"review.tier_decision {review['tier_decision']!r} is not a key of `decisions`",
                ["review", "tier_decision"],
            )
        if review["default_tier"] not in review["passes"]:
            problem(
                f"review.default_tier {review['default_tier']!r} is not a key of review.passes",
                ["review", "default_tier"],
            )
    return out


def _build(raw: dict[str, Any], file: str) -> Workflow:
    steps = []
    for s in raw["steps"]:
        b = s.get("budget")
        steps.append(
            StepDef(
                key=s["key"],
                name=s["name"],
                agents=tuple(s["agents"]),
                optional=bool(s.get("optional", False)),
                review_audited=bool(s.get("review_audited", False)),
                gate=s.get("gate"),
                checkpoints=tuple(
                    Checkpoint(c["id"], c["after"]) for c in s.get("checkpoints", [])
                ),
                legacy_checkpoints=dict(s.get("legacy_checkpoints") or {}),
                review_checkpoint=s.get("review_checkpoint"),
                deliverables=tuple(
                    Deliverable(d["file"], d["written_at"]) for d in s.get("deliverables") or []
                ),
                budget=Budget(
                    b["max_startup_files"], tuple(b.get("startup_files", [])), b.get("notes", "")
                )
                if b
                else None,
            )
        )
    return Workflow(
        id=raw["id"],
        version=raw["version"],
        title=raw["title"],
        description=raw["description"],
        session_dir=raw["session_dir"],
        free_steps=bool(raw["free_steps"]),
        steps=tuple(steps),
        decisions=tuple(
            DecisionKey(
                d["key"],
                bool(d.get("required", False)),
                d.get("description", ""),
                tuple(d["enum"]) if "enum" in d else None,
                bool(d.get("legacy_top_level", False)),
            )
            for d in raw["decisions"]
        ),
        fields=tuple(
            FieldDef(
                f["name"],
                bool(f.get("required", False)),
                f.get("description", ""),
                f.get("schema", {}),
                f.get("mirrors_decision"),
            )
            for f in raw["fields"]
        ),
        adopts_unnamed_states=bool(raw.get("adopts_unnamed_states", False)),
        handoff_header=_handoff_values(raw, "header"),
        handoff_facts=_handoff_values(raw, "facts"),
        source=file,
        raw=raw,
    )


def _handoff_values(raw: dict[str, Any], which: str) -> tuple[HandoffValue, ...]:
    items = (raw.get("handoff") or {}).get(which) or ()
    return tuple(HandoffValue(i["label"], i["value"], i.get("missing", "—")) for i in items)


# --- parse cache -------------------------------------------------------------------------
# A validated definition is cached as JSON so a cold `validate` does not pay for importing and
# running the YAML parser. The entry is named by a cheap checksum and holds the exact source
# and workflow-schema bytes it was made from; a hit must match both byte for byte, so a
# checksum collision or a changed schema can only cost a re-parse, never a wrong definition.


# Bump when the YAML loading rules change (yamlsafe.py): old entries then miss.
_CACHE_FORMAT = b"v4:yaml-1.2-core"  # v4: lone surrogates and deep nesting refused (issue 18)


def _cache_dir() -> Path | None:
    if os.environ.get("SESSION_RESUME_NO_CACHE"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "session-resume" / "workflows"


def _cache_ident(data: bytes) -> tuple[str, str]:
    schema_text = (schema_dir() / WORKFLOW_SCHEMA).read_bytes().decode("utf-8", "replace")
    blob = _CACHE_FORMAT + b"\0" + schema_text.encode() + b"\0" + data
    name = f"{zlib.crc32(blob):08x}{zlib.adler32(blob):08x}{len(blob):x}.json"
    return name, schema_text


def _cache_get(data: bytes) -> dict[str, Any] | None:
    d = _cache_dir()
    if d is None:
        return None
    try:
        name, schema_text = _cache_ident(data)
        with open(d / name, encoding="utf-8") as fh:
            entry = json.load(fh)
        if (
            isinstance(entry, dict)
            and entry.get("source") == data.decode("utf-8", "replace")
            and entry.get("schema") == schema_text
            and isinstance(entry.get("parsed"), dict)
        ):
            parsed: dict[str, Any] = entry["parsed"]
            return parsed
    except (OSError, ValueError):
        pass
    return None


def _cache_put(data: bytes, raw: dict[str, Any]) -> None:
    d = _cache_dir()
    if d is None:
        return
    try:
        d.mkdir(parents=True, exist_ok=True)
        name, schema_text = _cache_ident(data)
        target = d / name
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        entry = {"source": data.decode("utf-8", "replace"), "schema": schema_text, "parsed": raw}
        tmp.write_text(json.dumps(entry), encoding="utf-8")
        os.replace(tmp, target)
    except OSError:
        pass  # a cache that cannot be written only costs time
