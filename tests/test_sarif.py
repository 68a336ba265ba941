"""SARIF and the GitHub step summary, checked against what their consumers accept.

- The official SARIF 2.1.0 JSON Schema (Errata 01, vendored unmodified under
  tests/fixtures/sarif/ with its OASIS notice) validates every log, with format checking on
  (``uri`` needs the ``format-nongpl`` extra of jsonschema; a negative control proves it runs).
- GitHub code scanning's documented SARIF requirements ("SARIF support for code scanning"):
  ``version`` 2.1.0 with a ``$schema``; ``tool.driver.name``; every rule with ``id``,
  ``shortDescription``, ``fullDescription``, ``help`` and a ``defaultConfiguration.level``;
  every result with a ``ruleId`` of a listed rule, ``message.text``, a ``level`` of
  none/note/warning/error, 1 to 10 ``locations`` each with an ``artifactLocation.uri`` relative
  to the repository root and a ``region.startLine``, and ``partialFingerprints``.
- The step summary is a GFM table that a real CommonMark parser (markdown-it-py with its table
  rule, as GitHub renders Markdown) reads back with five cells a row, whatever the path holds.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import jsonschema
import pytest
from markdown_it import MarkdownIt

from conftest import REPO, apex_state, dump, run_cli

# Test tier (README "Test tiers"): SARIF against the official schema, formats checked.
pytestmark = pytest.mark.slow

SCHEMA_FILE = REPO / "tests" / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"
NOW = ("--now", "2026-11-22T00:00:00Z")
DOCS = "https://github.com/session-resume/session-resume/blob/main/docs/"
# A directory name that needs percent-encoding in a URI: space, '#', '%', '&', non-ASCII.
ODD_DIR = "odd dir #1 %20 & ü"


def _validator() -> jsonschema.Draft4Validator:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())


def _schema_errors(doc: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in _validator().iter_errors(doc)
    ]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository (``.git`` marks its root) with an invalid state, a valid one with a
    warning, and an invalid one in a directory whose name needs percent-encoding."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    bad = apex_state()
    bad["steps"]["2"]["sub_step"] = "approval"  # SR414
    bad["steps"]["3"]["status"] = "blocked"  # SR309 (+ a schema error on the same pointer)
    warn = apex_state()
    warn["workflow_status"] = "x"  # SR330 warning, the file stays valid
    for rel, doc in (
        ("agent-output/bad/00-session-state.json", bad),
        ("agent-output/warn/00-session-state.json", warn),
        (f"agent-output/{ODD_DIR}/00-session-state.json", bad),
    ):
        p = root / rel
        p.parent.mkdir(parents=True)
        p.write_bytes(dump(doc))
    return root


def _sarif(*args: str, cwd: Path) -> dict[str, Any]:
    proc = run_cli("validate", "--format", "sarif", *NOW, *args, cwd=cwd)
    assert proc.returncode == 1, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def _results(doc: dict[str, Any]) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = doc["runs"][0]["results"]
    return results


def test_sarif_validates_against_the_official_schema_with_formats(repo: Path) -> None:
    doc = _sarif("agent-output", cwd=repo)
    assert _results(doc), "the log has results"
    assert _schema_errors(doc) == []


def test_format_checking_is_really_on(repo: Path) -> None:
    """Negative control: the relative helpUri that session-resume used to write fails the
    schema's ``format: uri`` (so the check above would catch it)."""
    doc = _sarif("agent-output", cwd=repo)
    broken = copy.deepcopy(doc)
    broken["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] = "docs/codes/SR202.md"
    assert any("helpUri" in e and "uri" in e for e in _schema_errors(broken))
    broken = copy.deepcopy(doc)
    broken["runs"][0]["tool"]["driver"]["informationUri"] = "docs/spec.md"
    assert _schema_errors(broken)


def test_github_code_scanning_requirements(repo: Path) -> None:
    doc = _sarif("agent-output", cwd=repo)
    assert doc["version"] == "2.1.0"
    assert urlsplit(doc["$schema"]).scheme == "https"
    assert len(doc["runs"]) == 1
    run = doc["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "session-resume" and driver["version"]
    assert driver["informationUri"] == DOCS + "spec.md"
    rules = driver["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids))
    assert {"SR309", "SR414", "SR330"} <= set(ids)
    for rule in rules:
        for key in ("shortDescription", "fullDescription", "help"):
            assert rule[key]["text"].strip(), (rule["id"], key)
        assert rule["help"]["markdown"].strip()
        assert rule["defaultConfiguration"]["level"] in ("none", "note", "warning", "error")
        assert rule["helpUri"] == f"{DOCS}codes/{rule['id']}.md"
        # the page the URI names exists in this repository
        assert (REPO / "docs" / "codes" / f"{rule['id']}.md").is_file()
    bases = run["originalUriBaseIds"]
    assert bases["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"
    for res in run["results"]:
        assert res["ruleId"] in ids and ids[res["ruleIndex"]] == res["ruleId"]
        assert res["message"]["text"].strip()
        assert res["level"] in ("none", "note", "warning", "error")
        assert 1 <= len(res["locations"]) <= 10
        for loc in res["locations"]:
            phys = loc["physicalLocation"]
            art = phys["artifactLocation"]
            assert art["uriBaseId"] in bases
            assert not urlsplit(art["uri"]).scheme and not art["uri"].startswith("/")
            assert (repo / unquote(art["uri"])).is_file(), art["uri"]
            assert phys["region"]["startLine"] >= 1
        assert res["partialFingerprints"] and all(res["partialFingerprints"].values())
    warning = next(r for r in run["results"] if r["ruleId"] == "SR330")
    # a warning in a valid file still points at its line (GitHub shows it in the file)
    assert warning["locations"][0]["physicalLocation"]["region"]["startLine"] > 1


def test_artifact_uris_are_relative_to_srcroot_and_percent_encoded(repo: Path) -> None:
    doc = _sarif("agent-output", cwd=repo)
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for r in _results(doc)
        for loc in r["locations"]
    }
    encoded = "agent-output/odd%20dir%20%231%20%2520%20%26%20%C3%BC/00-session-state.json"
    assert uris == {
        "agent-output/bad/00-session-state.json",
        "agent-output/warn/00-session-state.json",
        encoded,
    }


def test_fingerprints_and_locations_are_the_same_from_any_working_directory(
    repo: Path, tmp_path: Path
) -> None:
    """Two runs: one from the repository root with relative paths, one from elsewhere with
    absolute paths and --root. Same locations, same fingerprints (not the same run)."""

    def identity(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
        return sorted(
            (
                r["ruleId"],
                json.dumps(r["locations"], sort_keys=True),
                json.dumps(r["partialFingerprints"], sort_keys=True),
            )
            for r in _results(doc)
        )

    first = _sarif("agent-output", cwd=repo)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    second = _sarif(
        str(repo / "agent-output" / "warn"),
        str(repo / "agent-output" / "bad"),
        str(repo / "agent-output" / ODD_DIR),
        "--root",
        str(repo),
        cwd=elsewhere,
    )
    assert identity(first) == identity(second)
    # from a subdirectory with ../ paths: the same again
    third = _sarif("../bad", "../warn", f"../{ODD_DIR}", cwd=repo / "agent-output" / "warn")
    assert identity(third) == identity(first)
    # a fingerprint is unique within the log (equal findings are numbered)
    fps = [json.dumps(r["partialFingerprints"]) for r in _results(first)]
    assert len(fps) == len(set(fps))


def test_fingerprint_does_not_follow_the_line(repo: Path) -> None:
    """Moving a finding down the file (content added above it) keeps its fingerprint."""
    before = _sarif("agent-output/bad", cwd=repo)
    p = repo / "agent-output" / "bad" / "00-session-state.json"
    doc = json.loads(p.read_text())
    p.write_text(json.dumps({"x-note": "moved", **doc}, indent=8))
    after = _sarif("agent-output/bad", cwd=repo)

    def by_fp(d: dict[str, Any]) -> dict[str, int]:
        return {
            json.dumps(r["partialFingerprints"]): r["locations"][0]["physicalLocation"]["region"][
                "startLine"
            ]
            for r in _results(d)
            if r["ruleId"] == "SR414"
        }

    b, a = by_fp(before), by_fp(after)
    assert b.keys() == a.keys() and list(b.values()) != list(a.values())


def test_file_outside_the_root_gets_an_absolute_file_uri(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside" / "00-session-state.json"
    outside.parent.mkdir()
    shutil.copy(repo / "agent-output" / "bad" / "00-session-state.json", outside)
    doc = _sarif(str(outside), "--root", str(repo), cwd=repo)
    art = _results(doc)[0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert "uriBaseId" not in art and art["uri"] == outside.resolve().as_uri()
    assert _schema_errors(doc) == []


def test_docs_url_from_option_and_config(repo: Path) -> None:
    doc = _sarif("agent-output/bad", "--docs-url", "https://docs.example.org/sr", cwd=repo)
    rule = doc["runs"][0]["tool"]["driver"]["rules"][0]
    assert rule["helpUri"] == f"https://docs.example.org/sr/codes/{rule['id']}.md"
    (repo / ".session-resume.yaml").write_text("docs_url: https://mirror.example.net/docs/\n")
    doc = _sarif("agent-output/bad", cwd=repo)
    rule = doc["runs"][0]["tool"]["driver"]["rules"][0]
    assert rule["helpUri"].startswith("https://mirror.example.net/docs/codes/SR")
    assert doc["runs"][0]["tool"]["driver"]["informationUri"] == (
        "https://mirror.example.net/docs/spec.md"
    )


@pytest.mark.parametrize("bad", ["docs/codes", "ftp://x.example/", "https://", "https://a b/"])
def test_bad_docs_url_is_a_clear_error(repo: Path, bad: str) -> None:
    proc = run_cli("validate", "--format", "sarif", "--docs-url", bad, "agent-output", cwd=repo)
    assert proc.returncode == 2 and "--docs-url" in proc.stderr
    # still a SARIF log, saying the run failed (issue 27 must-show 7), with the reason
    (inv,) = json.loads(proc.stdout)["runs"][0]["invocations"]
    assert inv["executionSuccessful"] is False
    assert "--docs-url" in inv["toolExecutionNotifications"][0]["message"]["text"]
    (repo / ".session-resume.yaml").write_text(f"docs_url: {json.dumps(bad)}\n")
    proc = run_cli("validate", "--format", "sarif", "agent-output", cwd=repo)
    assert proc.returncode == 2 and "SR405" in proc.stderr and "docs_url" in proc.stderr


# --- the GitHub step summary -------------------------------------------------------------


def _table_rows(markdown: str) -> list[list[str]]:
    """The body rows of the summary's table, as a CommonMark + GFM-table parser reads them
    (the text of each cell, inline markup resolved)."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    rows: list[list[str]] = []
    in_body = False
    for i, t in enumerate(tokens):
        if t.type == "tbody_open":
            in_body = True
        elif t.type == "tbody_close":
            in_body = False
        elif in_body and t.type == "tr_open":
            rows.append([])
        elif in_body and t.type == "inline" and tokens[i - 1].type == "td_open":
            children = t.children or []
            assert all(c.type in ("text", "text_special") for c in children), children
            rows[-1].append("".join(c.content for c in children))
    return rows


def test_step_summary_escapes_table_cells(tmp_path: Path) -> None:
    hostile = "a|b`c *d* <b>e<i> [l](x) \\ ~~f~~ $g$\nline2\x1b[31m"
    p = tmp_path / hostile / "00-session-state.json"
    p.parent.mkdir()
    doc = apex_state()
    doc["steps"]["2"]["sub_step"] = "approval"  # SR414, a message naming the value
    doc["steps"]["3"]["status"] = "x|y\n| z |"  # a status whose message quotes the value
    p.write_bytes(dump(doc))
    summary = tmp_path / "summary.md"
    proc = run_cli(
        "validate",
        "--format",
        "github",
        *NOW,
        str(p.relative_to(tmp_path)),
        cwd=tmp_path,
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert proc.returncode == 1
    text = summary.read_text(encoding="utf-8")
    rows = _table_rows(text)
    assert len(rows) >= 2
    assert all(len(r) == 5 for r in rows), rows
    # the path comes back as it was, control characters shown as escapes, on one line
    shown = str(p.relative_to(tmp_path)).replace("\n", "\\x0a").replace("\x1b", "\\x1b")
    assert {r[0] for r in rows} == {shown}
    assert {r[2] for r in rows} >= {"SR414"}
    # every table line is one physical line of the file: the table is not broken up
    table = [ln for ln in text.splitlines() if ln.startswith("|")]
    assert len(table) == 2 + len(rows)


def test_step_summary_table_cell_unit() -> None:
    from session_resume.reporters.github import table_cell

    row = "| " + table_cell("x | y\r\n`z`") + " | " + table_cell("**") + " |\n"
    rows = _table_rows("| a | b |\n| --- | --- |\n" + row)
    assert rows == [["x | y\\x0d\\x0a`z`", "**"]]


def test_default_docs_url_is_the_repositorys() -> None:
    import tomllib

    from session_resume.reporters.sarif import DEFAULT_DOCS_URL

    with open(REPO / "pyproject.toml", "rb") as fh:
        repo_url = tomllib.load(fh)["project"]["urls"]["Repository"]
    assert DEFAULT_DOCS_URL == f"{repo_url}/blob/main/docs/" == DOCS


def test_rule_help_is_the_codes_own_documentation(repo: Path, tmp_path: Path) -> None:
    """Issue 27 point 1: ``rules[].help`` is the catalogue's text for the code (what its
    docs page says), never one finding's hint: a project-name error (SR204 on /project) and
    a timestamp error (SR204 on /updated) share one rule whose help is about neither."""
    from session_resume.core.codes import CATALOGUE

    doc = apex_state()
    doc["project"] = "-not a name"
    doc["updated"] = "2026-03-02"
    p = repo / "agent-output" / "two" / "00-session-state.json"
    p.parent.mkdir(parents=True)
    p.write_bytes(dump(doc))
    sarif = _sarif("agent-output", cwd=repo)
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    for code, rule in rules.items():
        assert rule["help"]["text"] == CATALOGUE[code].fix, code
        assert rule["helpUri"].endswith(f"codes/{code}.md")
    sr204 = [r for r in _results(sarif) if r["ruleId"] == "SR204"]
    assert len(sr204) >= 2
    assert "Timestamp" not in rules["SR204"]["help"]["text"]
    assert "RFC 3339" not in rules["SR204"]["help"]["text"]


@pytest.mark.parametrize(
    "args,setup",
    [
        (("missing-dir",), None),  # SR100
        (("--select", "E501", "agent-output"), None),  # a usage error without a code
        (("agent-output",), "workflow: generci\n"),  # SR405 in the configuration
        ((), "session_root: nowhere\n"),  # no PATH, and the session root does not exist
    ],
)
def test_a_usage_error_still_yields_a_document(
    repo: Path, args: tuple[str, ...], setup: str | None
) -> None:
    """Issue 27 must-show 7: exit 2, and yet a SARIF log valid against the official schema
    whose invocation says the run failed, and a JSON report valid against its schema."""
    if setup is not None:
        (repo / ".session-resume.yaml").write_text(setup)
    proc = run_cli("validate", "--format", "sarif", *args, cwd=repo)
    assert proc.returncode == 2, proc.stderr
    doc = json.loads(proc.stdout)
    assert _schema_errors(doc) == []
    (inv,) = doc["runs"][0]["invocations"]
    assert inv["executionSuccessful"] is False
    (note,) = inv["toolExecutionNotifications"]
    assert note["level"] == "error" and note["message"]["text"]
    out = run_cli("validate", "--format", "json", *args, cwd=repo)
    assert out.returncode == 2
    from test_output_schemas import _check

    report = _check(out.stdout, "schema/report/validate-1.json")
    assert report["valid"] is False and report["error"]


@pytest.mark.parametrize(
    "args",
    [
        ("validate", "--format", "sarif", "--bogus-option", "agent-output"),
        ("validate", "--format=sarif", "--max-size", "abc"),
        ("validate", "--output-format", "sarif", "--color", "purple"),
        ("validate", "--output-format=sarif", "--strict", "--bogus"),
        ("validate", "--form", "sarif", "--now"),  # an abbreviation argparse accepts
        ("--bogus", "validate", "--format", "sarif"),  # the top-level parser's error
        ("resume", "--format", "sarif", "agent-output"),  # a command without SARIF
        ("validate", "--format", "sarif", "--format", "nope"),
    ],
)
def test_an_argparse_error_still_yields_a_sarif_log(repo: Path, args: tuple[str, ...]) -> None:
    """SARIF asked for anywhere in the arguments: argparse's own usage errors (exit 2, its
    message on stderr) still write a log valid against the official schema, the error as the
    failed invocation's notification, so the action never uploads an empty file."""
    proc = run_cli(*args, cwd=repo)
    assert proc.returncode == 2, proc.stderr
    assert "error:" in proc.stderr  # argparse's usage and message, as without SARIF
    doc = json.loads(proc.stdout)
    assert _schema_errors(doc) == []
    (inv,) = doc["runs"][0]["invocations"]
    assert inv["executionSuccessful"] is False
    (note,) = inv["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert note["message"]["text"] == proc.stderr.strip().splitlines()[-1]


def test_a_sarif_value_after_the_separator_is_a_path_not_a_format(repo: Path) -> None:
    proc = run_cli("validate", "--bogus", "--", "--format", "sarif", cwd=repo)
    assert proc.returncode == 2 and proc.stdout == ""
