"""The flow-nesting pre-check of YAML files (core/yamlsafe.py) answers as a full scan of the
text does: it may stop at the first bracket past the limit, and skip the scan when the text
opens no more brackets than the limit, but never changes the verdict."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from session_resume.core.yamlsafe import _DEPTH_TOKENS, MAX_YAML_DEPTH, _flow_deeper_than


def _deepest(text: str) -> int:
    """The whole scan: the deepest flow nesting outside quoted scalars and comments."""
    depth = deepest = 0
    for m in _DEPTH_TOKENS.finditer(text):
        c = m.group()
        if c in ("[", "{"):
            depth += 1
            deepest = max(deepest, depth)
        elif c in ("]", "}"):
            depth = max(depth - 1, 0)
    return deepest


_pieces = st.sampled_from(
    ["[", "]", "{", "}", " ", "\n", "a: ", "- ", ",", "'[['", '"{\\"["', " # [[[\n", "x"]
)


@settings(max_examples=500, deadline=None)
@given(text=st.lists(_pieces, max_size=60).map("".join), limit=st.integers(0, 8))
def test_the_early_answer_is_the_full_scans(text: str, limit: int) -> None:
    assert _flow_deeper_than(text, limit) == (_deepest(text) > limit)


def test_brackets_in_quotes_and_comments_do_not_count() -> None:
    deep_in_quotes = "a: '" + "[" * 100 + "'\nb: # " + "{" * 100 + "\n"
    assert not _flow_deeper_than(deep_in_quotes, MAX_YAML_DEPTH)
    assert _flow_deeper_than("a: " + "[" * 65 + "]" * 65, MAX_YAML_DEPTH)
    assert not _flow_deeper_than("a: " + "[" * 64 + "]" * 64, MAX_YAML_DEPTH)
