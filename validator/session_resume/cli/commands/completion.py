"""`session-resume completion bash|zsh|fish`: the shell's completion script (argcomplete)."""

from __future__ import annotations

import argparse
import sys

from session_resume.cli.parser import Command

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
