"""Safe YAML loading for workflow definitions and config: no tags, no aliases, no duplicates.

Aliases are refused outright rather than budgeted: definitions never need them, and refusing
them makes the billion-laughs family impossible. Errors come back as coded diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .codes import diag
from .diagnostics import Diagnostic

MAX_YAML_BYTES = 1 << 20


@dataclass
class YamlResult:
    value: Any = None
    diagnostics: list[Diagnostic] = field(default_factory=list)


def _mark(exc: Any) -> tuple[int | None, int | None]:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is None:
        return None, None
    return mark.line + 1, mark.column + 1


def load_yaml_text(text: str, *, file: str = "") -> YamlResult:
    from ruamel.yaml import YAML
    from ruamel.yaml.constructor import DuplicateKeyError
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.events import AliasEvent

    out = YamlResult()
    if len(text.encode("utf-8", "surrogatepass")) > MAX_YAML_BYTES:
        out.diagnostics.append(
            diag("SR400", f"the file is larger than {MAX_YAML_BYTES} bytes", file=file)
        )
        return out
    yaml = YAML(typ="safe", pure=True)
    yaml.allow_duplicate_keys = False
    try:
        for event in yaml.parse(text):
            anchor = getattr(event, "anchor", None)
            if isinstance(event, AliasEvent) or anchor:
                line = event.start_mark.line + 1 if event.start_mark else None
                col = event.start_mark.column + 1 if event.start_mark else None
                out.diagnostics.append(
                    diag(
                        "SR402",
                        "anchors and aliases are not allowed "
                        f"(found {'alias' if isinstance(event, AliasEvent) else 'anchor'} "
                        f"{anchor!r})",
                        file=file,
                        line=line,
                        column=col,
                    )
                )
                return out
        out.value = yaml.load(text)
    except DuplicateKeyError as exc:
        line, col = _mark(exc)
        out.diagnostics.append(
            diag("SR401", f"duplicate key: {exc.problem}", file=file, line=line, column=col)
        )
    except MarkedYAMLError as exc:
        line, col = _mark(exc)
        out.diagnostics.append(
            diag("SR400", f"invalid YAML: {exc.problem or exc}", file=file, line=line, column=col)
        )
    except (YAMLError, ValueError, TypeError, RecursionError) as exc:
        out.diagnostics.append(diag("SR400", f"invalid YAML: {exc}", file=file))
    return out


def yaml_position(text: str, path: list[str | int]) -> tuple[int | None, int | None]:
    """Line/column of the node at ``path`` (round-trip parse; only used for failing files)."""
    from ruamel.yaml import YAML

    try:
        node: Any = YAML(typ="rt").load(text)
        line = col = None
        for part in path:
            lc = getattr(node, "lc", None)
            if lc is None:
                break
            if isinstance(node, dict):
                line, col = lc.key(part)
            else:
                line, col = lc.item(int(part))
            node = node[part]
        return (line + 1, col + 1) if line is not None and col is not None else (None, None)
    except Exception:  # noqa: BLE001 - a position is a nicety; never fail for want of one
        return None, None
