// An RFC 6902 JSON Patch from one document to another (what a migration changed, for
// `migrate --dry-run` and the `migrated` event's change count): add, remove and replace only.
// The reference uses the jsonpatch library, which may also emit move/copy; patches are for
// reading and counting, so the two may differ in form while describing the same change.

/** @typedef {import("./types.js").Json} Json */

/** @param {unknown} v @returns {v is Record<string, Json>} */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const esc = (/** @type {string} */ s) => s.replace(/~/g, "~0").replace(/\//g, "~1");
const same = (/** @type {unknown} */ a, /** @type {unknown} */ b) =>
  JSON.stringify(a) === JSON.stringify(b);

/**
 * @param {unknown} from @param {unknown} to
 * @returns {{op: string, path: string, value?: unknown}[]}
 */
export function jsonPatch(from, to) {
  /** @type {{op: string, path: string, value?: unknown}[]} */
  const ops = [];
  /** @type {[unknown, unknown, string][]} */
  const stack = [[from, to, ""]];
  while (stack.length) {
    const [a, b, path] = /** @type {[Json, Json, string]} */ (stack.pop());
    if (isObject(a) && isObject(b)) {
      for (const k of Object.keys(a))
        if (!(k in b)) ops.push({ op: "remove", path: `${path}/${esc(k)}` });
      for (const k of Object.keys(b)) {
        if (!(k in a)) ops.push({ op: "add", path: `${path}/${esc(k)}`, value: b[k] });
        else if (!same(a[k], b[k])) stack.push([a[k], b[k], `${path}/${esc(k)}`]);
      }
    } else if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
      a.forEach((x, i) => {
        if (!same(x, b[i])) stack.push([x, b[i], `${path}/${i}`]);
      });
    } else if (!same(a, b)) ops.push({ op: "replace", path, value: b });
  }
  return ops;
}
