"""The agent hosts that run `session-resume hook`: one record each, the one place a host is
recognised from its input and its answers are shaped (docs/spec.md §13).

Each host documents which configuration files it reads, the fields of its hook input and the
shape of its output; the links are in ``schema/hooks/<host>-output.json``:

- **VS Code** reads ``.github/hooks/*.json`` and ``.claude/settings.json``; its input has the
  camelCase ``hookEventName`` and ``sessionId``; its answers sit in ``hookSpecificOutput``,
  a stop's block too.
- **Claude Code** reads ``.claude/settings.json``; its input is snake_case
  (``hook_event_name``, ``session_id``, ``transcript_path``) with no ``timestamp``; a stop's
  block is ``decision`` at the top level.
- **GitHub Copilot CLI** reads ``.github/hooks/*.json`` and also ``.claude/settings.json``
  ("all hook entries from all sources are run"); configured with camelCase event names its
  input is camelCase (``sessionId``, ``toolName``, ``transcriptPath``), with PascalCase names
  (what ``hooks install`` writes) snake_case with a ``timestamp``; its answers are flat.

Every host runs every file it reads, so a host that reads two of the files ``hooks install``
writes would run two commands for one event. The command of the file a host calls *home*
answers; the other stays silent while the home file configures that event
(:func:`silent_for`), so each event gets one answer and at most one worklog note.
"""

from __future__ import annotations

from pathlib import Path

from session_resume.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

GITHUB_FILE = Path(".github") / "hooks" / "session-resume.json"
CLAUDE_FILE = Path(".claude") / "settings.json"


@record(frozen=True)
class Host:
    """One agent host: what it reads, how its input is recognised, how it wants answers."""

    name: str  # the --host value
    title: str
    reads: tuple[Path, ...]  # the configuration files whose hooks it runs
    home: Path  # the file whose command answers it (the others stay silent)
    signs: tuple[str, ...]  # input fields only this host sends (any one is enough)
    nested: bool  # answers inside hookSpecificOutput (else at the top level)
    nested_block: bool  # a stop's block inside hookSpecificOutput too

    def context(self, event_name: str, text: str) -> dict[str, Any]:
        """``text`` added to the agent's context for the event ``event_name``."""
        if not self.nested:
            return {"additionalContext": text}
        return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}

    def deny(self, reason: str) -> dict[str, Any]:
        """A tool call refused, with the reason the agent reads."""
        body = {"permissionDecision": "deny", "permissionDecisionReason": reason}
        if not self.nested:
            return body
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **body}}

    def block(self, reason: str) -> dict[str, Any]:
        """The end of the turn refused once, with the reason the agent reads next."""
        body = {"decision": "block", "reason": reason}
        if not self.nested_block:
            return body
        return {"hookSpecificOutput": {"hookEventName": "Stop", **body}}


VSCODE = Host(
    "vscode",
    "VS Code",
    reads=(GITHUB_FILE, CLAUDE_FILE),
    home=GITHUB_FILE,
    signs=("hookEventName",),
    nested=True,
    nested_block=True,
)
COPILOT = Host(
    "copilot",
    "GitHub Copilot CLI",
    reads=(GITHUB_FILE, CLAUDE_FILE),
    home=GITHUB_FILE,
    # camelCase input, or the snake_case input of a PascalCase configuration (its timestamp)
    signs=("sessionId", "toolName", "toolArgs", "toolResult", "transcriptPath", "timestamp"),
    nested=False,
    nested_block=False,
)
CLAUDE = Host(
    "claude",
    "Claude Code",
    reads=(CLAUDE_FILE,),
    home=CLAUDE_FILE,
    signs=("hook_event_name", "session_id", "transcript_path", "permission_mode"),
    nested=True,
    nested_block=False,
)
# In the order they are recognised: VS Code's input also has a timestamp and Copilot's
# snake_case input a hook_event_name, so the more particular host comes first.
HOSTS = (VSCODE, COPILOT, CLAUDE)
BY_NAME = {h.name: h for h in HOSTS}


def detect(doc: dict[str, Any], given: str | None) -> Host:
    """The host that sent ``doc``: the first whose sign is in it; else the one ``--host``
    names; else Claude Code."""
    for host in HOSTS:
        if any(k in doc for k in host.signs):
            return host
    return BY_NAME.get(given or "", CLAUDE)


def configured_in(given: str | None) -> Path | None:
    """The file a command carrying ``--host given`` was configured in (what ``hooks install``
    writes: ``--host claude`` in .claude/settings.json, nothing in the .github file); None
    for a name that is no host's."""
    host = BY_NAME.get(given or "")
    return None if host is None else host.home


def silent_for(host: Host, given: str | None) -> bool:
    """Whether a command configured for another host's file may have to stay silent for
    ``host``'s input (then the home file decides: :func:`hook_config.configures`)."""
    source = configured_in(given)
    return source is not None and source != host.home and source in host.reads
