"""How a value read from a file is printed for an agent or a terminal: the escaping of the
plan text (``resume``, a host's session-start hook), of every text report, and of what the
hooks say. Pure.

``clean``: one printable line (control characters, line separators and bidi controls as
``\\xNN``/``\\uNNNN``). ``clean_tree``: the same for every string of JSON-like data.
``prose``: a value inside a sentence that may hold code spans: also no backtick, so a
value can never open or close one. ``shell_word``: a value put into a command the agent runs:
``shlex.quote`` as ``commands[].run`` quotes, or, when the value holds a control character or
a backtick, a bash/zsh ``$'...'`` word with those as ``\\xNN`` (it runs as printed and prints
nothing raw).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CONTROL",
    "clean",
    "clean_tree",
    "escape_char",
    "no_backticks",
    "prose",
    "prose_tree",
    "shell_word",
]

# Patterns as text, compiled (and cached) by `re` on first use: each wide character class
# costs about 0.5 ms to compile, and nearly all output is printable (str.isprintable() is
# False for every character below), so a cold command usually compiles none of them.
# C0 (with newline and ESC), DEL, C1, the line/paragraph separators and the bidi controls
# (embeddings, overrides, isolates, marks: U+200E/F, U+202A-U+202E, U+2066-U+2069).
CONTROL = r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069]"


def escape_char(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def clean(text: str) -> str:
    """One printable line: values from untrusted files (keys, paths) must not start a new
    line (a forged `::error` command in a CI log) or carry terminal escape sequences. Lone
    surrogates are escaped too, so printing never fails."""
    if text.isprintable():  # no control character, no lone surrogate
        return text
    text = re.sub(CONTROL, escape_char, text)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def clean_tree(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings) with every string passed through
    :func:`clean`: the data of a text report, escaped before it is formatted, so no value
    taken from a file can start a line, move the cursor or reorder what is shown."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {clean_tree(k): clean_tree(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_tree(v) for v in value]
    return value


def prose(value: object) -> str:
    """``value`` inside a sentence that has code spans: :func:`clean`, and a backtick as
    ``\\x60`` (a value never opens or closes a span)."""
    return no_backticks(clean(str(value)))


def no_backticks(text: str) -> str:
    """``text`` (already cleaned) with each backtick as ``\x60``."""
    return text.replace("`", "\\x60")


def prose_tree(value: Any) -> Any:
    """:func:`clean_tree` with every backtick as ``\x60`` too (:func:`prose`)."""
    if isinstance(value, str):
        return prose(value)
    if isinstance(value, dict):
        return {prose_tree(k): prose_tree(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [prose_tree(v) for v in value]
    return value


_SAFE_WORD = re.compile(r"[\w@%+=:,./-]+", re.ASCII)


def shell_word(value: object) -> str:
    """``value`` as one shell word that prints nothing raw (see the module docstring)."""
    text = str(value)
    if _SAFE_WORD.fullmatch(text):
        return text
    if text.isprintable() and "`" not in text:
        return "'" + text.replace("'", "'\"'\"'") + "'"
    out = []
    for ch in text:
        c = ord(ch)
        if ch in "\\'":
            out.append("\\" + ch)
        elif ch == "`" or not ch.isprintable():
            out.append(f"\\x{c:02x}" if c < 0x80 else "".join(f"\\x{b:02x}" for b in _utf8(ch)))
        else:
            out.append(ch)
    return "$'" + "".join(out) + "'"


def _utf8(ch: str) -> bytes:
    return ch.encode("utf-8", "surrogateescape" if 0xDC80 <= ord(ch) <= 0xDCFF else "replace")
