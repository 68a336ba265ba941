"""The text reporter's escaping skips its regular expressions for printable text (issue 19:
each wide character class costs about 0.5 ms to compile on every cold start). The fast path
must answer exactly as the patterns do, for any text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_resume.reporters import text
from session_resume.services.leases import NOT_TEXT

# every kind of character the escaping cares about, and ordinary ones around them
CHARS = st.one_of(
    st.characters(min_codepoint=0, max_codepoint=0x2FF),
    st.sampled_from(
        list("\t\n\r:\x1b\x85\u00a0\u200e\u200f\u2028\u2029\u202a\u202e\u2066\u2069\u3000")
    ),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),  # lone surrogates
    st.characters(),
)
TEXTS = st.text(alphabet=CHARS, max_size=40)


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def _clean_by_pattern(s: str) -> str:
    s = re.sub(text.CONTROL, _escape, s)
    return s.encode("utf-8", "backslashreplace").decode("utf-8")


def _clean_lines_by_pattern(s: str) -> str:
    s = re.sub(text.LINE_CONTROL, _escape, s)
    s = re.sub(text.WORKFLOW_COMMAND, lambda m: m.group(1) + "\\x3a", s, flags=re.MULTILINE)
    return s.encode("utf-8", "backslashreplace").decode("utf-8")


@settings(max_examples=600)
@given(s=TEXTS)
def test_clean_answers_as_its_pattern(s: str) -> None:
    assert text.clean(s) == _clean_by_pattern(s)


@settings(max_examples=600)
@given(s=TEXTS)
def test_clean_lines_answers_as_its_patterns(s: str) -> None:
    assert text.clean_lines(s) == _clean_lines_by_pattern(s)


@settings(max_examples=600)
@given(s=TEXTS)
def test_an_owner_is_refused_exactly_when_the_pattern_finds_a_control(s: str) -> None:
    from session_resume.services.errors import ServiceError
    from session_resume.services.leases import check_owner

    try:
        check_owner(s, file="x")
        refused = False
    except ServiceError:
        refused = True
    assert refused == bool(re.search(NOT_TEXT, s))


def test_printable_output_compiles_no_wide_pattern(monkeypatch: pytest.MonkeyPatch) -> None:
    used: list[str] = []

    class Spy:
        """`re` as the reporter sees it, recording the patterns it substitutes with."""

        def __getattr__(self, name: str) -> object:
            return getattr(re, name)

        def sub(self, pattern: str, *args: object, **kwargs: object) -> str:
            used.append(pattern)
            return re.sub(pattern, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(text, "re", Spy())
    line = "agent-output/p/00-session-state.json: valid"
    assert text.clean(line) == line
    assert text.clean_lines(line + "\n") == line + "\n"
    # only the cheap workflow-command pattern (the line holds a colon) was used
    assert used == [text.WORKFLOW_COMMAND]
