"""Every To-do of a resume answer is one plain instruction that names only what the answer
prints: a hint that sends an agent to "the files to read" when the answer lists none, or to
a file the answer does not list to read, leaves it guessing (it reads everything, or redoes
work a draft on disk holds). The text answer of every `resume/` conformance case is checked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from session_resume.conformance.adapter import op_resume
from session_resume.conformance.cases import (
    default_suite,
    load_suite,
    materialize,
    run_arguments,
)
from session_resume.rendering.plan_text import plan_text

pytestmark = pytest.mark.slow

CASES = [c for c in load_suite(default_suite(), ["resume/*"])]
# Words that point at a list of files the answer itself must print: the text answer calls
# it `read now`; `briefing.load` is its JSON name, which the text never shows.
LIST_WORDS = (
    "files to read",
    "the files under `read now`",
    "what `read now` lists",
    "briefing.load",
)
# "read X, Y" / "read and continue X" in a hint: each file named must be listed to read
READ = re.compile(r"\bread (?:and continue )?((?:[\w./-]+\.\w+)(?:, [\w./-]+\.\w+)*)")


def _answer(case, tmp: Path) -> str:  # type: ignore[no-untyped-def]
    ws = materialize(case, tmp)
    msg = {
        "dir": str(ws.dir),
        "root": str(ws.root),
        "now": case.now,
        "arguments": run_arguments(case, ws),
    }
    return plan_text(op_resume(msg)["decision"])


def _read_now(text: str) -> list[str]:
    lines = text.splitlines()
    at = next((i for i, ln in enumerate(lines) if ln.startswith("read now:")), None)
    if at is None or lines[at] != "read now:":
        return []
    out = []
    for ln in lines[at + 1 :]:
        if not ln.startswith("  "):
            break
        out.append(ln.strip().split(" (", 1)[0])
    return out


def test_every_resume_case_is_checked() -> None:
    assert len(CASES) >= 90


def problems(text: str) -> list[str]:
    """The hints of a text answer that name a file list, or a file to read, it does not print."""
    listed = _read_now(text)
    out = []
    for hint in [ln.split(". To do: ", 1)[1] for ln in text.splitlines() if ". To do: " in ln]:
        out += [f"{hint!r} points at {w!r}" for w in LIST_WORDS if w in hint and not listed]
        for group in READ.findall(hint):
            out += [f"{hint!r} reads {p}" for p in group.split(", ") if p not in listed]
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hints_name_only_files_the_answer_prints(case, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = _answer(case, tmp_path)
    assert problems(text) == [], text


def test_the_check_refuses_a_hint_naming_files_the_answer_lacks() -> None:
    """The SR703 words an agent could not follow ("redo any work up to X the files to read
    lack") beside "read now: nothing", and a hint reading a file not listed, are refused."""
    head = "action: resume_from_checkpoint, step 2\n"
    old = (
        head + "reason SR703: step 2 is in progress after checkpoint phase_2_waf. To do: first "
        "redo any work up to phase_2_waf the files to read lack (do not record it again)\n"
        "read now: nothing beyond this answer\n"
    )
    assert len(problems(old)) == 1
    unlisted = (
        head + "reason SR703: step 2 is in progress. To do: read and continue a/02-x.md (the "
        "work so far: never start it over); redo nothing\nread now:\n  a/01-y.md\n"
    )
    assert problems(unlisted) == [
        "'read and continue a/02-x.md (the work so far: never start "
        "it over); redo nothing' reads a/02-x.md"
    ]
    listed = unlisted.replace("  a/01-y.md", "  a/02-x.md (partial: continue it)")
    assert problems(listed) == []
