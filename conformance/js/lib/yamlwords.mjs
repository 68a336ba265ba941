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

/** The reference's first syntax error in `text`, where the `yaml` package found `errors`: a
 * tab it takes and ruamel does not (blockTab) when that comes first, else the package's first
 * error as ruamel words and places it; null: none.
 * @param {import("yaml").YAMLError[]} errors @param {string} text
 * @returns {{words: string, offset: number} | null} */
export function firstSyntaxError(errors, text) {
  const tab = blockTab(text);
  if (tab >= 0 && (!errors.length || tab <= errors[0].pos[0]))
    return { words: "found character '\\t' that cannot start any token", offset: tab };
  return errors.length ? syntaxWords(errors[0], text) : null;
}

/** A syntax error in the reference's (ruamel's) words and at its place (an offset into
 * `text`) where the two can be told from the `yaml` package's error; else the package's.
 * @param {import("yaml").YAMLError} e @param {string} text
 * @returns {{words: string, offset: number}} */
export function syntaxWords(e, text) {
  const offset = e.pos[0];
  const c = text[offset];
  const same = (/** @type {string} */ words) => ({ words, offset });
  if (e.code === "TAB_AS_INDENT" || (c === "\t" && /^Tabs/.test(e.message)))
    return same("found character '\\t' that cannot start any token");
  if (/^Plain value cannot start with (?:reserved|directive indicator) character/.test(e.message))
    return same(`found character ${pyRepr(c)} that cannot start any token`);
  if (e.code === "MULTIPLE_DOCS") return same("but found another document");
  if (/^Missing closing .?quote/.test(e.message)) return same("found unexpected end of stream");
  // `[1, 2` or `{a: 1` left open: ruamel names the token it met instead of `,` or the closing
  // bracket: the stream's end, a bracket (both where the package stops), or the `:` after a
  // plain scalar running on from there (`[a` then `b: c` on the next line)
  const open = /^Flow (?:sequence|map) in block collection must be .* end with an? ([\]}])/.exec(
    e.message,
  );
  if (open) {
    const expected = `expected ',' or '${open[1]}', but got`;
    if (text.slice(offset).trim() === "") return same(`${expected} '<stream end>'`);
    if (c === "]" || c === "}") return same(`${expected} '${c}'`);
    const next = /:(?=[ \t\r\n]|$)|[,[\]{}]/.exec(text.slice(offset));
    if (next && next[0] === ":") return { words: `${expected} ':'`, offset: offset + next.index };
  }
  // `a: b: c` (or a value running on to an indented `k: v`): ruamel stops at the `:` that
  // would start the inner mapping, the package at the value
  if (/^Nested mappings are not allowed in compact mappings/.test(e.message)) {
    const rest = text.slice(offset);
    const quoted = /^(?:"(?:[^"\\]|\\.)*"|'(?:[^']|'')*')/.exec(rest);
    const from = quoted ? quoted[0].length : 0;
    const colon = quoted ? /^[ \t]*:/.exec(rest.slice(from)) : /:(?=[ \t\r\n]|$)/.exec(rest);
    if (colon && !/^[[{]/.test(rest)) {
      const at = offset + from + colon.index + (quoted ? colon[0].length - 1 : 0);
      return { words: "mapping values are not allowed here", offset: at };
    }
  }
  return blockWords(e, text) ?? same(e.message);
}

/** The block-structure errors: what ruamel's parser expected and the token it found instead.
 * @param {import("yaml").YAMLError} e @param {string} text
 * @returns {{words: string, offset: number} | null} */
function blockWords(e, text) {
  const offset = e.pos[0];
  const c = text[offset];
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  const before = text.slice(lineStart, offset).trimEnd();
  // a token where none may stand: a closing bracket, or a scalar after a complete node
  const stray = /^Unexpected flow-(?:seq|map)-end token/.test(e.message);
  if (stray && (c === "]" || c === "}")) {
    // right after `key:` or `- ` a node was due; elsewhere the block should have ended
    const due = before === "" || /(?:^|\s)-$|:$/.test(before);
    const what = due ? "expected the node content" : "expected <block end>";
    return { words: `${what}, but found '${c}'`, offset };
  }
  if (/^Unexpected scalar at node end/.test(e.message))
    return { words: "expected <block end>, but found '<scalar>'", offset };
  // a line indented off its siblings: ruamel meets it at its first character
  const first = offset + (/^[ \t]*/.exec(text.slice(offset))?.[0].length ?? 0);
  const f = text[first];
  const dash = f === "-" && /[ \t\r\n]/.test(text[first + 1] ?? "\n");
  if (
    /^All (?:mapping|sequence) items must start at the same column/.test(e.message) ||
    /^A block sequence may not be used as an implicit map key/.test(e.message)
  ) {
    // a key at the column of the `- ` items just above stays in their block: a bare key (`?`)
    const itsLine = text.lastIndexOf("\n", first - 1) + 1;
    // the last line above with content (blank and comment lines skipped)
    const above = /(?:^|\n)([ \t]*)(\S)[^\n]*\n(?:[ \t]*(?:#[^\n]*)?\n)*$/.exec(
      text.slice(0, itsLine),
    );
    const underItems = above !== null && above[2] === "-" && above[1].length === first - itsLine;
    const start = dash ? "<block sequence start>" : underItems ? "?" : "<block mapping start>";
    return { words: `expected <block end>, but found '${start}'`, offset: first };
  }
  if (/^Implicit keys need to be on a single line/.test(e.message)) {
    // a `- ` item under a mapping at its column; else a key running on to the next line's `:`
    if (dash && first === offset) return { words: "expected <block end>, but found '-'", offset };
    const colon = /:(?=[ \t\r\n]|$)/.exec(text.slice(offset));
    if (colon)
      return { words: "mapping values are not allowed here", offset: offset + colon.index };
  }
  if (/^Implicit map keys need to be followed by map values/.test(e.message)) {
    // ruamel gives up on the key where its line ends
    const end = text.indexOf("\n", offset);
    return { words: "could not find expected ':'", offset: end < 0 ? text.length : end + 1 };
  }
  return null;
}

/** Where the reference's scanner meets a tab between tokens outside a flow collection (ruamel
 * skips only spaces there, so `a:\tb`, `a: b\t` and `a: x\ty` are errors that the `yaml`
 * package, reading YAML 1.2, accepts); tabs inside quoted scalars, comments, flow collections
 * and block scalars' content are no token's business. -1: none.
 * @param {string} text @returns {number} */
export function blockTab(text) {
  let flow = 0;
  /** @type {string | null} */
  let quote = null;
  let scalarIndent = -1; // inside a block scalar: its header line's indentation
  let start = 0;
  while (start < text.length) {
    const nl = text.indexOf("\n", start);
    const end = nl < 0 ? text.length : nl;
    const line = text.slice(start, end);
    const indent = /^ */.exec(line)?.[0].length ?? 0;
    if (scalarIndent >= 0 && quote === null) {
      if (line.trim() === "" || indent > scalarIndent) {
        start = end + 1;
        continue;
      }
      scalarIndent = -1;
    }
    let content = ""; // the line outside comments, for a block scalar's header
    const from = quote === null ? indent : 0;
    for (let i = from; i < line.length; i++) {
      const c = line.charAt(i);
      const prev = i === 0 ? "" : line[i - 1];
      if (quote === '"') {
        if (c === "\\") i++;
        else if (c === '"') quote = null;
        continue;
      }
      if (quote === "'") {
        if (c === "'" && line[i + 1] === "'") i++;
        else if (c === "'") quote = null;
        continue;
      }
      const tokenStart = prev === "" || /[ \t[{,]/.test(prev) || i === indent;
      if (c === "#" && (prev === "" || /[ \t]/.test(prev))) break;
      if (c === "\t" && flow === 0) return start + i;
      if ((c === '"' || c === "'") && tokenStart) quote = c;
      else if ((c === "[" || c === "{") && tokenStart) flow++;
      else if ((c === "]" || c === "}") && flow > 0) flow--;
      content += c;
    }
    if (flow === 0 && quote === null && /(?:^|[ :-])[|>][0-9+-]*[ ]*$/.test(content.trimEnd()))
      scalarIndent = indent;
    start = end + 1;
  }
  return -1;
}
