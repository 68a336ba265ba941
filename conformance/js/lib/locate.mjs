// A JSON pointer mapped back to a line and column of the source text: the reference's
// core/locate.py ported one to one (the same answer for every pointer, so both CLIs print the
// same places). Iterative; only a failing file (or a format that prints places) pays for it.
// The text is one the strict reader parsed, so it is valid JSON.
//
// Why not jsonc-parser (whose findNodeAtLocation does this): its answer for a duplicate key is
// the last occurrence and its offsets count UTF-16 code units; the reference counts code
// points and names the first value of a key (or the n-th key). A port of 90 lines gives the
// reference's answer by construction, with no new dependency.

const WS = /[ \t\n\r]*/y;
const SCALAR_END = /[^,\]}\s]*/y;
const STRUCT = /["{}[\]]/g;

/** 1-based line and column (in code points) of `text[index]` (a UTF-16 index).
 * @param {string} text @param {number} index @returns {[number, number]} */
export function lineCol(text, index) {
  const before = text.slice(0, index);
  const start = before.lastIndexOf("\n") + 1;
  let line = 1;
  for (let i = before.indexOf("\n"); i !== -1; i = before.indexOf("\n", i + 1)) line++;
  let col = 1;
  for (const _ of before.slice(start)) col++;
  return [line, col];
}

/** @param {string} text @param {number} i */
function skipWs(text, i) {
  WS.lastIndex = i;
  WS.exec(text);
  return WS.lastIndex;
}

/** Past the string whose opening quote is at `i - 1`: [its value, the index after it].
 * @param {string} text @param {number} i @returns {[string, number]} */
function scanString(text, i) {
  let j = i;
  let escaped = false;
  for (;;) {
    const c = text[j];
    if (c === undefined) throw new RangeError("unterminated string");
    if (c === '"') break;
    if (c === "\\") {
      escaped = true;
      j += 2;
    } else j++;
  }
  const raw = text.slice(i, j);
  return [escaped ? JSON.parse(`"${raw}"`) : raw, j + 1];
}

/** The index just past the value starting at `i`. @param {string} text @param {number} i */
function skipValue(text, i) {
  const c = text[i];
  if (c === '"') return scanString(text, i + 1)[1];
  if (c !== "{" && c !== "[") {
    SCALAR_END.lastIndex = i;
    SCALAR_END.exec(text);
    return SCALAR_END.lastIndex > i ? SCALAR_END.lastIndex : i + 1;
  }
  let depth = 0;
  let at = i;
  for (;;) {
    STRUCT.lastIndex = at;
    const m = STRUCT.exec(text);
    if (m === null) return text.length;
    at = m.index;
    const ch = text[at];
    if (ch === '"') {
      at = scanString(text, at + 1)[1];
      continue;
    }
    depth += ch === "{" || ch === "[" ? 1 : -1;
    at++;
    if (depth === 0) return at;
  }
}

/** Python's int() of an array index part, or null. @param {string} part */
function index(part) {
  const m = /^\s*([+-]?)(\d+(?:_\d+)*)\s*$/.exec(part);
  if (m === null) return null;
  const n = Number(m[2].replace(/_/g, ""));
  return m[1] === "-" ? -n : n;
}

/**
 * The index of the value at `parts`; for the last part of an object path with
 * `keyOccurrence` > 1, the index of that (duplicate) key instead. Null if not found.
 * @param {string} text @param {string[]} parts @param {number} [keyOccurrence]
 * @returns {number | null}
 */
export function locate(text, parts, keyOccurrence = 1) {
  try {
    let i = skipWs(text, 0);
    for (let n = 0; n < parts.length; n++) {
      const part = parts[n];
      const last = n === parts.length - 1;
      if (text[i] === "{") {
        i = skipWs(text, i + 1);
        let seen = 0;
        let hit = false;
        while (text[i] !== "}") {
          if (text[i] === undefined) return null;
          const keyStart = i;
          let key;
          [key, i] = scanString(text, i + 1);
          i = skipWs(text, i);
          i = skipWs(text, i + 1); // past ':'
          if (key === part) {
            seen++;
            if (last && keyOccurrence > 1) {
              if (seen === keyOccurrence) return keyStart;
            } else {
              hit = true;
              break;
            }
          }
          i = skipWs(text, skipValue(text, i));
          if (text[i] === ",") i = skipWs(text, i + 1);
        }
        if (!hit) return null;
      } else if (text[i] === "[") {
        const idx = index(part);
        if (idx === null) return null;
        i = skipWs(text, i + 1);
        for (let k = 0; k < idx; k++) {
          if (text[i] === "]" || text[i] === undefined) return null;
          i = skipWs(text, skipValue(text, i));
          if (text[i] === ",") i = skipWs(text, i + 1);
        }
        if (text[i] === "]") return null;
      } else {
        return null;
      }
    }
    return i < text.length ? i : null;
  } catch {
    return null;
  }
}
