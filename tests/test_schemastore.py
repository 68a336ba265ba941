"""docs/schemastore/catalog-entry.json is an entry SchemaStore.org's catalogue accepts, and
it selects state files, as an editor applies it.

- Shape: the entry, in a catalogue document, validates against SchemaStore's own catalogue
  schema (``schema-catalog.json``, vendored unmodified with its Apache-2.0 licence under
  tests/fixtures/schemastore/), with format checking.
- URLs: each names a schema of this repository (``main`` branch on GitHub); the test maps them
  back to the files here, so no network is used.
- ``fileMatch``: VS Code's own JSON language service (the same driver as tests/test_vscode.py)
  is configured with the entry's patterns and says which documents the schema applies to.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from nodetools import run_node

from conftest import REPO, apex_state

ENTRY_FILE = REPO / "docs" / "schemastore" / "catalog-entry.json"
CATALOG_SCHEMA = REPO / "tests" / "fixtures" / "schemastore" / "schema-catalog.json"
RAW = "https://raw.githubusercontent.com/session-resume/session-resume/main/"


def _entry() -> dict[str, Any]:
    entry: dict[str, Any] = json.loads(ENTRY_FILE.read_text(encoding="utf-8"))
    return entry


def _catalog_errors(entry: Any) -> list[str]:
    schema = json.loads(CATALOG_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    catalog = {
        "$schema": "https://json.schemastore.org/schema-catalog.json",
        "version": 1,
        "schemas": [entry],
    }
    return [f"{e.json_path}: {e.message}" for e in validator.iter_errors(catalog)]


def _local(url: str) -> Path:
    assert url.startswith(RAW), url
    return REPO / url.removeprefix(RAW)


def test_entry_validates_against_schemastores_catalogue_schema() -> None:
    assert _catalog_errors(_entry()) == []


def test_negative_control_catalogue_schema_rejects_bad_entries() -> None:
    entry = _entry()
    assert _catalog_errors({**entry, "url": "http://example.org/x.json"})  # not https
    assert _catalog_errors({k: v for k, v in entry.items() if k != "description"})
    assert _catalog_errors({**entry, "fileMatch": ["a", "a"]})  # not unique
    assert _catalog_errors({**entry, "homepage": "https://example.org"})  # unknown key


def test_urls_name_this_repositorys_schemas() -> None:
    entry = _entry()
    current = _local(entry["url"])
    assert current == REPO / "schema" / "session-state" / "3.0.json"
    assert entry["versions"]["3.0"] == entry["url"]
    for version, url in entry["versions"].items():
        schema = json.loads(_local(url).read_text(encoding="utf-8"))
        assert schema["$id"].endswith(f"/session-state/{version}.json")


def test_entry_names_the_repository_of_pyproject() -> None:
    import tomllib

    with open(REPO / "pyproject.toml", "rb") as fh:
        repo_url = tomllib.load(fh)["project"]["urls"]["Repository"]
    owner_repo = repo_url.removeprefix("https://github.com/")
    assert f"https://raw.githubusercontent.com/{owner_repo}/main/" == RAW


# The documents VS Code is asked about, and whether the entry's schema must apply to each.
DOCS: list[tuple[str, bool]] = [
    ("agent-output/shop/00-session-state.json", True),
    ("deep/down/a/session/00-session-state.json", True),
    ("agent-output/shop/00-session-state.json.bak", True),
    ("agent-output/shop/notes.json", False),
    ("agent-output/shop/my-00-session-state.json", False),
    ("agent-output/shop/00-session-state.json.corrupt-20260101T000000Z", False),
]


@pytest.fixture(scope="module")
def applied(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    entry = _entry()
    url = _local(entry["url"]).resolve().as_uri()  # where the https URL points, offline
    workspace = tmp_path_factory.mktemp("workspace")
    text = json.dumps(apex_state(), indent=2) + "\n"
    node = run_node(
        "tests/node/vscode_diagnostics.mjs",
        {
            "workspace": str(workspace),
            "schemas": [{"fileMatch": entry["fileMatch"], "url": url}],
            "documents": [{"path": str(workspace / rel), "text": text} for rel, _ in DOCS],
        },
        packages=("vscode-json-languageservice", "vscode-languageserver-textdocument"),
        purpose="the SchemaStore fileMatch tests",
    )
    answer = node.require()
    return {rel: d["schemas"] for (rel, _), d in zip(DOCS, answer["documents"], strict=True)}


@pytest.mark.node  # test tier (README "Test tiers"): VS Code's JSON service on Node
@pytest.mark.parametrize(("rel", "selected"), DOCS)
def test_file_match_selects_state_files_only(
    applied: dict[str, list[str]], rel: str, selected: bool
) -> None:
    uri = (REPO / "schema" / "session-state" / "3.0.json").resolve().as_uri()
    assert applied[rel] == ([uri] if selected else [])
