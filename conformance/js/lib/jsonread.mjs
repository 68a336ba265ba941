// Strict JSON reading for session-resume (spec §2.1; the twin of core/jsonread.py): bytes in,
// a value or codes out.
// Written from the spec, independently of the Python reader: an explicit-stack parser (no
// recursion, so 10,000 nested arrays cannot overflow the JS stack), which records duplicate
// keys (with their offsets), NaN/Infinity tokens, lone surrogates and the deepest path instead
// of failing on them.
//
// Why not JSON.parse or a library: JSON.parse keeps the last of two duplicate keys without a
// word, cannot say where the duplicate is, and recurses (a deep file throws RangeError); the
// protocol must report a duplicate key as SR121 with its place (the state would otherwise mean
// one thing to one reader and another to the next). No JSON library on npm reports duplicates
// with positions without also accepting what the protocol refuses.

import { grouped, pointerJoin, strRepr } from "./findings.mjs";
import { lineCol, locate } from "./locate.mjs";

export const MAX_DEPTH = 64;
const CORRUPT = new Set([
  "SR110",
  "SR111",
  "SR114",
  "SR115",
  "SR116",
  "SR120",
  "SR121",
  "SR122",
  "SR123",
  "SR124",
]);

/**
 * @typedef {import("./types.js").Json} Json
 * @typedef {import("./types.js").JsonObject} JsonObject
 * @typedef {import("./types.js").Found} Found
 */

class SyntaxFault extends Error {}

/** Each parsed object's keys in the order of the text (JavaScript lists integer-like keys
 * first; the reference's findings follow the text). @type {WeakMap<object, string[]>} */
const KEY_ORDER = new WeakMap();

/** The keys of `obj` in the order its text gave them (when this reader parsed it and no key
 * was added or removed since), else Object.keys. @param {object} obj @returns {string[]} */
export function keysOf(obj) {
  const order = KEY_ORDER.get(obj);
  const keys = Object.keys(obj);
  // the same keys (one deleted and another added since keeps the count): else JS's order
  return order && order.length === keys.length && order.every((k) => Object.hasOwn(obj, k))
    ? order
    : keys;
}

/** Give `obj` the key order `keys` (its own keys, in the order a writer of the same document
 * in Python would have them), for keysOf. @param {object} obj @param {string[]} keys */
export function setKeyOrder(obj, keys) {
  KEY_ORDER.set(obj, keys);
}

/** Whether `codes` hold one that makes a file corrupt. @param {string[]} codes */
export function isCorrupt(codes) {
  return codes.some((c) => CORRUPT.has(c));
}

/** Detect UTF-16/UTF-32 by BOM or by NUL bytes among the first octets (RFC 4627 §3).
 * @param {Uint8Array} buf */
function wideEncoding(buf) {
  const b = buf.subarray(0, 4);
  if (
    b.length >= 4 &&
    ((b[0] === 0xff && b[1] === 0xfe && b[2] === 0 && b[3] === 0) ||
      (b[0] === 0 && b[1] === 0 && b[2] === 0xfe && b[3] === 0xff))
  )
    return "UTF-32";
  if (b.length >= 2 && ((b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0xfe && b[1] === 0xff)))
    return "UTF-16";
  if (b.length >= 2 && (b[0] === 0 || b[1] === 0)) return "UTF-16 or UTF-32";
  return null;
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

/**
 * Parse JSON text. Returns {value, duplicates, nonFinite, maxDepth}; throws SyntaxFault.
 * Objects keep insertion order for string keys (JS orders integer-like keys first; nothing in
 * the protocol depends on key order).
 * @param {string} text
 */
export function parseText(text) {
  let i = 0;
  const n = text.length;
  let duplicates = 0;
  /** @type {{key: string, offset: number, pointer: string}[]} */
  const duplicateAt = [];
  let loneSurrogate = false;
  let keyOffset = 0;
  let nonFinite = 0;
  let maxDepth = 0;
  /** The duplicate keys of each object, in the order they are met. @type {Map<object, string[]>} */
  const dupObjects = new Map();

  const ws = () => {
    while (i < n && WS.has(text.charCodeAt(i))) i++;
  };
  /** @param {string} why @returns {never} */
  const fail = (why) => {
    throw new SyntaxFault(`${why} at offset ${i}`);
  };

  function str() {
    // text[i] === '"'
    i++;
    let out = "";
    let start = i;
    for (;;) {
      if (i >= n) fail("unterminated string");
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(start, i);
        i++;
        if (!loneSurrogate && !out.isWellFormed()) loneSurrogate = true;
        return out;
      }
      if (c < 0x20) fail("control character in string");
      if (c === 0x5c) {
        out += text.slice(start, i);
        const e = text[i + 1];
        /** @type {Record<string, string>} */
        const simple = {
          '"': '"',
          "\\": "\\",
          "/": "/",
          b: "\b",
          f: "\f",
          n: "\n",
          r: "\r",
          t: "\t",
        };
        if (e in simple) {
          out += simple[e];
          i += 2;
        } else if (e === "u") {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("bad \\u escape");
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
        } else fail("bad escape");
        start = i;
        continue;
      }
      i++;
    }
  }

  const NUM = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

  function scalar() {
    const c = text[i];
    if (c === '"') return str();
    for (const [word, value] of /** @type {[string, boolean | null][]} */ ([
      ["true", true],
      ["false", false],
      ["null", null],
    ])) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return value;
      }
    }
    for (const [word, value] of /** @type {[string, number][]} */ ([
      ["NaN", NaN],
      ["Infinity", Infinity],
      ["-Infinity", -Infinity],
    ])) {
      if (text.startsWith(word, i)) {
        i += word.length;
        nonFinite++;
        return value;
      }
    }
    NUM.lastIndex = i;
    const m = NUM.exec(text);
    if (!m || m[0] === "" || m[0] === "-") return fail("unexpected character");
    i += m[0].length;
    const v = Number(m[0]);
    if (!Number.isFinite(v)) nonFinite++; // 1e999 overflows to infinity
    return v;
  }

  /** An open container; `key`: the key read last (an object's), its offset `keyOffset`.
   * @typedef {{keys: Set<string>, key: string | undefined, keyOffset: number}
   *   & ({kind: "array", value: Json[]} | {kind: "object", value: JsonObject})} Frame */
  // Explicit stack of open containers: {kind, value, key?, keys?}
  /** @type {Frame[]} */
  const stack = [];
  /** @type {Json} */
  let result;
  let haveResult = false;

  /** @param {Json} v */
  function put(v) {
    // A value put into the top container sits stack.length keys/indexes below the top level.
    if (stack.length > maxDepth) maxDepth = stack.length;
    if (stack.length === 0) {
      result = v;
      haveResult = true;
      return;
    }
    const top = stack[stack.length - 1];
    if (top.kind === "array") top.value.push(v);
    else {
      const key = /** @type {string} */ (top.key); // set by key() before every value
      if (top.keys.has(key)) {
        duplicates++;
        duplicateAt.push({ key, offset: top.keyOffset, pointer: pointerOf(key) });
        const list = dupObjects.get(top.value);
        if (list) list.push(key);
        else dupObjects.set(top.value, [key]);
      }
      if (!top.keys.has(key)) KEY_ORDER.get(top.value)?.push(key);
      top.keys.add(key);
      Object.defineProperty(top.value, key, {
        value: v,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }

  /** The JSON pointer (RFC 6901) of `key` in the innermost open object. @param {string} key */
  function pointerOf(key) {
    const parts = stack
      .slice(0, -1)
      .map((f) => (f.kind === "array" ? String(f.value.length) : String(f.key)));
    return [...parts, key].map((p) => `/${p.replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
  }

  /** @param {"array" | "object"} kind */
  function open(kind) {
    // depth of the values inside this container = number of open containers
    const frame = { keys: new Set(), key: undefined, keyOffset: 0 };
    if (kind === "array") stack.push({ kind, value: [], ...frame });
    else {
      /** @type {JsonObject} */
      const value = {};
      KEY_ORDER.set(value, []);
      stack.push({ kind, value, ...frame });
    }
  }

  /** @returns {State} */
  function value() {
    ws();
    if (i >= n) fail("unexpected end");
    const c = text[i];
    if (c === "{") {
      i++;
      open("object");
      return beginObject();
    }
    if (c === "[") {
      i++;
      open("array");
      return beginArray();
    }
    put(scalar());
    return "after";
  }

  /** @typedef {"value" | "key" | "after" | "end"} State */
  // The parser is a loop over states instead of recursion.
  /** @type {State} */
  let state = "value";
  /** @returns {State} */
  function beginObject() {
    ws();
    if (text[i] === "}") {
      i++;
      return close();
    }
    return "key";
  }
  /** @returns {State} */
  function beginArray() {
    ws();
    if (text[i] === "]") {
      i++;
      return close();
    }
    return "value";
  }
  /** @returns {State} */
  function close() {
    const done = /** @type {Frame} */ (stack.pop()); // a container is open when it closes
    put(done.value);
    return "after";
  }
  /** @returns {State} */
  function afterValue() {
    if (stack.length === 0) return "end";
    ws();
    const top = stack[stack.length - 1];
    const c = text[i];
    if (c === ",") {
      i++;
      return top.kind === "array" ? "value" : "key";
    }
    if (top.kind === "array" && c === "]") {
      i++;
      return close();
    }
    if (top.kind === "object" && c === "}") {
      i++;
      return close();
    }
    return fail("expected , or a closing bracket");
  }
  /** @returns {State} */
  function key() {
    ws();
    if (text[i] !== '"') fail("expected a string key");
    keyOffset = i;
    const k = str();
    ws();
    if (text[i] !== ":") fail("expected :");
    i++;
    stack[stack.length - 1].key = k;
    stack[stack.length - 1].keyOffset = keyOffset;
    return "value";
  }

  while (state !== "end") {
    if (state === "value") state = value();
    else if (state === "key") state = key();
    else state = afterValue();
  }
  ws();
  if (i !== n || !haveResult) fail("extra data after the value");
  return {
    value: result,
    duplicates,
    duplicateAt,
    dupObjects,
    nonFinite,
    maxDepth,
    loneSurrogate,
  };
}

/** Findings per document given a line and column, and listed per kind (the reference's). */
export const MAX_LOCATED = 50;
export const MAX_LISTED = 100;
/** The nesting at which the reference's recursive reader gives up (about Python's recursion
 * limit, less the frames below the parse). */
const PY_RECURSION = 980;

/** The offset of the first byte that does not start (or continue) a valid UTF-8 sequence,
 * as Python's decoder reports it (the start of the bad sequence), or -1.
 * @param {Uint8Array} b */
export function firstInvalidUtf8(b) {
  const cont = (/** @type {number} */ k) => k < b.length && b[k] >= 0x80 && b[k] <= 0xbf;
  const within = (/** @type {number} */ k, /** @type {number} */ lo, /** @type {number} */ hi) =>
    k < b.length && b[k] >= lo && b[k] <= hi;
  let i = 0;
  while (i < b.length) {
    const c = b[i];
    if (c < 0x80) i++;
    else if (c >= 0xc2 && c <= 0xdf) {
      if (!cont(i + 1)) return i;
      i += 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      const [lo, hi] = c === 0xe0 ? [0xa0, 0xbf] : c === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
      if (!within(i + 1, lo, hi) || !cont(i + 2)) return i;
      i += 3;
    } else if (c >= 0xf0 && c <= 0xf4) {
      const [lo, hi] = c === 0xf0 ? [0x90, 0xbf] : c === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
      if (!within(i + 1, lo, hi) || !cont(i + 2) || !cont(i + 3)) return i;
      i += 4;
    } else return i;
  }
  return -1;
}

/** @param {unknown} v */
function jsonType(v) {
  if (Array.isArray(v)) return "an array";
  if (typeof v === "string") return "a string";
  if (typeof v === "boolean") return "a boolean";
  if (v === null) return "null";
  return "a number";
}

/** @param {string} code @param {string} message @param {Partial<Found>} [more] @returns {Found} */
const finding = (code, message, more = {}) => ({ code, message, pointer: "", ...more });

/** The duplicate keys' and the non-finite numbers' places, walked as the reference walks the
 * tree (`_scan_tree`: a stack, the last member first). @param {Json} root
 * @param {Map<object, string[]>} dupObjects */
function scanTree(root, dupObjects) {
  /** @type {(string | number)[][]} */
  const nonFinite = [];
  /** @type {[(string | number)[], string][]} */
  const dups = [];
  /** @type {[Json, (string | number)[]][]} */
  const stack = [[root, []]];
  while (stack.length) {
    const [node, path] = /** @type {[Json, (string | number)[]]} */ (stack.pop());
    if (Array.isArray(node)) node.forEach((v, i) => void stack.push([v, [...path, i]]));
    else if (node !== null && typeof node === "object") {
      for (const k of dupObjects.get(node) ?? []) dups.push([path, k]);
      for (const k of keysOf(node)) stack.push([node[k], [...path, k]]);
    } else if (typeof node === "number" && !Number.isFinite(node)) nonFinite.push(path);
  }
  const key = (/** @type {(string | number)[]} */ p) => p.map(String);
  nonFinite.sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    for (let i = 0; i < Math.min(x.length, y.length); i++)
      if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
    return x.length - y.length;
  });
  return { nonFinite, dups };
}

/**
 * Classify and parse state-file bytes (spec §2.1 order). Returns
 * {value (null unless usable), codes, text, found}: `found` the findings with the reference's
 * words and places (core/jsonread.py), `codes` theirs. `requireObject`: the top level must be
 * an object.
 * @param {Uint8Array} buf @param {{requireObject?: boolean, maxDepth?: number}} [opts]
 * @returns {{value: JsonObject | null, codes: string[], text: string | null, found: Found[],
 *   duplicateAt?: {key: string, offset: number, pointer: string}[]}}
 */
export function readJsonBytes(buf, { requireObject = true, maxDepth = MAX_DEPTH } = {}) {
  const res = readFound(buf, requireObject, maxDepth);
  return { ...res, codes: res.found.map((f) => f.code) };
}

/** @param {Uint8Array} buf @param {boolean} requireObject @param {number} maxDepth
 * @returns {{value: JsonObject | null, text: string | null, found: Found[],
 *   duplicateAt?: {key: string, offset: number, pointer: string}[]}} */
function readFound(buf, requireObject, maxDepth) {
  /** @type {Found[]} */
  const found = [];
  const fail = (/** @type {string | null} */ text) => ({ value: null, text, found });
  if (buf.length === 0) {
    found.push(finding("SR110", "the file is empty (0 bytes)"));
    return fail(null);
  }
  const wide = wideEncoding(buf);
  if (wide) {
    const msg = `the file is encoded as ${wide}, not UTF-8`;
    return { value: null, text: null, found: [finding("SR114", msg, { line: 1, column: 1 })] };
  }
  let data = buf;
  if (data.length >= 3 && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) {
    found.push(
      finding("SR113", "the file starts with a UTF-8 byte order mark", { line: 1, column: 1 }),
    );
    data = data.subarray(3);
  }
  const bad = firstInvalidUtf8(data);
  if (bad !== -1) {
    const good = new TextDecoder("utf-8", { ignoreBOM: true }).decode(data.subarray(0, bad));
    const [line, column] = lineCol(good, good.length);
    const byte = data[bad].toString(16).padStart(2, "0");
    const msg = `invalid UTF-8 byte 0x${byte} at byte offset ${bad}`;
    found.push(finding("SR115", msg, { line, column }));
    return fail(null);
  }
  const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(data);
  if ([...text].every((ch) => ch === " " || ch === "\t" || ch === "\n" || ch === "\r")) {
    found.push(finding("SR111", "the file holds only whitespace"));
    return fail(text);
  }
  let parsed;
  try {
    parsed = parseText(text);
  } catch (err) {
    if (!(err instanceof SyntaxFault)) throw err;
    const why = pythonSyntaxError(text);
    if (why === null) {
      found.push(finding("SR120", "invalid JSON"));
    } else {
      const [line, column] = lineCol(text, why.index);
      found.push(finding("SR120", `invalid JSON: ${why.message}`, { line, column }));
    }
    return fail(text);
  }
  // maxDepth: the longest path (keys and indexes) from the top-level value to any value.
  if (parsed.maxDepth > maxDepth) {
    // the reference's reader recurses: a document this deep ends its parse before the depth
    // is counted (Python's recursion limit, 1,000 frames)
    const msg =
      parsed.maxDepth >= PY_RECURSION
        ? "the document nests too deeply to parse"
        : `the document nests deeper than ${maxDepth} levels`;
    found.push(finding("SR123", msg));
    return fail(text);
  }
  if (parsed.duplicates || parsed.nonFinite) {
    const { nonFinite, dups } = scanTree(parsed.value, parsed.dupObjects);
    dups.slice(0, MAX_LISTED).forEach(([parts, key], n) => {
      const at = n < MAX_LOCATED ? locate(text, [...parts.map(String), key], 2) : null;
      const [line, column] = at === null ? [null, null] : lineCol(text, at);
      found.push(
        finding("SR121", `duplicate key ${strRepr(key)}`, {
          pointer: pointerJoin([...parts, key]),
          line,
          column,
        }),
      );
    });
    countRest(found, "SR121", dups.length, "duplicate keys");
    nonFinite.slice(0, MAX_LISTED).forEach((parts, n) => {
      const at = n < MAX_LOCATED ? locate(text, parts.map(String)) : null;
      const [line, column] = at === null ? [null, null] : lineCol(text, at);
      found.push(
        finding(
          "SR122",
          "NaN, Infinity or a number beyond the double range is not a usable JSON number",
          { pointer: pointerJoin(parts), line, column },
        ),
      );
    });
    countRest(found, "SR122", nonFinite.length, "non-finite numbers");
    // each duplicate's own offset, in the order of the text (the published API's)
    return parsed.duplicates ? { ...fail(text), duplicateAt: parsed.duplicateAt } : fail(text);
  }
  // A \u escape of half a surrogate pair: not Unicode text, so it cannot be checked or written
  // back faithfully (SR116; raw surrogate bytes are already invalid UTF-8, SR115).
  if (parsed.loneSurrogate) {
    found.push(
      finding(
        "SR116",
        "a \\u escape encodes a lone surrogate (half of a UTF-16 pair), which is " +
          "not a Unicode character",
      ),
    );
    return fail(text);
  }
  const v = parsed.value;
  if (requireObject && (v === null || typeof v !== "object" || Array.isArray(v))) {
    const msg = `the top-level value is ${jsonType(v)}, not an object`;
    found.push(finding("SR124", msg, { line: 1, column: 1 }));
    return fail(text);
  }
  return { value: v, text, found };
}

/** One finding for all those past MAX_LISTED. @param {Found[]} out @param {string} code
 * @param {number} n @param {string} what */
function countRest(out, code, n, what) {
  if (n > MAX_LISTED)
    out.push(
      finding(
        code,
        `${grouped(n - MAX_LISTED)} more ${what} (only the first ${MAX_LISTED} are listed)`,
      ),
    );
}

/** Lenient parse of one worklog line (any JSON value; NaN and duplicates tolerated).
 * @param {Uint8Array} buf @returns {Json} */
export function parseLine(buf) {
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(buf);
  } catch {
    return undefined;
  }
  try {
    return parseText(text).value;
  } catch {
    return undefined;
  }
}

// --- a syntax error in the reference's words -------------------------------------------------

const PY_WS = new Set([" ", "\t", "\n", "\r"]);
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);

class PyJsonError extends Error {
  /** @param {string} msg @param {number} pos */
  constructor(msg, pos) {
    super(msg);
    this.pos = pos;
  }
}

/**
 * What the reference's reader (CPython's json scanner, in C) says of text that is not JSON:
 * its message and the (UTF-16) index it names, or null when it would parse the text. The
 * scanner's own order, ported: the first error it meets is the one reported.
 * @param {string} text @returns {{message: string, index: number} | null}
 */
export function pythonSyntaxError(text) {
  const n = text.length;
  let i = 0;
  const ws = () => {
    while (i < n && PY_WS.has(text[i])) i++;
  };
  /** @param {string} msg @param {number} pos @returns {never} */
  const raise = (msg, pos) => {
    throw new PyJsonError(msg, pos);
  };
  const string = () => {
    const begin = i;
    i++;
    for (;;) {
      if (i >= n) raise("Unterminated string starting at", begin);
      const c = text[i];
      if (c === '"') {
        i++;
        return;
      }
      if (c === "\\") {
        if (i + 1 >= n) raise("Unterminated string starting at", begin);
        const e = text[i + 1];
        if (e === "u") {
          const u = i + 1;
          if (u + 5 >= n) raise("Invalid \\uXXXX escape", u);
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(u + 1, u + 5)))
            raise("Invalid \\uXXXX escape", u);
          i = u + 5;
        } else if (ESCAPES.has(e)) {
          i += 2;
        } else raise("Invalid \\escape", i);
        continue;
      }
      if (c.charCodeAt(0) <= 0x1f) raise("Invalid control character at", i);
      i++;
    }
  };
  const NUMBER = /-?(?:[1-9][0-9]*|0)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?/y;
  const scalar = () => {
    const c = text[i];
    if (c === '"') return string();
    for (const word of ["null", "true", "false", "NaN", "Infinity", "-Infinity"]) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return;
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (m === null) raise("Expecting value", i);
    i += m[0].length;
  };
  /** @type {("object" | "array")[]} */
  const stack = [];
  // json.loads refuses a text that still starts with a byte order mark
  if (text.startsWith("\ufeff"))
    return { message: "Unexpected UTF-8 BOM (decode using utf-8-sig)", index: 0 };
  try {
    ws();
    // a value starts at i; then what follows it in the container on top of the stack
    for (;;) {
      if (i >= n) raise("Expecting value", i);
      if (text[i] === "{") {
        i++;
        ws();
        if (i < n && text[i] === "}") {
          i++;
        } else {
          stack.push("object");
          if (i >= n || text[i] !== '"')
            raise("Expecting property name enclosed in double quotes", i);
          string();
          ws();
          if (i >= n || text[i] !== ":") raise("Expecting ':' delimiter", i);
          i++;
          ws();
          continue;
        }
      } else if (text[i] === "[") {
        i++;
        ws();
        if (i < n && text[i] === "]") {
          i++;
        } else {
          stack.push("array");
          continue;
        }
      } else scalar();
      // after a value: close containers, or go on to the next member
      for (;;) {
        if (!stack.length) {
          ws();
          if (i !== n) raise("Extra data", i);
          return null;
        }
        ws();
        const top = stack[stack.length - 1];
        if (top === "array") {
          if (i < n && text[i] === "]") {
            i++;
            stack.pop();
            continue;
          }
          if (i >= n || text[i] !== ",") raise("Expecting ',' delimiter", i);
          i++;
          ws();
          break;
        }
        if (i < n && text[i] === "}") {
          i++;
          stack.pop();
          continue;
        }
        if (i >= n || text[i] !== ",") raise("Expecting ',' delimiter", i);
        i++;
        ws();
        if (i >= n || text[i] !== '"')
          raise("Expecting property name enclosed in double quotes", i);
        string();
        ws();
        if (i >= n || text[i] !== ":") raise("Expecting ':' delimiter", i);
        i++;
        ws();
        break;
      }
    }
  } catch (err) {
    if (err instanceof PyJsonError) return { message: err.message, index: err.pos };
    throw err;
  }
}
