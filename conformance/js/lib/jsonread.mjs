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
 */

class SyntaxFault extends Error {}

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
      }
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
    stack.push(kind === "array" ? { kind, value: [], ...frame } : { kind, value: {}, ...frame });
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
  return { value: result, duplicates, duplicateAt, nonFinite, maxDepth, loneSurrogate };
}

/**
 * Classify and parse state-file bytes (spec §2.1 order). Returns
 * {value (null unless usable), codes, text}. `requireObject`: the top level must be an object.
 * @param {Uint8Array} buf @param {{requireObject?: boolean, maxDepth?: number}} [opts]
 * @returns {{value: JsonObject | null, codes: string[], text: string | null,
 *   duplicateAt?: {key: string, offset: number, pointer: string}[]}}
 */
export function readJsonBytes(buf, { requireObject = true, maxDepth = MAX_DEPTH } = {}) {
  /** @type {string[]} */
  const codes = [];
  if (buf.length === 0) return { value: null, codes: ["SR110"], text: null };
  if (wideEncoding(buf)) return { value: null, codes: ["SR114"], text: null };
  let data = buf;
  if (data.length >= 3 && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) {
    codes.push("SR113");
    data = data.subarray(3);
  }
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(data);
  } catch {
    return { value: null, codes: [...codes, "SR115"], text: null };
  }
  if ([...text].every((ch) => ch === " " || ch === "\t" || ch === "\n" || ch === "\r")) {
    return { value: null, codes: [...codes, "SR111"], text };
  }
  let parsed;
  try {
    parsed = parseText(text);
  } catch (err) {
    if (err instanceof SyntaxFault) return { value: null, codes: [...codes, "SR120"], text };
    throw err;
  }
  // maxDepth: the longest path (keys and indexes) from the top-level value to any value.
  if (parsed.maxDepth > maxDepth) {
    return { value: null, codes: [...codes, "SR123"], text };
  }
  /** @type {string[]} */
  const bad = [];
  if (parsed.duplicates) bad.push("SR121");
  if (parsed.nonFinite) bad.push("SR122");
  if (bad.length)
    return { value: null, codes: [...codes, ...bad], text, duplicateAt: parsed.duplicateAt };
  // A \u escape of half a surrogate pair: not Unicode text, so it cannot be checked or written
  // back faithfully (SR116; raw surrogate bytes are already invalid UTF-8, SR115).
  if (parsed.loneSurrogate) return { value: null, codes: [...codes, "SR116"], text };
  const v = parsed.value;
  if (requireObject && (v === null || typeof v !== "object" || Array.isArray(v))) {
    return { value: null, codes: [...codes, "SR124"], text };
  }
  return { value: v, codes, text };
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
