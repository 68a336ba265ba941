"""Safe YAML loading for workflow definitions and config: no tags, no aliases, no duplicates.

Aliases are refused outright rather than budgeted: definitions never need them, and refusing
them makes the billion-laughs family impossible. Errors come back as coded diagnostics.
"""

from __future__ import annotations

import re

from session_resume.core.codes import diag
from session_resume.core.diagnostics import Diagnostic
from session_resume.records import field, record

# lazy imports: ruamel.yaml (~25 ms) only when a YAML file is read

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_YAML_BYTES = 1 << 20


@record
class YamlResult:
    value: Any = None
    diagnostics: list[Diagnostic] = field(default_factory=list)


def _mark(exc: Any) -> tuple[int | None, int | None]:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is None:
        return None, None
    return mark.line + 1, mark.column + 1


def load_yaml_text(text: str, *, file: str = "") -> YamlResult:
    """Parse ``text`` as YAML 1.2 with the core schema, and nothing more: no tags, anchors,
    aliases or merge keys (``<<`` is an ordinary key), no timestamps (a date is a string),
    no duplicate keys. Never raises for bad input."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent

    out = YamlResult()
    if len(text.encode("utf-8", "surrogatepass")) > MAX_YAML_BYTES:
        out.diagnostics.append(
            diag("SR400", f"the file is larger than {MAX_YAML_BYTES} bytes", file=file)
        )
        return out
    if _flow_deeper_than(text, MAX_YAML_DEPTH):
        out.diagnostics.append(_too_deep(file, None, None))
        return out
    yaml = YAML(typ="safe", pure=True)
    depth = 0
    try:
        for event in yaml.parse(text):
            anchor = getattr(event, "anchor", None)
            line, col = _event_mark(event)
            if isinstance(event, CollectionStartEvent):
                depth += 1
                if depth > MAX_YAML_DEPTH:  # block style ("- - - x"): refused as it streams
                    out.diagnostics.append(_too_deep(file, line, col))
                    return out
            elif isinstance(event, CollectionEndEvent):
                depth -= 1
            if isinstance(event, AliasEvent) or anchor:
                kind = "alias" if isinstance(event, AliasEvent) else "anchor"
                out.diagnostics.append(
                    diag(
                        "SR402",
                        f"anchors and aliases are not allowed (found {kind} {anchor!r})",
                        file=file,
                        line=line,
                        column=col,
                    )
                )
                return out
            if getattr(event, "tag", None) is not None:
                out.diagnostics.append(
                    diag(
                        "SR400",
                        f"tags are not allowed (found {event.tag!r})",
                        file=file,
                        line=line,
                        column=col,
                    )
                )
                return out
        node = yaml.compose(text)
        out.value = None if node is None else _construct(node, file)
    except _DuplicateKey as exc:
        out.diagnostics.append(exc.diagnostic)
    except MarkedYAMLError as exc:
        line, col = _mark(exc)
        out.diagnostics.append(
            diag("SR400", f"invalid YAML: {exc.problem or exc}", file=file, line=line, column=col)
        )
    except (YAMLError, ValueError, TypeError, RecursionError) as exc:
        out.diagnostics.append(diag("SR400", f"invalid YAML: {exc}", file=file))
    return out


MAX_YAML_DEPTH = 64  # nesting of a workflow or configuration: a real one uses under 10
# A quoted scalar (it may start only where a token starts), a comment, or a flow bracket.
_DEPTH_TOKENS = re.compile(
    r"""(?:(?<=[\s\[{,:?-])|^)(?:'(?:[^']|'')*'|"(?:[^"\\]|\\.)*")|(?:(?<=\s)|^)#[^\n]*|[\[\]{}]""",
    re.MULTILINE,
)


def _flow_deeper_than(text: str, limit: int) -> bool:
    """Whether flow brackets outside quoted scalars and comments nest deeper than ``limit``:
    one linear pass, so ``[[[[...]]]]`` 20,000 deep is refused before the parser (which is
    quadratic in it) sees it. The pass stops at the first bracket past the limit (a 1 MB
    ``[[[...`` took 0.6 s to scan to its end), and is not needed when the text opens no more
    brackets than the limit (in quotes and comments too)."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for m in _DEPTH_TOKENS.finditer(text):
        c = m.group()
        if c in ("[", "{"):
            depth += 1
            if depth > limit:
                return True
        elif c in ("]", "}"):
            depth = max(depth - 1, 0)
    return False


def _too_deep(file: str, line: int | None, col: int | None) -> Diagnostic:
    return diag(
        "SR400",
        f"the document nests deeper than {MAX_YAML_DEPTH} levels; refused before it is parsed",
        file=file,
        line=line,
        column=col,
    )


def _event_mark(event: Any) -> tuple[int | None, int | None]:
    mark = getattr(event, "start_mark", None)
    return (mark.line + 1, mark.column + 1) if mark is not None else (None, None)


class _DuplicateKey(Exception):
    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


# YAML 1.2.2 §10.3.2, the core schema: how a plain scalar resolves.
_NULL = re.compile(r"^(?:~|null|Null|NULL|)\Z")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT10 = re.compile(r"^[-+]?[0-9]+\Z")
_INT8 = re.compile(r"^0o[0-7]+\Z")
_INT16 = re.compile(r"^0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_INF = re.compile(r"^[-+]?\.(?:inf|Inf|INF)\Z")
_NAN = re.compile(r"^\.(?:nan|NaN|NAN)\Z")


def _scalar(node: Any) -> Any:
    value: str = node.value
    if node.style is not None:  # quoted or block: always a string
        return value
    if _NULL.match(value):
        return None
    if value in _BOOL:
        return _BOOL[value]
    if _INT10.match(value):
        return int(value)
    if _INT8.match(value):
        return int(value[2:], 8)
    if _INT16.match(value):
        return int(value[2:], 16)
    if _FLOAT.match(value):
        return float(value)
    if _INF.match(value):
        return float("-inf") if value.startswith("-") else float("inf")
    if _NAN.match(value):
        return float("nan")
    return value


def _construct(root: Any, file: str) -> Any:
    """Node graph → Python values, iteratively (no recursion limit to hit)."""
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    def make(node: Any) -> Any:
        if isinstance(node, MappingNode):
            return {}
        if isinstance(node, SequenceNode):
            return []
        return _scalar(node)

    result = make(root)
    stack = [(root, result)]
    while stack:
        node, target = stack.pop()
        if isinstance(node, SequenceNode):
            for child in node.value:
                value = make(child)
                target.append(value)
                if isinstance(value, (dict, list)):
                    stack.append((child, value))
        elif isinstance(node, MappingNode):
            for key_node, value_node in node.value:
                key = make(key_node)
                if isinstance(key, (dict, list)):
                    raise ValueError("a mapping key must be a scalar")
                if key in target:
                    mark = key_node.start_mark
                    raise _DuplicateKey(
                        diag(
                            "SR401",
                            f"duplicate key {key!r}",
                            file=file,
                            line=mark.line + 1,
                            column=mark.column + 1,
                        )
                    )
                value = make(value_node)
                target[key] = value
                if isinstance(value, (dict, list)):
                    stack.append((value_node, value))
    return result


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
