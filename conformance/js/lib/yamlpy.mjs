// What the YAML reader (yaml.mjs) adds to the `yaml` package to read as the reference's
// core/yamlsafe.py reads: flow brackets nesting deeper than MAX_YAML_DEPTH are refused before
// the parser sees them (`_flow_deeper_than`: a 1 MB `[[[…` is a parser's recursion), an anchor
// or a tag is placed where the node's properties start (the reference's event marks), and a
// float is kept apart from an integer (Python's `2.0` is no `int`).

export const MAX_YAML_DEPTH = 64;
export const DEEP = `the document nests deeper than ${MAX_YAML_DEPTH} levels; refused before it is parsed`;
// A quoted scalar (it may start only where a token starts), a comment, or a flow bracket.
const DEPTH_TOKENS =
  /(?:(?<=[\s[{,:?-])|^|(?<=\n))(?:'(?:[^']|'')*'|"(?:[^"\\]|\\[^\n])*")|(?:(?<=\s)|^|(?<=\n))#[^\n]*|[[\]{}]/g;

/** Whether flow brackets outside quoted scalars and comments nest deeper than `limit` (the
 * reference's `_flow_deeper_than`). @param {string} text @param {number} limit */
export function flowDeeperThan(text, limit) {
  let opened = 0;
  for (const c of text) if (c === "[" || c === "{") opened++;
  if (opened <= limit) return false;
  let depth = 0;
  DEPTH_TOKENS.lastIndex = 0;
  for (let m = DEPTH_TOKENS.exec(text); m !== null; m = DEPTH_TOKENS.exec(text)) {
    const c = m[0];
    if (c === "[" || c === "{") {
      depth += 1;
      if (depth > limit) return true;
    } else if (c === "]" || c === "}") depth = Math.max(depth - 1, 0);
  }
  return false;
}

/** Where a node's properties (`&anchor`, `!tag`) start: the earlier of the two, found back
 * from the node's own start. @param {string} text @param {{anchor?: string | null, tag?: string | null}} node @param {number} offset */
export function propStart(text, node, offset) {
  let start = offset;
  if (node.anchor) {
    const at = text.lastIndexOf(`&${node.anchor}`, offset);
    if (at >= 0) start = Math.min(start, at);
  }
  if (node.tag) {
    let at = text.lastIndexOf("!", offset);
    while (at > 0 && !/[\s,[\]{}]/.test(text[at - 1])) at -= 1;
    if (at >= 0) start = Math.min(start, at);
  }
  return start;
}

/** A float the document wrote (`2.0`, `1e3`, `.inf`), kept apart from an integer of the same
 * value (the configuration's integers are Python's `int`, never a float). */
export class YamlFloat {
  /** @param {number} value */
  constructor(value) {
    this.value = value;
  }
}
const PY_INT = /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$/;

/** A scalar's value, a float the document wrote as a YamlFloat.
 * @param {{value: unknown, type?: string | null, source?: string}} node @returns {any} */
export function scalarOf(node) {
  if (typeof node.value === "number" && node.type === "PLAIN" && !PY_INT.test(node.source ?? ""))
    return new YamlFloat(node.value);
  return node.value;
}
