"""The README and the other pages a newcomer reads first render as written: parsed by a
CommonMark parser (markdown-it-py, as GitHub's renderer parses CommonMark), every heading the
page writes is a heading, and every fenced code block is typed (an info string) and closed
where the page closes it. A bare fence once opened a code block that swallowed four
paragraphs and a heading of the README; the tests that run the README's blocks find them by
text, so they could not notice."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

REPO = Path(__file__).resolve().parents[1]
PAGES = [
    "README.md",
    "CONTRIBUTING.md",
    "conformance/js/README.md",
    "docs/conformance.md",
    "docs/architecture.md",
    "docs/config.md",
]
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
HEADING = re.compile(r"^ {0,3}(#{1,6}) +(.+?)(?: +#+)?\s*$")


def written(text: str) -> tuple[list[str], list[tuple[int, int, str]], list[int]]:
    """What the page writes, read line by line as its author meant it: the headings outside
    code blocks, each code block (first line, closing line, info string), and the lines of
    fences that open nothing because they are bare. A fence opens only with an info string
    (every block is typed) and closes at the next bare fence of its kind."""
    headings: list[str] = []
    blocks: list[tuple[int, int, str]] = []
    bare: list[int] = []
    opened: tuple[int, str, str] | None = None
    for n, line in enumerate(text.splitlines()):
        m = FENCE.match(line)
        if opened is not None:
            closes = m and m.group(1)[0] == opened[1][0] and len(m.group(1)) >= len(opened[1])
            if closes and m and not m.group(2).strip():
                blocks.append((opened[0], n, opened[2]))
                opened = None
            continue
        if m and m.group(2).strip():
            opened = (n, m.group(1), m.group(2).strip())
            continue
        if m:
            bare.append(n + 1)
            continue
        h = HEADING.match(line)
        if h:
            headings.append(f"{h.group(1)} {h.group(2)}")
    assert opened is None, f"the fence on line {opened[0] + 1} is never closed"
    return headings, blocks, bare


def parsed(text: str) -> tuple[list[str], list[tuple[int, int, str]]]:
    """The headings and fenced blocks as a CommonMark parser (with GFM tables) reads them."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    headings = [
        f"{t.markup} {tokens[i + 1].content}"
        for i, t in enumerate(tokens)
        if t.type == "heading_open"
    ]
    blocks = [
        (t.map[0], t.map[1] - 1, t.info.strip()) for t in tokens if t.type == "fence" and t.map
    ]
    return headings, blocks


@pytest.mark.parametrize("page", PAGES)
def test_page_renders_as_written(page: str) -> None:
    text = (REPO / page).read_text(encoding="utf-8")
    mine, my_blocks, bare = written(text)
    assert not bare, f"{page}: a fence without an info string on lines {bare}"
    theirs, their_blocks = parsed(text)
    assert theirs == mine, f"{page}: the headings a CommonMark parser finds differ"
    assert their_blocks == my_blocks, f"{page}: the code blocks a CommonMark parser finds differ"


def test_the_check_catches_a_bare_fence() -> None:
    """The defect it is for: a bare fence between two sections hides the second heading."""
    text = "# A\n\ntext\n\n```\n\n## B\n\n```sh\necho hi\n```\n"
    mine, _, bare = written(text)
    assert bare == [5] and mine == ["# A", "## B"]
    assert parsed(text)[0] == ["# A"]


def test_the_readme_has_its_sections() -> None:
    headings, _ = parsed((REPO / "README.md").read_text(encoding="utf-8"))
    for h in ("## Quick start", "### An agent's life cycle", "## Set up", "### Test tiers"):
        assert h in headings, headings
