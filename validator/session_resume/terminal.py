"""What the CLI prints to a person: colour (``--color auto|always|never``, ``NO_COLOR``,
``FORCE_COLOR``) and a progress display for long work that never appears in pipes or CI logs."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

# ruff's and check-jsonschema's convention: NO_COLOR (any non-empty value) turns colour off,
# FORCE_COLOR turns it on even in a pipe; --color always|never overrides both.
_RED, _YELLOW, _CYAN, _BOLD, _RESET = "\x1b[31m", "\x1b[33m", "\x1b[36m", "\x1b[1m", "\x1b[0m"
_FINDING = re.compile(r"^(?P<loc>\S.*?): (?P<code>SR\d{3}) (?P<sev>error|warning|info):")
_SUMMARY = re.compile(r"^\d+ file\(s\) checked: .* - (?P<verdict>\w+)$")


def use_color(choice: str, stream: TextIO) -> bool:
    """Whether to colour what goes to ``stream``."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return stream.isatty() and os.environ.get("TERM") != "dumb"


def colorize(text: str) -> str:
    """Colour the compiler-style lines of the text reporter: the code by severity, the
    summary's verdict. Only escape sequences of our own are added (the text is already
    cleaned of the ones in file content)."""
    out = []
    for line in text.split("\n"):
        m = _FINDING.match(line)
        if m:
            colour = {"error": _RED, "warning": _YELLOW}.get(m.group("sev"), _CYAN)
            line = (
                f"{_BOLD}{m.group('loc')}{_RESET}: {colour}{m.group('code')} {m.group('sev')}"
                f"{_RESET}:{line[m.end() :]}"
            )
        else:
            s = _SUMMARY.match(line)
            if s:
                colour = _RED if s.group("verdict") != "valid" else "\x1b[32m"
                line = f"{line[: s.start('verdict')]}{colour}{s.group('verdict')}{_RESET}"
        out.append(line)
    return "\n".join(out)


Progress = Callable[[int, int], None]


def progress(label: str, *, enabled: bool = True) -> tuple[Progress | None, Callable[[], None]]:
    """A progress callback ``(done, total)`` drawing on stderr, and a function that closes it.
    Shown only on a terminal, never in CI, and only after two seconds (tqdm's ``delay``), so
    short runs print nothing extra."""
    if not enabled or os.environ.get("CI") or not sys.stderr.isatty():
        return None, lambda: None
    # lazy: tqdm only when a terminal may show a bar
    from tqdm import tqdm

    bar: Any = None
    unit = "case" if label == "conformance" else "file"

    def update(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, desc=label, unit=unit, delay=_delay(), leave=False)
        bar.n = done
        bar.refresh()

    def close() -> None:
        if bar is not None:
            bar.close()

    return update, close


def _delay() -> float:
    """Seconds before the bar appears: 2, or SESSION_RESUME_PROGRESS_DELAY (tests use 0)."""
    try:
        return max(0.0, float(os.environ.get("SESSION_RESUME_PROGRESS_DELAY", "2")))
    except ValueError:
        return 2.0
