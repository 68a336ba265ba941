"""The suite's self-lint: every case is well-formed, ids are stable and unique, and together
the cases cover every diagnostic code and every resume action.

Run by ``session-resume conformance lint``, ``nox -s conformance`` and tests/test_conformance.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from session_resume.conformance import WRITING_OPERATIONS
from session_resume.conformance.cases import CASE_FILE, Case, CaseError, case_dirs, load_case_file
from session_resume.conformance.compare import (
    pointer_parts,
    prose_in_decision,
    prose_strings,
    resolve_pointer,
)
from session_resume.conformance.runner import RunnerError, parse_skip_file
from session_resume.conformance.spec_lint import (
    LEASE_FILE,
    read_spec_sections,
    spec_fields,
    spec_problems,
)
from session_resume.core import schemas
from session_resume.core.codes import CATALOGUE
from session_resume.core.resume_decision import ACTIONS
from session_resume.core.schemas import _KEYWORD_CODES
from session_resume.core.timeutil import parse_ts
from session_resume.core.versions import REGISTRY
from session_resume.records import field, record
from session_resume.resources import load_schema

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CASE_SCHEMA = "conformance/case.json"
STATE_SCHEMAS = tuple(v.schema for v in REGISTRY)

# Codes that no conformance operation (validate, migrate, recover, resume) can produce, with
# the reason. The lint fails if one of them is covered after all (the entry is stale) or if a
# code is neither covered nor listed here.
NOT_PRODUCIBLE: dict[str, str] = {
    "SR203": "the state schemas' only enum is the step status (reported as SR309 instead) and "
    "their only const is schema_version, which the version gate decides first (SR140-SR142)",
    "SR160": "lock timeout: needs a second writer holding the lock while the case runs; "
    "timing, not file content (tests/test_store.py covers it)",
    "SR162": "revision conflict: store.save with an expected revision; write commands only",
    "SR209": "catch-all for schema keywords without their own code; no keyword of the state "
    "schemas needs it (the lint checks this stays true); also the one finding saying the "
    "schema check stopped after 1,000 errors, which no case is large enough to reach",
    "SR180": "invalid MCP tool arguments: `session-resume mcp` only (a front end's request)",
    "SR181": "the MCP extra is not installed: `session-resume mcp` only",
    "SR182": "an owner that is not text (a lone surrogate, a control character): the session "
    "and write commands' arguments, which conformance operations do not take",
    "SR183": "an owner pid out of range: `session start --pid` only, which conformance "
    "operations do not take",
    "SR184": "a .vscode/settings.json `setup vscode` will not rewrite: that command only "
    "(tests/test_vscode.py), which no conformance operation runs",
    "SR190": "a hook configuration file that cannot be merged: `hooks install` and `hooks "
    "uninstall` only (tests/test_hooks_install.py), which no conformance operation runs",
    "SR405": "project configuration (.session-resume.yaml, pyproject.toml) is read by the CLI; "
    "conformance operations take explicit arguments",
    "SR164": "a lease or worklog write failing (disk full, I/O error): the write and session "
    "commands only; tests/test_full_disk.py injects it",
    "SR165": "the directory fsync failing after the rename: an I/O error, not file content "
    "(tests/test_full_disk.py injects it)",
    "SR505": "worklog append failed after the state write: since issue 18 a worklog no write "
    "can append (a directory, FIFO, link out of the root) is refused by the path policy first "
    "(SR102/SR105); what is left is an I/O error or a link inside the session, which a case "
    "that changes files cannot set up (tests/test_full_disk.py, tests/fuzz/test_fuzz_recover.py)",
    "SR106": "a session file name that is not one plain component: the held directory's own "
    "API refuses it (storage/held.py); no operation takes a file name from its input "
    "(tests/test_held.py)",
    "SR107": "a hard-linked worklog or lock: a case's files cannot hold a hard link "
    "(tests/test_hostile_dirs.py plants one against a decoy)",
    "SR166": "a write whose result is over the read limit: the write commands (a decide of "
    "8 MiB); a case would need a state of nearly 8 MiB (tests/test_held.py)",
    "SR514": "no session lease: the session ping/end commands only",
    "SR515": "the lease write failing (disk full): the write and session commands only "
    "(tests/test_full_disk.py fills a tmpfs)",
    "SR717": "a step completed with its gate's required decisions empty: `complete` and "
    "`transition` only (tests/test_fresh_agent_scripted.py)",
    "SR185": "`--project NAME` held by two built-in workflows' session directories: the CLI's "
    "lookup across workflows; a sequence step names its project in the case's one workflow "
    "(tests/test_session_naming.py)",
    "SR900": "internal error: a bug in the tool, never an expected result",
}
# Whole groups of codes that belong to commands outside the four operations.
NOT_PRODUCIBLE_GROUPS: dict[str, str] = {
    "SR8": "importers and todo sync (`session-resume import …`, `todo sync`) convert other "
    "formats; they are not conformance operations",
}
ALLOWED_ENTRIES = {CASE_FILE, "files", "expected", "outside"}
_GROUP = re.compile(r"^[a-z0-9][a-z0-9-]*\Z")
PROSE_RULE = 'docs/conformance.md, "How results are compared"'  # where prose is defined


@record
class LintResult:
    problems: list[str] = field(default_factory=list)
    cases: list[Case] = field(default_factory=list)
    codes_covered: dict[str, int] = field(default_factory=dict)
    actions_covered: dict[str, int] = field(default_factory=dict)
    spec: Path | None = None  # the spec.md the cases' sections were checked against

    @property
    def ok(self) -> bool:
        return not self.problems

    def per_group(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.cases:
            out[c.group] = out.get(c.group, 0) + 1
        return out

    def per_operation(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.cases:
            out[c.operation] = out.get(c.operation, 0) + 1
        return out


def not_producible_reason(code: str) -> str | None:
    """Why no operation can produce ``code``, or None if a case must cover it."""
    if code in NOT_PRODUCIBLE:
        return NOT_PRODUCIBLE[code]
    for prefix, reason in NOT_PRODUCIBLE_GROUPS.items():
        if code.startswith(prefix):
            return reason
    return None


def _undefined_fields(case: Case, where: str, fields: dict[str, set[str]]) -> list[str]:
    """A sequence's expected lease or worklog holding a field the spec does not define."""
    out: list[str] = []
    for top in sorted(p for p in case.expected_dir.iterdir() if p.is_dir()):
        for name, known in fields.items():
            path = top / name
            if not path.is_file():
                continue
            data = path.read_bytes()
            lines = data.splitlines() if name.endswith(".jsonl") else [data]
            for number, line in enumerate(lines, 1):
                try:
                    doc = json.loads(line)
                except ValueError:
                    continue  # a torn record: compared byte for byte
                if not isinstance(doc, dict):
                    continue
                extra = sorted(set(doc) - known)
                if extra:
                    at = f" line {number}" if name.endswith(".jsonl") else ""
                    rule = "§7" if name == LEASE_FILE else "§6"
                    out.append(
                        f"{where}: expected/{top.name}/{name}{at} holds {', '.join(extra)}, "
                        f"which docs/spec.md {rule} does not define"
                    )
    return out


def _codes_of(e: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key in ("codes", "reasons", "warnings"):
        value = e.get(key)
        if isinstance(value, list):
            out += [str(v) for v in value]
    return out


def _expectations(case: Case) -> list[tuple[str, dict[str, Any]]]:
    """(the spec section deciding it, an expected answer) of the case, or of each step of a
    sequence (a step may cite its own section)."""
    if case.operation != "sequence":
        return [(case.spec, case.expected)]
    return [
        (str(s.get("spec") or case.spec), s["expected"])
        for s in case.steps
        if isinstance(s.get("expected"), dict)
    ]


def _expected_codes(case: Case) -> list[str]:
    return [c for _, e in _expectations(case) for c in _codes_of(e)]


def _schema_keywords(node: Any, out: set[str]) -> None:
    if isinstance(node, dict):
        for k, v in node.items():
            out.add(k)
            if k in ("properties", "patternProperties", "$defs"):
                if isinstance(v, dict):
                    for sub in v.values():
                        _schema_keywords(sub, out)
            elif k not in (
                "examples",
                "enum",
                "const",
                "default",
                "required",
                "defaultSnippets",
                "enumDescriptions",
                "markdownEnumDescriptions",
            ):
                _schema_keywords(v, out)
    elif isinstance(node, list):
        for v in node:
            _schema_keywords(v, out)


def _check_case(
    case: Case,
    sections: dict[str, set[str]] | None,
    fields: dict[str, set[str]] | None = None,
) -> list[str]:
    where = f"{case.group}/{case.path.name}"
    out: list[str] = []
    if not schemas.is_valid(CASE_SCHEMA, case.data):
        for d in schemas.explain(CASE_SCHEMA, case.data):
            out.append(f"{where}: case.yaml {d.message}")
        return out
    if case.id != case.path.name:
        out.append(f"{where}: id {case.id!r} differs from the directory name")
    if parse_ts(case.now) is None:
        out.append(f"{where}: now {case.now!r} is not a real instant")
    extra = sorted(p.name for p in case.path.iterdir() if p.name not in ALLOWED_ENTRIES)
    if extra:
        out.append(f"{where}: unexpected entries {extra} (allowed: {sorted(ALLOWED_ENTRIES)})")
    has_expected = case.expected_dir.is_dir()
    files_mode = case.expected.get("files")
    if case.operation == "sequence":
        out += _sequence_problems(case, where, sections)
        if fields is not None and case.expected_dir.is_dir():
            out += _undefined_fields(case, where, fields)
        return out
    if case.operation in WRITING_OPERATIONS:
        if files_mode == "expected" and not has_expected:
            out.append(f"{where}: expected.files is `expected` but there is no expected/ directory")
        if files_mode == "unchanged" and has_expected:
            out.append(f"{where}: expected.files is `unchanged`; remove expected/")
        if files_mode == "expected" and any(case.setup.get(k) for k in ("symlinks", "fifos")):
            out.append(f"{where}: links and FIFOs need expected.files: unchanged")
    elif has_expected:
        out.append(f"{where}: {case.operation} writes nothing; expected/ is not used")
    out += _file_options_problems(case, where, files_mode == "expected" and has_expected)
    out += _prose_problems(case, where, files_mode == "expected" and has_expected)
    for code in _expected_codes(case):
        if code not in CATALOGUE:
            out.append(f"{where}: {code} is not a code of the catalogue")
    if sections is not None:
        named = sections.get(case.spec.lstrip("§"))
        if named is None:
            out.append(
                f"{where}: spec {case.spec} names no numbered rule of docs/spec.md (a numbered "
                "section, or a numbered item of one: §9.2.6)"
            )
        else:
            unnamed = sorted(set(_expected_codes(case)) - named)
            if unnamed:
                out.append(
                    f"{where}: expects {', '.join(unnamed)}, which docs/spec.md {case.spec} "
                    "does not name (the cited section must state every rule the case checks)"
                )
    setup = case.setup
    if setup.get("symlinks") and "symlink" not in case.requires:
        out.append(f"{where}: setup.symlinks needs `requires: [symlink]`")
    if setup.get("fifos") and "fifo" not in case.requires:
        out.append(f"{where}: setup.fifos needs `requires: [fifo]`")
    wf_file = case.arguments.get("workflow_file")
    if (
        wf_file
        and "SR403" not in _expected_codes(case)
        and not (case.files_dir / wf_file).is_file()
    ):
        out.append(f"{where}: workflow_file {wf_file} is not in files/")
    for rel in setup.get("mtimes") or {}:
        if not (case.files_dir / rel).is_file():
            out.append(f"{where}: setup.mtimes names {rel}, which is not in files/")
    return out


def _sequence_problems(case: Case, where: str, sections: dict[str, set[str]] | None) -> list[str]:
    """A sequence: every ``files`` a step names is a directory of expected/ and every
    directory there is named; each step's codes are named by the section it cites (its own
    ``spec``, else the case's); no step compares prose; the expected files hold no prose the
    implementation words itself."""
    out: list[str] = []
    named = {str(s["files"]) for s in case.steps if s.get("files")}
    present = (
        {p.name for p in case.expected_dir.iterdir() if p.is_dir()}
        if case.expected_dir.is_dir()
        else set()
    )
    for name in sorted(named - present):
        out.append(f"{where}: a step names files {name}, but there is no expected/{name}/")
    for name in sorted(present - named):
        out.append(f"{where}: expected/{name}/ is named by no step's `files`")
    if case.expected_dir.is_dir():
        loose = sorted(p.name for p in case.expected_dir.iterdir() if not p.is_dir())
        if loose:
            out.append(f"{where}: expected/ holds only directories named by steps, not {loose}")
    for spec, expected in _expectations(case):
        for code in _codes_of(expected):
            if code not in CATALOGUE:
                out.append(f"{where}: {code} is not a code of the catalogue")
        if sections is None:
            continue
        known = sections.get(spec.lstrip("§"))
        if known is None:
            out.append(
                f"{where}: spec {spec} names no numbered rule of docs/spec.md (a numbered "
                "section, or a numbered item of one: §9.2.6)"
            )
            continue
        unnamed = sorted(set(_codes_of(expected)) - known)
        if unnamed:
            out.append(
                f"{where}: an answer expects {', '.join(unnamed)}, which docs/spec.md {spec} "
                "does not name (cite the section stating it: the step's `spec`)"
            )
        decision = expected.get("decision")

        for ptr in prose_in_decision(decision) if isinstance(decision, dict) else []:
            out.append(
                f"{where}: an expected.decision {ptr} is prose ({PROSE_RULE}): never "
                "compared, remove it"
            )
    for name in sorted(named & present):
        out += _prose_in_dir(case, where, case.expected_dir / name, {}, set())
    return out


def _file_options_problems(case: Case, where: str, has_files: bool) -> list[str]:
    """``expected.bytes`` and ``expected.free_text`` name files of expected/ (and pointers
    that exist in them)."""

    out: list[str] = []
    named = [*case.expected.get("bytes", []), *(case.expected.get("free_text") or {})]
    if named and not has_files:
        return [f"{where}: expected.bytes/free_text need `files: expected` and expected/"]
    for name in named:
        if not (case.expected_dir / name).is_file():
            out.append(f"{where}: expected.bytes/free_text name {name}, which is not in expected/")
    for name, pointers in (case.expected.get("free_text") or {}).items():
        try:
            doc = json.loads((case.expected_dir / name).read_bytes())
        except (OSError, ValueError):
            out.append(f"{where}: free_text names {name}, which is not a JSON file")
            continue
        for ptr in pointers:
            found, parent, key = resolve_pointer(doc, pointer_parts(ptr))
            if not found or not isinstance(parent[key], str):
                out.append(f"{where}: free_text {name} {ptr} is not a string in expected/")
    return out


def _strings(value: Any, out: set[str]) -> set[str]:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.add(v)
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return out


def _input_strings(case: Case) -> set[str]:
    """Every string of the case's input files that parse as JSON (or JSON lines)."""
    out: set[str] = set()
    _strings(case.steps, out)  # a sequence's arguments (a skip reason, a finding) are input
    if not case.files_dir.is_dir():
        return out
    for path in case.files_dir.rglob("*"):
        if not path.is_file() or path.is_symlink():
            continue
        data = path.read_bytes()
        for chunk in [data, *data.split(b"\n")] if path.suffix == ".jsonl" else [data]:
            try:
                _strings(json.loads(chunk), out)
            except (ValueError, RecursionError):
                continue
    return out


def _prose_problems(case: Case, where: str, has_files: bool) -> list[str]:
    """Prose is never compared exactly (:data:`PROSE_RULE`): an ``expected.decision`` names
    no prose key, and every string an expected file holds where prose can stand that the
    implementation wrote itself (no string of the input) is listed in ``expected.free_text``."""

    out: list[str] = []
    decision = case.expected.get("decision")
    for ptr in prose_in_decision(decision) if isinstance(decision, dict) else []:
        out.append(
            f"{where}: expected.decision {ptr} is prose ({PROSE_RULE}): never compared, remove it"
        )
    if not has_files:
        return out
    declared = case.expected.get("free_text") or {}
    as_bytes = set(case.expected.get("bytes", []))
    return out + _prose_in_dir(case, where, case.expected_dir, declared, as_bytes)


def _prose_in_dir(
    case: Case, where: str, top: Path, declared: dict[str, Any], as_bytes: set[str]
) -> list[str]:
    """Every string an expected file under ``top`` holds where prose can stand that is no
    string of the case's input (nor of a sequence's steps) is declared free text."""
    out: list[str] = []
    inputs: set[str] | None = None
    for path in sorted(top.rglob("*")):
        name = path.relative_to(top).as_posix()
        if not path.is_file() or name in as_bytes or ".corrupt-" in name or name.endswith(".jsonl"):
            continue
        try:
            doc = json.loads(path.read_bytes())
        except (ValueError, RecursionError):
            continue
        for ptr, text in prose_strings(doc):
            if ptr in declared.get(name, ()):
                continue
            inputs = _input_strings(case) if inputs is None else inputs
            if text not in inputs:
                out.append(
                    f"{where}: {name} {ptr} is prose the implementation writes ({PROSE_RULE}): "
                    "list it in expected.free_text, never compare it exactly"
                )
    return out


def lint_suite(suite: Path, repo: Path | None = None) -> LintResult:
    """Lint every case under ``suite``; ``repo`` (default: the suite's grandparent) is where
    docs/spec.md, .gitattributes and the adapters' skip lists are looked up."""
    repo = repo or suite.resolve().parents[1]
    res = LintResult()
    sections = read_spec_sections(repo)
    fields: dict[str, set[str]] | None = None
    if sections is not None:
        text = (repo / "docs" / "spec.md").read_text(encoding="utf-8")
        res.problems += spec_problems(text)
        fields = spec_fields(text)
    res.spec = repo / "docs" / "spec.md" if sections is not None else None
    seen: dict[str, str] = {}
    dirs = case_dirs(suite)
    if not dirs:
        res.problems.append(f"{suite}: no cases")
        return res
    for group, case_dir in dirs:
        if not _GROUP.match(group):
            res.problems.append(f"{group}: group names are lower-case words with dashes")
        where = f"{group}/{case_dir.name}"
        if not (case_dir / CASE_FILE).is_file():
            res.problems.append(f"{where}: no {CASE_FILE}")
            continue
        try:
            data = load_case_file(case_dir / CASE_FILE)
        except CaseError as exc:
            res.problems.append(str(exc))
            continue
        case = Case(group, case_dir, data)
        res.cases.append(case)
        res.problems += _check_case(case, sections, fields)
        if case.id in seen:
            res.problems.append(f"{where}: id {case.id!r} is also used by {seen[case.id]}")
        seen[case.id] = where
        for code in _expected_codes(case):
            res.codes_covered[code] = res.codes_covered.get(code, 0) + 1
        for _, expected in _expectations(case):
            action = expected.get("action")
            if isinstance(action, str):
                res.actions_covered[action] = res.actions_covered.get(action, 0) + 1
    res.problems += coverage_problems(res)
    res.problems += _schema_enum_problems()
    res.problems += _repo_problems(repo, set(seen))
    return res


def coverage_problems(res: LintResult) -> list[str]:
    out = []
    for code in CATALOGUE:
        covered = code in res.codes_covered
        group = next((g for g in NOT_PRODUCIBLE_GROUPS if code.startswith(g)), None)
        if group is not None:
            if covered:
                out.append(
                    f"{code} is covered by a case but its group {group}xx is listed as "
                    "not producible: update NOT_PRODUCIBLE_GROUPS"
                )
            continue
        if code in NOT_PRODUCIBLE and covered:
            out.append(f"{code} is covered by a case but listed as not producible: update the list")
        elif code not in NOT_PRODUCIBLE and not covered:
            out.append(f"{code} ({CATALOGUE[code].name}) is covered by no case")
    for code in NOT_PRODUCIBLE:
        if code not in CATALOGUE:
            out.append(f"{code} is listed as not producible but is not in the catalogue")
    for action in ACTIONS:
        if action not in res.actions_covered:
            out.append(f"action {action} is covered by no case")
    # SR209's reason: no keyword of the state schemas falls through to the catch-all.

    annotations = {
        "$schema", "$id", "$ref", "$defs", "title", "description", "examples", "default",
        "properties", "patternProperties", "additionalProperties", "items", "type", "enum",
        "const", "required", "deprecated", "readOnly", "writeOnly", "$comment",
        # editor annotations (VS Code's JSON language service): never validation keywords
        "markdownDescription", "enumDescriptions", "markdownEnumDescriptions", "defaultSnippets",
    }  # fmt: skip
    for rel in STATE_SCHEMAS:
        used: set[str] = set()
        _schema_keywords(load_schema(rel), used)
        unmapped = sorted(used - annotations - set(_KEYWORD_CODES))
        if unmapped:
            out.append(
                f"{rel} uses {', '.join(unmapped)}, which map to SR209: add a case for SR209 "
                "and remove it from NOT_PRODUCIBLE"
            )
    return out


def _schema_enum_problems() -> list[str]:
    schema = load_schema(CASE_SCHEMA)
    enum = schema["properties"]["expected"]["properties"]["action"]["enum"]
    if list(enum) != list(ACTIONS):
        return [f"{CASE_SCHEMA}: the action enum differs from decide.ACTIONS"]
    return []


def _repo_problems(repo: Path, ids: set[str]) -> list[str]:
    out = []
    attributes = repo / ".gitattributes"
    if attributes.is_file():
        text = attributes.read_text(encoding="utf-8")
        if not re.search(r"^conformance/cases/\*\*\s+-text\b", text, re.MULTILINE):
            out.append(".gitattributes does not protect conformance/cases/** with -text")
    for skip in sorted((repo / "conformance" / "adapters").glob("*/skip.txt")):
        try:
            listed = parse_skip_file(skip)
        except RunnerError as exc:
            out.append(str(exc))
            continue
        for case_id in sorted(set(listed) - ids):
            out.append(f"{skip.relative_to(repo)}: {case_id} is not a case of the suite")
    return out


def render(res: LintResult) -> str:
    lines = [f"conformance lint: {len(res.cases)} case(s)"]
    groups = ", ".join(f"{g} {n}" for g, n in sorted(res.per_group().items()))
    lines.append(f"groups: {groups}")
    ops = ", ".join(f"{o} {n}" for o, n in sorted(res.per_operation().items()))
    lines.append(f"operations: {ops}")
    producible = [c for c in CATALOGUE if not_producible_reason(c) is None]
    covered = [c for c in producible if c in res.codes_covered]
    excluded = [c for c in CATALOGUE if not_producible_reason(c) is not None]
    lines.append(
        f"codes: {len(covered)}/{len(producible)} producible codes covered; "
        f"{len(excluded)} not producible by any operation ({', '.join(NOT_PRODUCIBLE)}, "
        f"{', '.join(g + 'xx' for g in NOT_PRODUCIBLE_GROUPS)})"
    )
    lines.append(f"actions: {len(res.actions_covered)}/{len(ACTIONS)} covered")
    lines.append(
        f"spec: {res.spec} (every case's section names its codes)"
        if res.spec
        else "spec: docs/spec.md not found beside the suite: sections were not checked"
    )
    for p in res.problems:
        lines.append(f"problem: {p}")
    lines.append("ok" if res.ok else f"{len(res.problems)} problem(s)")
    return "\n".join(lines) + "\n"
