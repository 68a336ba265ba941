// Findings with their words and places (the reference's core/diagnostics.py, core/findings.py):
// a finding is {code, message, pointer, hint?, line?, column?}; at most MAX_PER_CODE of one
// code are listed per file and one more counts the rest; values are quoted as Python's repr()
// quotes them, since the reference's messages do (validate's output is compared byte for byte
// with the reference's, tests/test_js_package.py).

import { keysOf } from "./jsonread.mjs";

/** Python's sorted() order of strings: by code point (not UTF-16 unit). */
export const byCodePoint = (/** @type {string} */ x, /** @type {string} */ y) => {
  const [a, b] = [[...x], [...y]];
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const d =
      /** @type {number} */ (a[i].codePointAt(0)) - /** @type {number} */ (b[i].codePointAt(0));
    if (d) return d;
  }
  return a.length - b.length;
};

/**
 * @typedef {import("./types.js").Found} Found
 */

export const MAX_PER_CODE = 100;

/** A finding. @param {string} code @param {string} message @param {string} [pointer]
 * @param {string} [hint] @returns {Found} */
export function found(code, message, pointer = "", hint = "") {
  return { code, message, pointer, hint };
}

/** An RFC 6901 pointer of `parts`. @param {(string | number)[]} parts */
export function pointerJoin(parts) {
  return parts.map((p) => `/${String(p).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

/** The parts of an RFC 6901 pointer. @param {string} pointer @returns {string[]} */
export function pointerSplit(pointer) {
  if (!pointer) return [];
  return pointer
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** `n` with thousands separators, as Python's `f"{n:,}"`. @param {number} n */
export const grouped = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/** The finding that stands for `rest` more of `code` (core/findings.py `count_finding`).
 * @param {string} code @param {number} rest @param {string} [severity] @returns {Found} */
export function countFinding(code, rest, severity) {
  return {
    code,
    message:
      `${grouped(rest)} more ${code} finding(s) in this file, not listed (only the first ` +
      `${MAX_PER_CODE} of each code are)`,
    pointer: "",
    hint: `fix the ${MAX_PER_CODE} listed, then validate again to see the next`,
    ...(severity ? { severity } : {}),
  };
}

/** The first MAX_PER_CODE findings of each code, in order, and for each code that had more a
 * count of the rest at the end (the reference's `Findings.listed`). */
export class Findings {
  constructor() {
    /** @type {Found[]} */
    this.kept = [];
    /** @type {Map<string, number>} */
    this.counts = new Map();
  }

  /** @param {Found} f */
  push(f) {
    const n = this.counts.get(f.code) ?? 0;
    this.counts.set(f.code, n + 1);
    if (n < MAX_PER_CODE) this.kept.push(f);
  }

  /** @returns {Found[]} */
  listed() {
    const out = [...this.kept];
    for (const [code, n] of this.counts) {
      if (n > MAX_PER_CODE) out.push(countFinding(code, n - MAX_PER_CODE));
    }
    return out;
  }
}

/** At most MAX_PER_CODE of each code, the rest counted after the last listed one (the
 * reference's `capped`, applied to a file's whole list; one over the cap is left as it is:
 * the reader and the rules count their own rest in a 101st finding).
 * @param {Found[]} list @param {(code: string) => string} severityOf @returns {Found[]} */
export function capped(list, severityOf) {
  /** @type {Map<string, number>} */
  const counts = new Map();
  for (const f of list) counts.set(f.code, (counts.get(f.code) ?? 0) + 1);
  if ([...counts.values()].every((n) => n <= MAX_PER_CODE + 1)) return list;
  /** @type {Found[]} */
  const kept = [];
  /** @type {Map<string, number>} */
  const listed = new Map();
  for (const f of list) {
    const n = listed.get(f.code) ?? 0;
    const all = counts.get(f.code) ?? 0;
    listed.set(f.code, n + 1);
    if (n < MAX_PER_CODE || all <= MAX_PER_CODE + 1) kept.push(f);
    if (n + 1 === MAX_PER_CODE && all > MAX_PER_CODE + 1)
      kept.push(countFinding(f.code, all - MAX_PER_CODE, f.severity ?? severityOf(f.code)));
  }
  return kept;
}

// --- Python's repr() of a parsed JSON value -------------------------------------------------

// Python's str.isprintable() is false for the categories Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs
// (the space aside): repr() escapes those.
const NOT_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** A float as Python's repr() writes it (shortest digits; an exponent below 1e-4 and from
 * 1e16 on, written e-05 / e+16). @param {number} x */
export function floatRepr(x) {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (Number.isInteger(x) && Math.abs(x) < 1e16) return `${x.toFixed(0)}.0`;
  const [mant, e] = x.toExponential().split("e");
  const exp = Number(e);
  if (exp < -4 || exp >= 16) {
    const sign = exp < 0 ? "-" : "+";
    return `${mant}e${sign}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  return String(x);
}

/** Python's repr() of the number a JSON token writes: an int's is the token itself (any
 * number of digits), a float's (a fraction or an exponent) its shortest form.
 * @param {string} token */
export const pyNumberRepr = (token) => (/[.eE]/.test(token) ? floatRepr(Number(token)) : token);

/** A string as Python's repr() writes it. @param {string} s */
export function strRepr(s) {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  let body = "";
  for (const c of s) {
    if (c === "\\") body += "\\\\";
    else if (c === q) body += `\\${c}`;
    else if (c === "\n") body += "\\n";
    else if (c === "\r") body += "\\r";
    else if (c === "\t") body += "\\t";
    else if (c !== " " && NOT_PRINTABLE.test(c)) {
      const n = /** @type {number} */ (c.codePointAt(0));
      body +=
        n < 0x100
          ? `\\x${n.toString(16).padStart(2, "0")}`
          : n < 0x10000
            ? `\\u${n.toString(16).padStart(4, "0")}`
            : `\\U${n.toString(16).padStart(8, "0")}`;
    } else body += c;
  }
  return `${q}${body}${q}`;
}

/** Python's repr() of a parsed JSON value (an integral number below 10^16 is an int there,
 * `2.0` included, docs/spec.md §2.1; any other number a float).
 * @param {unknown} v @returns {string} */
export function pyRepr(v) {
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "string") return strRepr(v);
  if (typeof v === "number")
    return Number.isInteger(v) && Math.abs(v) < 1e16 ? String(v) : floatRepr(v);
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(", ")}]`;
  if (typeof v === "object") {
    const o = /** @type {Record<string, unknown>} */ (v);
    const items = keysOf(o).map((k) => `${strRepr(k)}: ${pyRepr(o[k])}`);
    return `{${items.join(", ")}}`;
  }
  return String(v);
}

/** A value as Python's `json.dumps(value, ensure_ascii=False)` writes it (", " and ": ").
 * @param {unknown} v @returns {string} */
export function pyJson(v) {
  if (v === null || v === undefined) return "null";
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number") {
    if (Number.isInteger(v) && Math.abs(v) < 1e16) return String(v);
    return floatRepr(v).replace("inf", "Infinity").replace("nan", "NaN");
  }
  if (typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[${v.map(pyJson).join(", ")}]`;
  const o = /** @type {Record<string, unknown>} */ (v);
  const items = keysOf(o).map((k) => `${JSON.stringify(k)}: ${pyJson(o[k])}`);
  return `{${items.join(", ")}}`;
}

/** `s` quoted for a POSIX shell as Python's shlex.quote quotes it. @param {string} s */
export const shellQuote = (s) =>
  s === "" ? "''" : /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\"'\"'")}'`;
