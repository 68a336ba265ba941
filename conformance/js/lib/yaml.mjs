// Safe YAML for workflow definitions (spec §8), on the npm `yaml` package: YAML 1.2, the core
// schema, and nothing more. It refuses what the Python reference refuses, with the same codes
// (validator/session_resume/yamlsafe.py): any explicit tag is SR400, any anchor or alias is
// SR402 (refused outright, so the billion-laughs family cannot happen), a duplicate key is
// SR401, more than one document or a syntax error is SR400. `<<` is an ordinary key (no merge).

import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument } from "yaml";
import { pyRepr } from "./findings.mjs";
import {
  firstSyntaxError,
  flowDeeperThan,
  MAX_YAML_DEPTH,
  propertyStart,
  TOO_DEEP,
} from "./yamlwords.mjs";
import { scalarOf, setMember, YamlFloat } from "./yamlpy.mjs";

/** @typedef {import("yaml").ParsedNode} Node @typedef {import("./types.js").Json} Json */

export class YamlError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {number | null} [line]
   * @param {number | null} [column]
   */
  constructor(code, message, line = null, column = null) {
    super(message);
    this.code = code;
    this.line = line;
    this.column = column;
  }
}

/**
 * The identity of a key as the Python reference compares keys after construction: numbers
 * and booleans by numeric value (`true` and `1` collide, `1` and `"1"` do not), strings by
 * text, null by itself. NaN equals nothing, so it never collides.
 * @param {unknown} key
 */
function keyIdentity(key) {
  if (typeof key === "boolean") return `n:${Number(key)}`;
  if (typeof key === "number") return Number.isNaN(key) ? null : `n:${key}`;
  if (typeof key === "string") return `s:${key}`;
  if (key === null) return "null";
  return `o:${String(key)}`;
}

/**
 * Parse `text` into plain values, or throw a YamlError. `floats`: a float is a YamlFloat.
 * @param {string} text @param {{floats?: boolean}} [opts]
 * @returns {unknown}
 */
export function parseYaml(text, { floats = false } = {}) {
  // the reference refuses a flow nesting past the limit before it parses (its parser is
  // quadratic in it): no place
  if (flowDeeperThan(text, MAX_YAML_DEPTH)) throw new YamlError("SR400", TOO_DEEP);
  const lines = new LineCounter();
  const doc = parseDocument(text, {
    version: "1.2",
    schema: "core",
    merge: false,
    uniqueKeys: false, // compared below, the way the reference compares them
    lineCounter: lines,
    prettyErrors: false,
    strict: true,
  });
  /** @param {number} offset */
  const at = (offset) => {
    const p = lines.linePos(offset);
    return [p.line, p.col];
  };
  // The reference reads events in order and stops at the first refusal: an anchor, alias,
  // tag or a collection too deep before a syntax error is reported, not the syntax error.
  const syntax = firstSyntaxError(doc.errors, text);
  const firstError = syntax ? syntax.offset : Infinity;
  /** @type {[Node | null | undefined, number][]} each node and its collections' depth */
  const stack = [[doc.contents, 0]];
  /** @typedef {{offset: number, error: YamlError}} Refusal */
  /** @type {Refusal | null} */
  let refusal = null;
  const note = (/** @type {number} */ offset, /** @type {YamlError} */ error) => {
    if (offset < firstError && (refusal === null || offset < refusal.offset))
      refusal = { offset, error };
  };
  while (stack.length) {
    const [node, above] = /** @type {[Node | null | undefined, number]} */ (stack.pop());
    if (node === null || node === undefined) continue;
    const offset = node.range ? node.range[0] : 0;
    if (isAlias(node)) {
      note(
        offset,
        new YamlError(
          "SR402",
          `anchors and aliases are not allowed (found alias ${pyRepr(node.source)})`,
          ...at(offset),
        ),
      );
      continue;
    }
    // the reference's event starts at the node's properties: its anchor, else its tag
    if (node.anchor)
      note(
        offset,
        new YamlError(
          "SR402",
          `anchors and aliases are not allowed (found anchor ${pyRepr(node.anchor)})`,
          ...at(propertyStart(text, offset, `&${node.anchor}`)),
        ),
      );
    if (node.tag)
      note(
        offset,
        new YamlError(
          "SR400",
          `tags are not allowed (found ${pyRepr(node.tag)})`,
          ...at(propertyStart(text, offset, "!")),
        ),
      );
    const depth = isMap(node) || isSeq(node) ? above + 1 : above;
    if (depth > MAX_YAML_DEPTH && depth > above)
      note(offset, new YamlError("SR400", TOO_DEEP, ...at(offset)));
    if (isMap(node))
      for (const pair of node.items) stack.push([pair.key, depth], [pair.value, depth]);
    else if (isSeq(node))
      stack.push(...node.items.map((n) => /** @type {[Node, number]} */ ([n, depth])));
  }
  const first = /** @type {Refusal | null} */ (refusal); // (set by note(), in the loop)
  if (first !== null) throw first.error;
  if (syntax) {
    // the parser's own recursion gave out: nested too deep, as the reference says it
    if (syntax.words.includes("Maximum call stack size exceeded"))
      throw new YamlError("SR400", TOO_DEEP);
    throw new YamlError("SR400", `invalid YAML: ${syntax.words}`, ...at(syntax.offset));
  }
  return construct(doc.contents, at, floats);
}

/**
 * Nodes to plain values, iteratively (no recursion limit to hit on deep nesting).
 * @param {Node | null | undefined} root
 * @param {(offset: number) => number[]} at
 * @param {boolean} floats
 */
function construct(root, at, floats) {
  /** @param {Node | null | undefined} node @returns {Json} the value built from parsed input */
  const make = (node) => {
    if (node === null || node === undefined) return null; // an empty document or value
    if (isMap(node)) return {};
    if (isSeq(node)) return [];
    if (isScalar(node)) return floats ? scalarOf(node) : node.value;
    throw new YamlError("SR400", "invalid YAML: an unexpected node");
  };
  const result = make(root);
  /** @type {[Node | null | undefined, Json][]} */
  const stack = [[root, result]];
  while (stack.length) {
    const [node, target] = /** @type {[Node | null | undefined, Json]} */ (stack.pop());
    if (isSeq(node)) {
      for (const child of node.items) {
        const value = make(child);
        target.push(value);
        if (value !== null && typeof value === "object") stack.push([child, value]);
      }
    } else if (isMap(node)) {
      const seen = new Set();
      for (const pair of node.items) {
        const keyNode = pair.key;
        // a key is told float from int even in a workflow: `1e3:` is the reference's '1000.0'
        const made = isScalar(keyNode) ? scalarOf(keyNode) : make(keyNode);
        const key = made instanceof YamlFloat ? made.value : made;
        if (key !== null && typeof key === "object") {
          // the reference's constructor raises it with no place
          throw new YamlError("SR400", "invalid YAML: a mapping key must be a scalar");
        }
        const id = keyIdentity(key);
        if (id !== null && seen.has(id)) {
          throw new YamlError(
            "SR401",
            `duplicate key ${pyRepr(key)}`,
            ...at(keyNode ? keyNode.range[0] : 0),
          );
        }
        seen.add(id);
        const value = make(pair.value);
        // A plain object's keys are strings: `1:` and `"1":` (two keys to the reference) end
        // up as one property, the later one; the workflow schema gives either the same verdict.
        setMember(target, made, value);
        if (value !== null && typeof value === "object") stack.push([pair.value, value]);
      }
    }
  }
  return result;
}
