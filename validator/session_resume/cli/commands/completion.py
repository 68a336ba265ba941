"""`session-resume completion bash|zsh|fish`: the shell's completion script (argcomplete)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from session_resume.cli.parser import Command
from session_resume.services.errors import ServiceError
from session_resume.storage.discovery import STATE_FILE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


MAX_STATE_BYTES = 16 * 1024 * 1024  # a completion reads no more than the readers' limit

SHELLS = ("bash", "zsh", "fish")


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("shell", choices=SHELLS, metavar="SHELL", help="bash, zsh or fish")
    p.set_defaults(func=run)


COMMANDS = (
    Command(
        "completion",
        order=110,
        help="print the shell completion script (bash, zsh, fish)",
        description='Print the completion script for SHELL. bash: `eval "$(session-resume '
        'completion bash)"` in ~/.bashrc; zsh: the same in ~/.zshrc; fish: '
        "`session-resume completion fish > ~/.config/fish/completions/session-resume.fish`.",
        arguments=_arguments,
    ),
)


def run(args: argparse.Namespace) -> int:
    # lazy: argcomplete only for this command and when a shell asks for completions
    from argcomplete.shell_integration import shellcode

    sys.stdout.write(shellcode(["session-resume"], shell=args.shell))
    return 0


# --- completers: what `--project <TAB>` and a step or checkpoint complete to ----------------
# (argcomplete calls them only when a shell asks; each reads the sessions on disk and never
# fails: a completion that cannot be read offers nothing)


def _root_and_config(parsed_args: argparse.Namespace) -> tuple[Any, Any]:
    # lazy: the configuration's reader only when a shell asks for a completion
    from session_resume.cli.commands.common import config_for, root_of

    cfg = config_for(getattr(parsed_args, "root", None))
    return root_of(getattr(parsed_args, "root", None), cfg), cfg


def project_names(prefix: str, parsed_args: argparse.Namespace, **_: Any) -> list[str]:
    """The projects with a session under the session root (a directory holding a state)."""
    try:
        root, cfg = _root_and_config(parsed_args)
        base = root / cfg.session_root
        names = sorted(
            e.name
            for e in os.scandir(base)
            if e.is_dir(follow_symlinks=False) and os.path.lexists(os.path.join(e.path, STATE_FILE))
        )
    except (OSError, ServiceError):
        return []
    return [n for n in names if n.startswith(prefix)]


def _state(parsed_args: argparse.Namespace) -> dict[str, Any] | None:
    """The state of the session the command line names so far (--project, DIR, --session-dir)."""
    try:
        root, cfg = _root_and_config(parsed_args)
        project = getattr(parsed_args, "project", None)
        given = getattr(parsed_args, "session_dir", None) or getattr(parsed_args, "dir", None)
        if project:
            d = root / cfg.session_root / project
        elif given:
            d = Path(given) if os.path.isabs(given) else root / given
        else:
            return None
        with open(d / STATE_FILE, "rb") as f:
            data = f.read(MAX_STATE_BYTES + 1)
        if len(data) > MAX_STATE_BYTES:
            return None
        doc = json.loads(data)
    except (OSError, ValueError, RecursionError, ServiceError):
        return None
    return doc if isinstance(doc, dict) else None


def step_keys(prefix: str, parsed_args: argparse.Namespace, **_: Any) -> list[str]:
    """The step keys of the named session's state."""
    steps = (_state(parsed_args) or {}).get("steps")
    keys = list(steps) if isinstance(steps, dict) else []
    return [k for k in keys if k.startswith(prefix)]


def checkpoint_ids(prefix: str, parsed_args: argparse.Namespace, **_: Any) -> list[str]:
    """The checkpoints of the step given, from the named session's workflow."""
    # lazy: the workflow loader only when a shell asks for a checkpoint
    from session_resume.core.workflow import DEFAULT_WORKFLOW, WorkflowError, load_workflow

    doc = _state(parsed_args) or {}
    own = doc.get("workflow")
    name: str = own if isinstance(own, str) else DEFAULT_WORKFLOW
    try:
        step = load_workflow(name).step(str(getattr(parsed_args, "step", "")))
    except WorkflowError:
        return []
    ids = [c.id for c in step.checkpoints] if step is not None else []
    return [i for i in ids if i.startswith(prefix)]


def attach(parser: argparse.ArgumentParser) -> None:
    """Give every ``--project``, STEP and SUB_STEP argument of ``parser`` and its subcommands
    its completer (argcomplete reads an action's ``completer``)."""
    completers = {"project": project_names, "step": step_keys, "sub_step": checkpoint_ids}
    stack = [parser]
    while stack:
        p = stack.pop()
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                stack += list(a.choices.values())
            elif a.dest in completers and (a.option_strings in ([], ["--project"])):
                a.completer = completers[a.dest]  # type: ignore[attr-defined]
