// Python's difflib, the parts the reference uses: SequenceMatcher (its matching blocks and
// opcodes, no junk function, autojunk as given) and unified_diff for `migrate --dry-run`,
// get_close_matches for SR422's nearest decision key. Ported
// one to one from CPython 3.11's Lib/difflib.py (the same algorithm in every version this
// project supports), so the JSON Patch (lib/patch.mjs, which matches up array items with it)
// and the readable diff are the reference's byte for byte. Items are compared with `===`:
// callers pass strings.

/** @typedef {[string, number, number, number, number]} Opcode */

export class SequenceMatcher {
  /** @param {string[]} a @param {string[]} b @param {boolean} [autojunk] */
  constructor(a, b, autojunk = true) {
    this.a = a;
    this.b = b;
    /** @type {Map<string, number[]>} each item of b, its indices (popular items dropped) */
    this.b2j = new Map();
    b.forEach((elt, i) => {
      const at = this.b2j.get(elt);
      if (at) at.push(i);
      else this.b2j.set(elt, [i]);
    });
    const n = b.length;
    if (autojunk && n >= 200) {
      const ntest = Math.floor(n / 100) + 1;
      for (const [elt, idxs] of [...this.b2j]) if (idxs.length > ntest) this.b2j.delete(elt);
    }
  }

  /** @param {number} alo @param {number} ahi @param {number} blo @param {number} bhi
   * @returns {[number, number, number]} */
  findLongestMatch(alo, ahi, blo, bhi) {
    const { a, b, b2j } = this;
    let [besti, bestj, bestsize] = [alo, blo, 0];
    /** @type {Map<number, number>} */
    let j2len = new Map();
    for (let i = alo; i < ahi; i++) {
      /** @type {Map<number, number>} */
      const newj2len = new Map();
      for (const j of b2j.get(a[i]) ?? []) {
        if (j < blo) continue;
        if (j >= bhi) break;
        const k = (j2len.get(j - 1) ?? 0) + 1;
        newj2len.set(j, k);
        if (k > bestsize) [besti, bestj, bestsize] = [i - k + 1, j - k + 1, k];
      }
      j2len = newj2len;
    }
    // no junk function: only the "not junk" extensions apply (popular items are not junk)
    while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1])
      [besti, bestj, bestsize] = [besti - 1, bestj - 1, bestsize + 1];
    while (
      besti + bestsize < ahi &&
      bestj + bestsize < bhi &&
      a[besti + bestsize] === b[bestj + bestsize]
    )
      bestsize++;
    return [besti, bestj, bestsize];
  }

  /** @returns {[number, number, number][]} */
  matchingBlocks() {
    const [la, lb] = [this.a.length, this.b.length];
    const queue = [[0, la, 0, lb]];
    /** @type {[number, number, number][]} */
    const blocks = [];
    while (queue.length) {
      const [alo, ahi, blo, bhi] = /** @type {number[]} */ (queue.pop());
      const x = this.findLongestMatch(alo, ahi, blo, bhi);
      const [i, j, k] = x;
      if (k) {
        blocks.push(x);
        if (alo < i && blo < j) queue.push([alo, i, blo, j]);
        if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
      }
    }
    blocks.sort((p, q) => p[0] - q[0] || p[1] - q[1] || p[2] - q[2]);
    let [i1, j1, k1] = [0, 0, 0];
    /** @type {[number, number, number][]} */
    const out = [];
    for (const [i2, j2, k2] of blocks) {
      if (i1 + k1 === i2 && j1 + k1 === j2) k1 += k2;
      else {
        if (k1) out.push([i1, j1, k1]);
        [i1, j1, k1] = [i2, j2, k2];
      }
    }
    if (k1) out.push([i1, j1, k1]);
    out.push([la, lb, 0]);
    return out;
  }

  /** @returns {Opcode[]} */
  opcodes() {
    let [i, j] = [0, 0];
    /** @type {Opcode[]} */
    const answer = [];
    for (const [ai, bj, size] of this.matchingBlocks()) {
      const tag = i < ai && j < bj ? "replace" : i < ai ? "delete" : j < bj ? "insert" : "";
      if (tag) answer.push([tag, i, ai, j, bj]);
      [i, j] = [ai + size, bj + size];
      if (size) answer.push(["equal", ai, i, bj, j]);
    }
    return answer;
  }

  /** @param {number} [n] @returns {Opcode[][]} */
  groupedOpcodes(n = 3) {
    let codes = this.opcodes();
    if (!codes.length) codes = [["equal", 0, 1, 0, 1]];
    if (codes[0][0] === "equal") {
      const [tag, i1, i2, j1, j2] = codes[0];
      codes[0] = [tag, Math.max(i1, i2 - n), i2, Math.max(j1, j2 - n), j2];
    }
    const last = codes.length - 1;
    if (codes[last][0] === "equal") {
      const [tag, i1, i2, j1, j2] = codes[last];
      codes[last] = [tag, i1, Math.min(i2, i1 + n), j1, Math.min(j2, j1 + n)];
    }
    /** @type {Opcode[][]} */
    const groups = [];
    /** @type {Opcode[]} */
    let group = [];
    for (let [tag, i1, i2, j1, j2] of codes) {
      if (tag === "equal" && i2 - i1 > n + n) {
        group.push([tag, i1, Math.min(i2, i1 + n), j1, Math.min(j2, j1 + n)]);
        groups.push(group);
        group = [];
        [i1, j1] = [Math.max(i1, i2 - n), Math.max(j1, j2 - n)];
      }
      group.push([tag, i1, i2, j1, j2]);
    }
    if (group.length && !(group.length === 1 && group[0][0] === "equal")) groups.push(group);
    return groups;
  }
}

/** Python's `_calculate_ratio`. @param {number} matches @param {number} length */
const ratioOf = (matches, length) => (length ? (2.0 * matches) / length : 1.0);

/** Python's string order (code point by code point; JavaScript's `<` compares UTF-16 units).
 * @param {string} x @param {string} y */
function compareCodePoints(x, y) {
  const [a, b] = [[...x], [...y]];
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const d =
      /** @type {number} */ (a[i].codePointAt(0)) - /** @type {number} */ (b[i].codePointAt(0));
    if (d) return d;
  }
  return a.length - b.length;
}

/** difflib.get_close_matches(word, possibilities, n, cutoff): the best `n` possibilities
 * whose ratio() with `word` is at least `cutoff`, best first (ties: the greater string first,
 * as `heapq.nlargest` orders the (score, x) pairs). The reference's SR422 hint names its
 * nearest decision key with it (`core/write_moments.py`, n=1, cutoff=0.6). Strings are
 * compared code point by code point, as Python iterates them.
 * @param {string} word @param {string[]} possibilities @param {number} [n] @param {number} [cutoff]
 * @returns {string[]} */
export function getCloseMatches(word, possibilities, n = 3, cutoff = 0.6) {
  if (!(n > 0)) throw new RangeError(`n must be > 0: ${n}`);
  if (!(cutoff >= 0.0 && cutoff <= 1.0))
    throw new RangeError(`cutoff must be in [0.0, 1.0]: ${cutoff}`);
  const b = [...word];
  /** @type {Map<string, number>} */
  const fullbcount = new Map();
  for (const elt of b) fullbcount.set(elt, (fullbcount.get(elt) ?? 0) + 1);
  /** @type {[number, string][]} */
  const result = [];
  for (const x of possibilities) {
    const a = [...x];
    const length = a.length + b.length;
    // real_quick_ratio, quick_ratio, ratio: each an upper bound of the next
    if (ratioOf(Math.min(a.length, b.length), length) < cutoff) continue;
    /** @type {Map<string, number>} */
    const avail = new Map();
    let quick = 0;
    for (const elt of a) {
      const numb = avail.has(elt)
        ? /** @type {number} */ (avail.get(elt))
        : (fullbcount.get(elt) ?? 0);
      avail.set(elt, numb - 1);
      if (numb > 0) quick++;
    }
    if (ratioOf(quick, length) < cutoff) continue;
    const matches = new SequenceMatcher(a, b)
      .matchingBlocks()
      .reduce((sum, [, , size]) => sum + size, 0);
    const ratio = ratioOf(matches, length);
    if (ratio >= cutoff) result.push([ratio, x]);
  }
  result.sort((p, q) => q[0] - p[0] || compareCodePoints(q[1], p[1]));
  return result.slice(0, n).map(([, x]) => x);
}

/** @param {number} start @param {number} stop */
function rangeUnified(start, stop) {
  const length = stop - start;
  if (length === 1) return `${start + 1}`;
  return `${length ? start + 1 : start},${length}`;
}

/** difflib.unified_diff(a, b, fromfile, tofile) with its defaults (n=3, "\n" line ends): the
 * lines keep their own ends. @param {string[]} a @param {string[]} b @param {string} fromfile
 * @param {string} tofile @returns {string[]} */
export function unifiedDiff(a, b, fromfile, tofile) {
  /** @type {string[]} */
  const out = [];
  for (const group of new SequenceMatcher(a, b).groupedOpcodes(3)) {
    if (!out.length) out.push(`--- ${fromfile}\n`, `+++ ${tofile}\n`);
    const [first, last] = [group[0], group[group.length - 1]];
    out.push(`@@ -${rangeUnified(first[1], last[2])} +${rangeUnified(first[3], last[4])} @@\n`);
    for (const [tag, i1, i2, j1, j2] of group) {
      if (tag === "equal") {
        for (const line of a.slice(i1, i2)) out.push(` ${line}`);
        continue;
      }
      if (tag !== "insert") for (const line of a.slice(i1, i2)) out.push(`-${line}`);
      if (tag !== "delete") for (const line of b.slice(j1, j2)) out.push(`+${line}`);
    }
  }
  return out;
}

/** Python's str.splitlines(keepends=True): lines end at \n, \r\n, \r, \v, \f, \x1c-\x1e,
 * \x85, U+2028 and U+2029. @param {string} text @returns {string[]} */
export function splitLines(text) {
  return (
    text
      .match(/[^\n\r\v\f\x1c-\x1e\x85\u2028\u2029]*(?:\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]|$)/g)
      ?.filter((l) => l !== "") ?? []
  );
}
