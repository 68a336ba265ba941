"""The schemas' editor annotations have one source: ``markdownDescription`` (and
``markdownEnumDescriptions``). ``python -m session_resume.docgen write`` derives the plain
``description`` (and ``enumDescriptions``) from it; ``check`` fails when they drift, when a
plain description keeps a backtick, and when an enum has no descriptions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from session_resume.docgen.generate import annotated_schemas, plain_text


@pytest.mark.parametrize(
    ("markdown", "plain"),
    [
        ('Writers always write `"3.0"`.', 'Writers always write "3.0".'),
        (
            "See [the spec](docs/spec.md) and **never** `blocked`.",
            "See the spec and never blocked.",
        ),
        ("A ``code with ` inside`` span.", "A code with ` inside span."),
        (r"Escaped \* star and \`tick\`.", "Escaped * star and `tick`."),
        ("Nothing to do.", "Nothing to do."),
    ],
)
def test_plain_text(markdown: str, plain: str) -> None:
    assert plain_text(markdown) == plain


def _root(tmp_path: Path, schema: dict[str, Any]) -> Path:
    (tmp_path / "schema").mkdir(parents=True)
    (tmp_path / "schema" / "x.json").write_text(json.dumps(schema, indent=2) + "\n")
    return tmp_path


def _check(root: Path) -> subprocess.CompletedProcess[str]:
    """docgen's own check, limited to the schemas (the other generated files are absent)."""
    code = (
        "import sys; from pathlib import Path; from session_resume.docgen.generate import "
        "annotated_schemas as a; root = Path(sys.argv[1]); want, problems = a(root); "
        "stale = [str(p) for p, t in want.items() if p.read_text() != t]; "
        "print('\\n'.join(stale + problems)); sys.exit(1 if stale or problems else 0)"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(root)], capture_output=True, text=True, check=False
    )


def test_write_derives_description_and_enum_descriptions(tmp_path: Path) -> None:
    root = _root(
        tmp_path,
        {
            "type": "object",
            "properties": {
                "status": {
                    "markdownDescription": "One of the `status` values.",
                    "enum": ["a", "b"],
                    "markdownEnumDescriptions": ["The `a` case.", "The **b** case."],
                },
                "other": {"description": "Plain, from before.", "enum": ["a", "b"]},
                # a property *named* description and enum: a schema, not annotations
                "description": {"type": "string", "markdownDescription": "A `name`."},
                "enum": {"type": "string", "description": "No enum here."},
            },
        },
    )
    want, problems = annotated_schemas(root)
    assert problems == []
    doc = json.loads(want[root / "schema" / "x.json"])
    status = doc["properties"]["status"]
    assert status["description"] == "One of the status values."
    assert status["enumDescriptions"] == ["The a case.", "The b case."]
    # the same enum list elsewhere takes the same descriptions
    other = doc["properties"]["other"]
    assert other["markdownEnumDescriptions"] == status["markdownEnumDescriptions"]
    assert other["markdownDescription"] == other["description"] == "Plain, from before."
    assert doc["properties"]["description"]["description"] == "A name."
    assert doc["properties"]["enum"]["markdownDescription"] == "No enum here."


def test_check_fails_on_drift_and_passes_after_write(tmp_path: Path) -> None:
    root = _root(
        tmp_path,
        {
            "type": "string",
            "description": "Old words.",
            "markdownDescription": "New `words`.",
        },
    )
    proc = _check(root)
    assert proc.returncode == 1 and "x.json" in proc.stdout
    want, _ = annotated_schemas(root)
    for p, text in want.items():
        p.write_text(text)
    assert _check(root).returncode == 0
    assert json.loads((root / "schema" / "x.json").read_text())["description"] == "New words."


def test_check_fails_on_an_enum_without_descriptions(tmp_path: Path) -> None:
    root = _root(tmp_path, {"type": "string", "enum": ["x", "y"]})
    proc = _check(root)
    assert proc.returncode == 1 and "enum without markdownEnumDescriptions" in proc.stdout
    root2 = _root(
        tmp_path / "two",
        {"enum": ["x", "y"], "markdownEnumDescriptions": ["only one"]},
    )
    assert "1 markdownEnumDescriptions, 2 values" in _check(root2).stdout


def test_check_fails_on_a_backtick_left_in_plain_text(tmp_path: Path) -> None:
    root = _root(tmp_path, {"type": "string", "markdownDescription": "A ``double ` tick``."})
    assert "keeps a backtick" in _check(root).stdout
