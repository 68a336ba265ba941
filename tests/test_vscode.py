"""VS Code: the editor's own JSON language service (npm ``vscode-json-languageservice``, the
engine of VS Code's built-in JSON support) validates state files through our 3.0 schema,
configured exactly as the README's VS Code section says (DESIGN §11).

The ``json.schemas`` setting is read out of README.md, so the README is what is tested. Node
runs ``tests/node/vscode_diagnostics.mjs`` once for the whole module. Without node or without
``node_modules/vscode-json-languageservice`` the tests fail with a hint to run ``npm ci``; set
``SESSION_RESUME_NO_NODE=1`` to skip them instead (as tests/test_schema_portability.py does).

`session-resume setup vscode` is run for real in a repository outside this checkout (its own
session root), and the language service then reads the mapping it wrote: the schema copy under
that repository's .vscode/, a known error and a hover (the merge itself:
tests/test_setup_vscode.py).
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from nodetools import NodeAnswer, run_node

from session_resume import validate_document

from conftest import REPO, apex_state, run_cli

# Test tier (README "Test tiers"): Node and `npm ci` (VS Code's JSON language service).
pytestmark = pytest.mark.node

SCRIPT = "tests/node/vscode_diagnostics.mjs"
NODE_PACKAGES = ("vscode-json-languageservice", "vscode-languageserver-textdocument")
NODE_TIMEOUT_S = 120
SCHEMA = REPO / "schema" / "session-state" / "3.0.json"
EXAMPLE = REPO / "examples" / "agent-output" / "contoso-portal" / "00-session-state.json"
ERROR = 1  # LSP DiagnosticSeverity.Error

# Documents live (virtually: the editor buffer is sent, no file is written) in the workspace.
VALID = REPO / "agent-output" / "vscode-valid" / "00-session-state.json"
INVALID = REPO / "agent-output" / "vscode-invalid" / "00-session-state.json"
OTHER_NAME = REPO / "agent-output" / "vscode-invalid" / "notes.json"


def readme_json_schemas() -> list[dict[str, Any]]:
    """The ``json.schemas`` entries of the JSON snippet in README.md's ``## VS Code`` section."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    m = re.search(r"^## VS Code\s*$(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert m, "README.md has no `## VS Code` section"
    block = re.search(r"^```json\s*$(.*?)^```\s*$", m.group(1), re.MULTILINE | re.DOTALL)
    assert block, "the README's VS Code section has no ```json snippet"
    setting = json.loads(block.group(1))
    entries = setting["json.schemas"]
    assert isinstance(entries, list) and entries
    return entries


def invalid_state() -> dict[str, Any]:
    doc = apex_state()
    doc["steps"]["2"]["status"] = "blocked"  # not in the status enum
    del doc["project"]  # a required top-level property
    del doc["steps"]["1"]["agent"]  # a required property of a step
    return doc


def _text(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2) + "\n"


@dataclass
class LanguageServiceRun:
    node: NodeAnswer
    version: str = ""
    schema_reads: list[str] = field(default_factory=list)
    documents: list[dict[str, Any]] = field(default_factory=list)

    def require(self) -> None:
        self.node.require()

    def doc(self, index: int) -> dict[str, Any]:
        self.require()
        return self.documents[index]


def _position_of(text: str, needle: str) -> tuple[int, int]:
    """0-based (line, character) of the only occurrence of ``needle``."""
    assert text.count(needle) == 1, needle
    idx = text.index(needle)
    line = text.count("\n", 0, idx)
    return line, idx - (text.rfind("\n", 0, idx) + 1)


NEW_STATE = REPO / "agent-output" / "vscode-new" / "00-session-state.json"
NEW_STEP = REPO / "agent-output" / "vscode-step" / "00-session-state.json"
# A state being edited: a new step key typed under `steps`, its value still to come.
NEW_STEP_TEXT = _text(apex_state()).replace('"steps": {', '"steps": {\n    "8": ,', 1)

# The documents of the one node run, in order (indices used by the tests below).
REQUEST_DOCS: list[dict[str, Any]] = [
    {"path": str(VALID), "text": _text(apex_state())},
    {"path": str(EXAMPLE)},
    {"path": str(INVALID), "text": _text(invalid_state())},
    {"path": str(OTHER_NAME), "text": _text(invalid_state())},
    {"path": str(NEW_STATE), "text": ""},  # a new, empty state file
    {"path": str(NEW_STEP), "text": NEW_STEP_TEXT},
]


def _run_node(schemas: list[dict[str, Any]], docs: list[dict[str, Any]]) -> LanguageServiceRun:
    request = {"workspace": str(REPO), "schemas": schemas, "documents": docs}
    node = run_node(SCRIPT, request, packages=NODE_PACKAGES, purpose="the VS Code tests")
    if node.answer is None:
        return LanguageServiceRun(node)
    return LanguageServiceRun(
        node,
        version=node.answer["version"],
        schema_reads=node.answer["schema_reads"],
        documents=node.answer["documents"],
    )


@pytest.fixture(scope="module")
def ls_run() -> LanguageServiceRun:
    """The README's setting, as VS Code applies it, over the documents of REQUEST_DOCS."""
    entries = readme_json_schemas()
    invalid_text = REQUEST_DOCS[2]["text"]
    docs = copy.deepcopy(REQUEST_DOCS)
    line, char = _position_of(invalid_text, '"status": "blocked"')
    docs[2]["hovers"] = [{"line": line, "character": char + 2}]
    valid_text = REQUEST_DOCS[0]["text"]
    line, char = _position_of(valid_text, '"schema_version"')
    line2, char2 = _position_of(valid_text, '"status": "in_progress"')
    docs[0]["hovers"] = [
        {"line": line, "character": char + 2},
        {"line": line2, "character": char2 + len('"status": "') + 2},
    ]
    docs[4]["completions"] = [{"line": 0, "character": 0}]
    line, char = _position_of(NEW_STEP_TEXT, '"8": ,')
    docs[5]["completions"] = [{"line": line, "character": char + len('"8": ')}]
    return _run_node(entries, docs)


@pytest.fixture(scope="module")
def ls_run_no_setting() -> LanguageServiceRun:
    """No `json.schemas` setting at all: only a document's own `$schema` key applies."""
    broken = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    broken["steps"]["2"]["status"] = "blocked"
    return _run_node(
        [],
        [
            {"path": str(EXAMPLE)},
            {"path": str(EXAMPLE), "text": json.dumps(broken, indent=2) + "\n"},
        ],
    )


def _schema_uri() -> str:
    return SCHEMA.resolve().as_uri()


# --- the README snippet ---------------------------------------------------------------------


def test_readme_setting_maps_state_files_to_the_3_0_schema() -> None:
    entries = readme_json_schemas()
    assert len(entries) == 1
    (entry,) = entries
    assert entry["fileMatch"] == ["00-session-state.json"]
    # VS Code resolves a relative url against the workspace folder (the repository root).
    assert (REPO / entry["url"]).resolve() == SCHEMA.resolve()


# --- diagnostics through the README's setting ------------------------------------------------


def test_valid_state_has_no_diagnostics(ls_run: LanguageServiceRun) -> None:
    doc = ls_run.doc(0)
    assert doc["schemas"] == [_schema_uri()], "the README's fileMatch did not select the schema"
    assert doc["diagnostics"] == []
    assert ls_run.schema_reads == [_schema_uri()]


def test_bundled_example_has_no_diagnostics(ls_run: LanguageServiceRun) -> None:
    doc = ls_run.doc(1)
    assert doc["schemas"] == [_schema_uri()]
    assert doc["diagnostics"] == []


def _diag(doc: dict[str, Any], needle: str) -> list[dict[str, Any]]:
    return [d for d in doc["diagnostics"] if needle in d["message"]]


def test_bad_status_is_reported_on_the_value(ls_run: LanguageServiceRun) -> None:
    doc = ls_run.doc(2)
    text = REQUEST_DOCS[2]["text"]
    line, char = _position_of(text, '"status": "blocked"')
    start = char + len('"status": ')
    found = [
        d
        for d in doc["diagnostics"]
        if d["range"]["start"] == {"line": line, "character": start}
        and d["range"]["end"] == {"line": line, "character": start + len('"blocked"')}
    ]
    assert len(found) == 1, doc["diagnostics"]
    assert found[0]["severity"] == ERROR
    for allowed in ("pending", "in_progress", "complete", "skipped"):
        assert allowed in found[0]["message"]
    # The Python validator points at the same place (1-based line and column).
    report = validate_document(text.encode(), file="x.json")
    ours = [d for d in report.diagnostics if d.pointer == "/steps/2/status"]
    assert [(d.code, d.line, d.column) for d in ours] == [("SR309", line + 1, start + 1)]


def test_missing_top_level_property_is_reported_on_the_object(ls_run: LanguageServiceRun) -> None:
    doc = ls_run.doc(2)
    found = _diag(doc, '"project"')
    assert len(found) == 1, doc["diagnostics"]
    assert found[0]["severity"] == ERROR
    assert found[0]["range"] == {
        "start": {"line": 0, "character": 0},
        "end": {"line": 0, "character": 1},
    }


def test_missing_step_property_is_reported_on_the_step_key(ls_run: LanguageServiceRun) -> None:
    doc = ls_run.doc(2)
    text = REQUEST_DOCS[2]["text"]
    line, char = _position_of(text, '"1": {')
    found = _diag(doc, '"agent"')
    assert len(found) == 1, doc["diagnostics"]
    assert found[0]["range"] == {
        "start": {"line": line, "character": char},
        "end": {"line": line, "character": char + len('"1"')},
    }


def test_invalid_state_has_exactly_the_three_problems(ls_run: LanguageServiceRun) -> None:
    doc = ls_run.doc(2)
    assert len(doc["diagnostics"]) == 3, doc["diagnostics"]
    assert all(d["severity"] == ERROR for d in doc["diagnostics"])


def test_hover_shows_the_schema_title_and_description(ls_run: LanguageServiceRun) -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    status = schema["$defs"]["stepObject"]["properties"]["status"]
    (hover,) = ls_run.doc(2)["hovers"]
    assert hover is not None
    assert hover["text"].startswith(status["title"])
    assert "Lifecycle state of the step" in hover["text"]


def test_other_file_names_are_not_validated(ls_run: LanguageServiceRun) -> None:
    doc = ls_run.doc(3)
    assert doc["schemas"] == []
    assert doc["diagnostics"] == []


# --- the `$schema` key the README mentions ----------------------------------------------------


def test_dollar_schema_key_alone_selects_the_schema(ls_run_no_setting: LanguageServiceRun) -> None:
    good, broken = ls_run_no_setting.doc(0), ls_run_no_setting.doc(1)
    assert good["schemas"] == [_schema_uri()]
    assert good["diagnostics"] == []
    assert broken["schemas"] == [_schema_uri()]
    assert [d["severity"] for d in broken["diagnostics"]] == [ERROR]
    assert "in_progress" in broken["diagnostics"][0]["message"]


# --- Markdown hovers and snippets -------------------------------------------------------------


def test_hover_renders_code_from_the_markdown_description(ls_run: LanguageServiceRun) -> None:
    """The hover is Markdown with a real code span (`"3.0"`), not the escaped backticks that
    a plain `description` turns into (\\`)."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    prop = schema["properties"]["schema_version"]
    hover = ls_run.doc(0)["hovers"][0]
    assert hover is not None
    assert '`"3.0"`' in hover["text"] and "\\`" not in hover["text"], hover["text"]
    assert prop["markdownDescription"] in hover["text"]
    # the plain description, for clients without Markdown, has no backtick to escape
    assert "`" not in prop["description"] and '"3.0"' in prop["description"]


def test_hover_on_an_enum_value_shows_its_description(ls_run: LanguageServiceRun) -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    status = schema["$defs"]["stepObject"]["properties"]["status"]
    described = dict(zip(status["enum"], status["markdownEnumDescriptions"], strict=True))
    hover = ls_run.doc(0)["hovers"][1]
    assert hover is not None
    assert f"`in_progress`: {described['in_progress']}" in hover["text"], hover["text"]


def _snippet(items: list[dict[str, Any]], label: str) -> dict[str, Any]:
    found = [i for i in items if i["label"] == label]
    assert len(found) == 1, [i["label"] for i in items]
    return found[0]


SNIPPET = 2  # LSP InsertTextFormat.Snippet


def test_new_state_snippet_completes_in_an_empty_file(ls_run: LanguageServiceRun) -> None:
    (items,) = ls_run.doc(4)["completions"]
    item = _snippet(items, "New session state")
    assert item["insertTextFormat"] == SNIPPET
    text = item["insertText"]
    for key in ('"schema_version": "3.0"', '"project": "${1:my-project}"', '"steps": {'):
        assert key in text, text
    assert (
        item["documentationKind"] == "markdown"
        and "`session-resume init`" in (item["documentation"])
    )


def test_new_step_snippet_completes_as_a_step_value(ls_run: LanguageServiceRun) -> None:
    (items,) = ls_run.doc(5)["completions"]
    item = _snippet(items, "New step")
    assert item["insertTextFormat"] == SNIPPET
    assert '"status": "pending"' in item["insertText"]
    assert '"context_files_used": []' in item["insertText"]


def _expand(body: Any) -> Any:
    """A snippet body with every placeholder replaced by its default (or first choice)."""
    if isinstance(body, dict):
        return {k: _expand(v) for k, v in body.items()}
    if isinstance(body, list):
        return [_expand(v) for v in body]
    if isinstance(body, str):
        body = re.sub(r"\$\{\d+\|([^,|]*)[^}]*\|\}", r"\1", body)
        return re.sub(r"\$\{\d+:([^}]*)\}", r"\1", body)
    return body


def test_snippet_bodies_are_valid_states() -> None:
    """What the snippets insert (their defaults kept) passes the full validator."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    (new_state,) = schema["defaultSnippets"]
    doc = _expand(new_state["body"])
    report = validate_document(json.dumps(doc).encode(), file="new.json")
    assert report.diagnostics == [], report.diagnostics
    (new_step,) = schema["$defs"]["stepObject"]["defaultSnippets"]
    doc["steps"]["2"] = _expand(new_step["body"])  # a second step of the (generic) workflow
    report = validate_document(json.dumps(doc).encode(), file="new.json")
    assert report.diagnostics == [], report.diagnostics


def test_every_schema_description_is_plain_and_has_its_markdown() -> None:
    """Across schema/: a description never holds a backtick (VS Code shows it escaped), and
    sits beside the markdownDescription it is derived from (docgen keeps them in step)."""
    from session_resume.docgen.generate import plain_text

    def walk(node: Any, where: str) -> list[str]:
        bad: list[str] = []
        if isinstance(node, dict):
            desc, md = node.get("description"), node.get("markdownDescription")
            if isinstance(desc, str):
                if "`" in desc:
                    bad.append(f"{where}: backtick in description")
                if not isinstance(md, str) or plain_text(md) != desc:
                    bad.append(f"{where}: description is not the plain form of markdownDescription")
            for k, v in node.items():
                if k not in ("enum", "const", "default", "examples", "body"):
                    bad += walk(v, f"{where}/{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                bad += walk(v, f"{where}/{i}")
        return bad

    problems: list[str] = []
    for p in sorted((REPO / "schema").rglob("*.json")):
        problems += walk(json.loads(p.read_text(encoding="utf-8")), p.name)
    assert problems == []


# --- `session-resume setup vscode` in a repository of its own ---------------------------------


@pytest.fixture(scope="module")
def setup_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, LanguageServiceRun]:
    """A repository outside this checkout (session_root `sessions` in its configuration, a
    setting of the user's own in .vscode/settings.json), set up by the real command; then VS
    Code's language service with the `json.schemas` the command wrote, over a state file of
    that repository."""
    repo = tmp_path_factory.mktemp("vscode-setup") / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".session-resume.yaml").write_text("session_root: sessions\n", encoding="utf-8")
    (repo / ".vscode").mkdir()
    (repo / ".vscode" / "settings.json").write_text('{"editor.tabSize": 4}\n', encoding="utf-8")
    proc = run_cli("setup", "vscode", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert ".vscode/settings.json: updated" in proc.stdout
    assert ".vscode/session-resume/session-state-3.0.json: created" in proc.stdout
    settings = json.loads((repo / ".vscode" / "settings.json").read_text(encoding="utf-8"))
    assert settings["editor.tabSize"] == 4
    text = REQUEST_DOCS[2]["text"]
    line, char = _position_of(text, '"status": "blocked"')
    docs = [
        {
            "path": str(repo / "sessions" / "shop" / "00-session-state.json"),
            "text": text,
            "hovers": [{"line": line, "character": char + 2}],
        },
        {"path": str(repo / "notes" / "00-session-state.json"), "text": text},
    ]
    request = {"workspace": str(repo), "schemas": settings["json.schemas"], "documents": docs}
    node = run_node(SCRIPT, request, packages=NODE_PACKAGES, purpose="the VS Code tests")
    run = LanguageServiceRun(node)
    if node.answer is not None:
        run.version = node.answer["version"]
        run.schema_reads = node.answer["schema_reads"]
        run.documents = node.answer["documents"]
    return repo, run


def test_setup_vscode_mapping_validates_and_hovers_outside_this_repository(
    setup_run: tuple[Path, LanguageServiceRun],
) -> None:
    repo, run = setup_run
    copy_uri = (repo / ".vscode" / "session-resume" / "session-state-3.0.json").as_uri()
    doc = run.doc(0)
    # the schema VS Code reads is the repository's own copy, not this checkout's schema/
    assert doc["schemas"] == [copy_uri] and run.schema_reads == [copy_uri]
    assert (repo / ".vscode" / "session-resume" / "session-state-3.0.json").read_bytes() == (
        SCHEMA.read_bytes()
    )
    # the known problems of the invalid state, the bad status on its value
    assert len(doc["diagnostics"]) == 3, doc["diagnostics"]
    text = REQUEST_DOCS[2]["text"]
    line, char = _position_of(text, '"status": "blocked"')
    start = char + len('"status": ')
    (bad,) = [d for d in doc["diagnostics"] if d["range"]["start"]["line"] == line]
    assert bad["severity"] == ERROR and bad["range"]["start"]["character"] == start
    assert "in_progress" in bad["message"]
    # and the hover on `status` shows the schema's title and description
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    status = schema["$defs"]["stepObject"]["properties"]["status"]
    (hover,) = doc["hovers"]
    assert hover is not None and hover["text"].startswith(status["title"])


def test_setup_vscode_maps_only_the_session_root(
    setup_run: tuple[Path, LanguageServiceRun],
) -> None:
    _repo, run = setup_run
    other = run.doc(1)  # a state file name outside the configured session root
    assert other["schemas"] == [] and other["diagnostics"] == []
