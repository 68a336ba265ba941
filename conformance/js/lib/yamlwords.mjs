// What the reference's safe YAML loader (core/yamlsafe.py, on ruamel.yaml) says around the
// parser, for lib/yaml.mjs: its nesting limit (a flow pre-scan, then at the collection), where
// its events start (a node's properties), and its words for the syntax errors the two
// parsers place alike. Not a parser: the `yaml` package parses.

import { pyRepr } from "./findings.mjs";

export const MAX_YAML_DEPTH = 64; // the reference's: a real workflow nests under 10
export const TOO_DEEP = `the document nests deeper than ${MAX_YAML_DEPTH} levels; refused before it is parsed`;
// the reference's _DEPTH_TOKENS: a quoted scalar (only where a token starts), a comment, a bracket
const DEPTH_TOKENS =
  /(?:(?<=[\s[{,:?-])|^)(?:'(?:[^']|'')*'|"(?:[^"\\]|\\.)*")|(?:(?<=\s)|^)#[^\n]*|[[\]{}]/gm;

/** The reference's _flow_deeper_than: flow brackets outside quoted scalars and comments nest
 * deeper than `limit`. @param {string} text @param {number} limit */
export function flowDeeperThan(text, limit) {
  let opened = 0;
  for (const c of text) if (c === "[" || c === "{") opened++;
  if (opened <= limit) return false;
  let depth = 0;
  for (const m of text.matchAll(DEPTH_TOKENS)) {
    const c = m[0];
    if (c === "[" || c === "{") {
      depth++;
      if (depth > limit) return true;
    } else if (c === "]" || c === "}") depth = Math.max(depth - 1, 0);
  }
  return false;
}

/** Where a node's property (`&name`, or a tag starting `!`) starts: the last one before its
 * content. @param {string} text @param {number} offset @param {string} mark */
export function propertyStart(text, offset, mark) {
  let i = text.lastIndexOf(mark, offset);
  if (i < 0) return offset;
  while (mark === "!" && i > 0 && !/\s/.test(text[i - 1])) i--;
  return i;
}

/** A syntax error in the reference's (ruamel's) words where the two parsers agree on the
 * place; else the `yaml` package's. @param {import("yaml").YAMLError} e @param {string} text */
export function syntaxWords(e, text) {
  const c = text[e.pos[0]];
  if (e.code === "TAB_AS_INDENT" || (c === "\t" && /^Tabs/.test(e.message)))
    return "found character '\\t' that cannot start any token";
  if (/^Plain value cannot start with reserved character/.test(e.message))
    return `found character ${pyRepr(c)} that cannot start any token`;
  if (e.code === "MULTIPLE_DOCS") return "but found another document";
  if (/^Missing closing .?quote/.test(e.message)) return "found unexpected end of stream";
  return e.message;
}
