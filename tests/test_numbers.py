"""Numbers as the protocol reads them (docs/spec.md §2.1): an integral number below 10^16 is the
integer (`7.0` is 7), any other number with a fraction or an exponent a float; the store's
second read of bytes it already knows (storage/known_ok.py) gives the same values."""

from __future__ import annotations

import json
from pathlib import Path

from session_resume.core.jsonread import parse_json_bytes
from session_resume.storage import store

from conftest import apex_state


def _types(value: object) -> list[tuple[str, object]]:
    assert isinstance(value, dict)
    return [(type(v).__name__, v) for v in value.values()]


def test_an_integral_number_below_1e16_is_the_integer() -> None:
    parsed = parse_json_bytes(
        b'{"a": 7.0, "b": 7e0, "c": -0.0, "d": 7, "e": 2.5, "f": 1e16, "g": 9007199254740993.0}'
    )
    assert parsed.diagnostics == []
    assert _types(parsed.value) == [
        ("int", 7),
        ("int", 7),
        ("int", 0),
        ("int", 7),
        ("float", 2.5),
        ("float", 1e16),
        ("int", 9007199254740992),  # the double nearest, an integer below 10^16
    ]


def test_known_bytes_read_again_give_the_same_integers(session_dir: Path) -> None:
    doc = apex_state()
    doc["x-metric"] = 0
    text = json.dumps(doc, indent=2).replace('"x-metric": 0', '"x-metric": 3.0')
    (session_dir / store.STATE).write_text(text)
    first, second = store.load(session_dir), store.load(session_dir)  # the second: known_ok
    assert first.status == second.status == "ok"
    for loaded in (first, second):
        assert loaded.document is not None
        assert type(loaded.document["x-metric"]) is int
        assert type(loaded.document["revision"]) is int
