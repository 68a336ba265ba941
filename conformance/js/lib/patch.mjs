// An RFC 6902 JSON Patch from one document to another (what a migration changed, for
// `migrate --dry-run` and the `migrated` event's change count), the reference's byte for byte:
// core/migration/context.py's MigrationResult.patch, which is jsonpatch.make_patch (add,
// remove, replace and move; array items matched up with difflib's SequenceMatcher) unless a
// list is longer than PATCH_LIST_LIMIT, then its linear_patch (add, remove, replace only).
// The make_patch port follows jsonpatch 1.48's DiffBuilder (jsonpatch.py, the reference's
// dependency, pyproject.toml) one to one, without what the reference never asks of it (test
// operations, custom pointer classes, non-string keys). Objects are walked in their keys'
// order as read (lib/jsonread.mjs keysOf), as Python's dicts are.

import { SequenceMatcher } from "./difflib.mjs";
import { byCodePoint, pyJson } from "./findings.mjs";
import { keysOf, setKeyOrder } from "./jsonread.mjs";
import { STEP_FIELDS } from "./migration/values.mjs";
import { orderedKeys } from "./rules.mjs";

/** @typedef {import("./types.js").Json} Json */
/** @typedef {{op: string, path: string, value?: unknown, from?: string}} Operation */

/** @param {unknown} v @returns {v is Record<string, Json>} */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const esc = (/** @type {string} */ s) => s.replace(/~/g, "~0").replace(/\//g, "~1");

/** A key equal for values equal as JSON (objects' members in any order; 1 and true differ):
 * what the reference's json.dumps(..., sort_keys=True) is used for. @param {unknown} v
 * @returns {string} */
function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (isObject(v))
    return `{${Object.keys(v)
      .sort(byCodePoint)
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(",")}}`;
  return JSON.stringify(v) ?? "null";
}

/** Python's `==` on JSON values (true == 1, objects in any order). @param {unknown} a
 * @param {unknown} b @returns {boolean} */
function pyEqual(a, b) {
  if (Array.isArray(a) || Array.isArray(b))
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((x, i) => pyEqual(x, b[i]))
    );
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return false;
    const ka = Object.keys(a);
    return (
      ka.length === Object.keys(b).length &&
      ka.every((k) => Object.hasOwn(b, k) && pyEqual(a[k], b[k]))
    );
  }
  const num = (/** @type {unknown} */ x) => (typeof x === "boolean" ? Number(x) : x);
  return num(a) === num(b);
}

/** jsonpatch's _positional_cost: how many operations change old into new, arrays compared by
 * position. @param {unknown} old @param {unknown} neu @returns {number} */
function positionalCost(old, neu) {
  if (pyEqual(old, neu)) return 0;
  if (isObject(old) && isObject(neu)) {
    let cost = 0;
    for (const k of Object.keys(old))
      cost += Object.hasOwn(neu, k) ? positionalCost(old[k], neu[k]) : 1;
    for (const k of Object.keys(neu)) if (!Object.hasOwn(old, k)) cost++;
    return cost;
  }
  if (Array.isArray(old) && Array.isArray(neu)) {
    let cost = Math.abs(old.length - neu.length);
    for (let i = 0; i < Math.min(old.length, neu.length); i++)
      cost += positionalCost(old[i], neu[i]);
    return cost;
  }
  return 1;
}

/** Up to which product of their lengths two lists' equal items are all matched up. */
const EXACT_MATCH_LIMIT = 500 ** 2;

/** bisect_left / bisect_right on a sorted number array. @param {number[]} xs @param {number} x */
function bisect(xs, x, right = false) {
  let [lo, hi] = [0, xs.length];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (right ? x < xs[mid] : !(xs[mid] < x)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

let itemIds = 0;

/** An item an array has at some point of the diff (jsonpatch's _ArrayItem). */
class ArrayItem {
  /** @param {ArrayItems} array @param {number} label @param {boolean} initial */
  constructor(array, label, initial) {
    this.array = array;
    this.label = label;
    this.initial = initial;
    this.id = ++itemIds;
  }
  index() {
    return bisect(this.array.presentLabels, this.label);
  }
}

/** All items an array has at some point of the diff, and those it has now, by label
 * (jsonpatch's _ArrayItems). */
class ArrayItems {
  static step = 1 << 16;
  static gap = 2 ** 32;
  constructor() {
    /** @type {ArrayItem[]} */ this.items = [];
    /** @type {number[]} */ this.labels = [];
    /** @type {ArrayItem[]} */ this.present = [];
    /** @type {number[]} */ this.presentLabels = [];
  }
  /** @param {number} index */
  at(index) {
    while (this.present.length <= index) {
      const label = this.labels.length ? this.labels[this.labels.length - 1] + ArrayItems.gap : 0;
      const item = new ArrayItem(this, label, true);
      this.items.push(item);
      this.labels.push(label);
      this.present.push(item);
      this.presentLabels.push(label);
    }
    return this.present[index];
  }
  /** @param {number} index */
  insert(index) {
    const position = index ? bisect(this.labels, this.at(index - 1).label, true) : 0;
    let label;
    if (position === 0 || position === this.labels.length) {
      if (!this.labels.length) label = 0;
      else if (position === 0) label = this.labels[0] - ArrayItems.gap;
      else label = this.labels[this.labels.length - 1] + ArrayItems.gap;
    } else {
      if (this.labels[position] - this.labels[position - 1] < 2) this.relabel();
      const [low, high] = [this.labels[position - 1], this.labels[position]];
      label = low + Math.min(ArrayItems.step, Math.floor((high - low) / 2));
    }
    const item = new ArrayItem(this, label, false);
    this.items.splice(position, 0, item);
    this.labels.splice(position, 0, label);
    this.add(item);
    return item;
  }
  relabel() {
    this.labels = this.items.map((_, i) => i * ArrayItems.gap);
    this.items.forEach((item, i) => {
      item.label = this.labels[i];
    });
    this.presentLabels = this.present.map((item) => item.label);
  }
  /** @param {ArrayItem} item */
  add(item) {
    const position = bisect(this.presentLabels, item.label);
    this.present.splice(position, 0, item);
    this.presentLabels.splice(position, 0, item.label);
  }
  /** @param {ArrayItem} item */
  remove(item) {
    const position = bisect(this.presentLabels, item.label);
    this.present.splice(position, 1);
    this.presentLabels.splice(position, 1);
  }
  reset() {
    this.present = this.items.filter((item) => item.initial);
    this.presentLabels = this.present.map((item) => item.label);
  }
}

/** @typedef {(string | number)[]} Parts object keys and array indices */
/** @typedef {(string | ArrayItem)[]} Location array items in place of indices */
/** @typedef {{op: string, path: Location, from?: Location, value?: unknown}} Op */
/** @typedef {{prev: Node, next: Node, op: Op | null}} Node */

const sameParts = (/** @type {Parts} */ p, /** @type {Parts} */ q) =>
  p.length === q.length && p.every((x, i) => x === q[i]);
const isInside = (/** @type {Parts} */ parts, /** @type {Parts} */ container) =>
  parts.length > container.length && sameParts(container, parts.slice(0, container.length));

/** jsonpatch's _without_item: `parts`, which assumes an item at `location`, with it missing.
 * @param {Parts} parts @param {Parts} location @returns {Parts} */
function withoutItem(parts, location) {
  const depth = location.length - 1;
  const last = location[depth];
  if (
    typeof last === "number" &&
    isInside(parts, location.slice(0, -1)) &&
    /** @type {number} */ (parts[depth]) > last
  )
    return [
      ...parts.slice(0, depth),
      /** @type {number} */ (parts[depth]) - 1,
      ...parts.slice(depth + 1),
    ];
  return parts;
}

/** jsonpatch's DiffBuilder (optimization on, no test operations). */
class DiffBuilder {
  constructor() {
    /** @type {[Map<string, Node[]>, Map<string, Node[]>]} added, removed */
    this.indexStorage = [new Map(), new Map()];
    /** @type {Node} */
    this.root = /** @type {any} */ ({ op: null });
    this.root.prev = this.root.next = this.root;
    /** @type {Map<string, ArrayItems>} by the array's location */
    this.arrays = new Map();
  }

  /** @param {unknown} value @param {Node} node @param {0 | 1} st */
  storeIndex(value, node, st) {
    const key = canonical(value);
    const at = this.indexStorage[st].get(key);
    if (at) at.push(node);
    else this.indexStorage[st].set(key, [node]);
  }
  /** @param {unknown} value @param {0 | 1} st */
  takeIndex(value, st) {
    const stored = this.indexStorage[st].get(canonical(value));
    return stored?.length ? /** @type {Node} */ (stored.pop()) : null;
  }
  /** @param {Op} op @returns {Node} */
  insert(op) {
    const last = this.root.prev;
    const node = { prev: last, next: this.root, op };
    last.next = node;
    this.root.prev = node;
    return node;
  }
  /** @param {Node} node */
  remove(node) {
    node.prev.next = node.next;
    node.next.prev = node.prev;
  }

  /** @returns {Operation[]} */
  execute() {
    const operations = this.replay();
    /** @type {Operation[]} */
    const out = [];
    const pointer = (/** @type {Parts} */ parts) => parts.map((p) => `/${esc(String(p))}`).join("");
    for (let i = 0; i < operations.length; i++) {
      const [first, second] = [operations[i], operations[i + 1]];
      if (
        second &&
        sameParts(first.path, second.path) &&
        first.op === "remove" &&
        second.op === "add"
      ) {
        out.push({ op: "replace", path: pointer(second.path), value: second.value });
        i++;
        continue;
      }
      /** @type {Operation} */
      const op = /** @type {any} */ ({ op: first.op });
      if (first.from) op.from = pointer(first.from);
      op.path = pointer(first.path);
      if ("value" in first) op.value = first.value;
      out.push(op);
    }
    return out;
  }

  /** The operations with the array indices at which they apply.
   * @returns {{op: string, path: Parts, from?: Parts, value?: unknown}[]} */
  replay() {
    for (const items of this.arrays.values()) items.reset();
    const out = [];
    for (let node = this.root.next; node !== this.root; node = node.next) {
      const op = /** @type {Op} */ (node.op);
      /** @type {{op: string, path: Parts, from?: Parts, value?: unknown}} */
      const operation = { op: op.op, path: [] };
      if (op.from) {
        operation.from = this.parts(op.from);
        this.setPresent(op.from, false);
      }
      operation.path = this.parts(op.path);
      if (op.op === "remove") this.setPresent(op.path, false);
      else if (op.op === "add" || op.op === "move") this.setPresent(op.path, true);
      if ("value" in op) operation.value = op.value;
      out.push(operation);
    }
    return out;
  }

  /** @param {Location} location */
  arrayItems(location) {
    const key = JSON.stringify(location.map((p) => (typeof p === "string" ? p : [p.id])));
    let items = this.arrays.get(key);
    if (!items) {
      items = new ArrayItems();
      this.arrays.set(key, items);
    }
    return items;
  }
  /** @param {Parts} parts @returns {Location} */
  location(parts) {
    /** @type {Location} */
    const location = [];
    for (const part of parts)
      location.push(typeof part === "number" ? this.arrayItems(location).at(part) : part);
    return location;
  }
  /** @param {Parts} path @param {string | number} key @returns {Location} */
  newLocation(path, key) {
    const location = this.location(path);
    return [...location, typeof key === "number" ? this.arrayItems(location).insert(key) : key];
  }
  /** @param {Location} location @returns {Parts} */
  parts(location) {
    return location.map((p) => (typeof p === "string" ? p : p.index()));
  }
  /** @param {Location} location @param {boolean} present */
  setPresent(location, present) {
    const item = location[location.length - 1];
    if (item instanceof ArrayItem) {
      if (present) item.array.add(item);
      else item.array.remove(item);
    }
  }

  /** @param {Parts} path @param {string | number} key @param {unknown} item */
  itemAdded(path, key, item) {
    const target = [...path, key];
    const index = this.takeIndex(item, 1);
    if (index !== null) {
      const removed = /** @type {Op} */ (index.op).path;
      const source = this.parts(removed);
      if (!isInside(target, source)) {
        this.remove(index);
        if (!sameParts(source, target))
          this.insert({ op: "move", from: removed, path: this.newLocation(path, key) });
        else this.setPresent(removed, true);
        return;
      }
    }
    const node = this.insert({ op: "add", path: this.newLocation(path, key), value: item });
    this.storeIndex(item, node, 0);
  }

  /** @param {Parts} path @param {string | number} key @param {unknown} item */
  itemRemoved(path, key, item) {
    const source = [...path, key];
    const location = this.location(source);
    const index = this.takeIndex(item, 0);
    if (index !== null) {
      const addedLocation = /** @type {Op} */ (index.op).path;
      const added = this.parts(addedLocation);
      this.remove(index);
      if (!sameParts(withoutItem(source, added), added)) {
        this.setPresent(location, false);
        this.insert({ op: "move", from: location, path: addedLocation });
      } else this.setPresent(addedLocation, false);
      return;
    }
    this.setPresent(location, false);
    const node = this.insert({ op: "remove", path: location });
    this.storeIndex(item, node, 1);
  }

  /** @param {Parts} path @param {string | number} key @param {unknown} item */
  itemReplaced(path, key, item) {
    this.insert({ op: "replace", path: this.location([...path, key]), value: item });
  }

  /** @param {Parts} path @param {Record<string, Json>} src @param {Record<string, Json>} dst */
  compareDicts(path, src, dst) {
    const [srcKeys, dstKeys] = [keysOf(src), keysOf(dst)];
    for (const key of srcKeys) if (!Object.hasOwn(dst, key)) this.itemRemoved(path, key, src[key]);
    for (const key of dstKeys) if (!Object.hasOwn(src, key)) this.itemAdded(path, key, dst[key]);
    for (const key of srcKeys)
      if (Object.hasOwn(dst, key)) this.compareValues([...path, key], src[key], dst[key]);
  }

  /** jsonpatch's _differing_runs: each run src[i1:i2] replaced by dst[j1:j2], between runs of
   * items both lists have. @param {Json[]} src @param {Json[]} dst
   * @returns {[number, number, number, number][]} */
  differingRuns(src, dst) {
    const [srcKeys, dstKeys] = [src.map(canonical), dst.map(canonical)];
    const shorter = Math.min(src.length, dst.length);
    let start = 0;
    while (start < shorter && srcKeys[start] === dstKeys[start]) start++;
    let commonEnd = 0;
    while (
      commonEnd < shorter - start &&
      srcKeys[src.length - 1 - commonEnd] === dstKeys[dst.length - 1 - commonEnd]
    )
      commonEnd++;
    const [srcEnd, dstEnd] = [src.length - commonEnd, dst.length - commonEnd];
    const cost = (/** @type {number[]} */ [i1, i2, j1, j2]) => {
      let c = Math.abs(i2 - i1 - (j2 - j1));
      for (let i = i1, j = j1; i < i2 && j < j2; i++, j++)
        if (srcKeys[i] !== dstKeys[j]) c += positionalCost(src[i], dst[j]);
      return c;
    };
    /** @type {[number, number, number, number]} */
    const byPosition = [start, srcEnd, start, dstEnd];
    const positionCost = cost(byPosition);
    const exact = (srcEnd - start) * (dstEnd - start) <= EXACT_MATCH_LIMIT;
    if (!exact) {
      /** @type {Map<string, number>} */
      const counts = new Map();
      for (const k of dstKeys.slice(start, dstEnd)) counts.set(k, (counts.get(k) ?? 0) + 1);
      let comparisons = 0;
      for (const k of srcKeys.slice(start, srcEnd)) comparisons += counts.get(k) ?? 0;
      if (comparisons > Math.max(EXACT_MATCH_LIMIT, positionCost ** 2)) return [byPosition];
    }
    const matcher = new SequenceMatcher(
      srcKeys.slice(start, srcEnd),
      dstKeys.slice(start, dstEnd),
      !exact,
    );
    /** @type {[number, number, number, number][]} */
    const runs = matcher
      .opcodes()
      .filter(([tag]) => tag !== "equal")
      .map(([, i1, i2, j1, j2]) => [start + i1, start + i2, start + j1, start + j2]);
    if (runs.reduce((sum, run) => sum + cost(run), 0) > positionCost) return [byPosition];
    return runs;
  }

  /** @param {Parts} path @param {Json[]} src @param {Json[]} dst */
  compareLists(path, src, dst) {
    for (const [i1, i2, j1, j2] of this.differingRuns(src, dst)) {
      const paired = Math.min(i2 - i1, j2 - j1);
      for (let key = j1; key < j1 + paired; key++) {
        const [old, neu] = [src[i1 + key - j1], dst[key]];
        if (isObject(old) && isObject(neu)) this.compareDicts([...path, key], old, neu);
        else if (Array.isArray(old) && Array.isArray(neu))
          this.compareLists([...path, key], old, neu);
        else if (JSON.stringify(old) === JSON.stringify(neu)) continue;
        else {
          this.itemRemoved(path, key, old);
          this.itemAdded(path, key, neu);
        }
      }
      for (const old of src.slice(i1 + paired, i2)) this.itemRemoved(path, j1 + paired, old);
      for (let key = j1 + paired; key < j2; key++) this.itemAdded(path, key, dst[key]);
    }
  }

  /** @param {Parts} at @param {unknown} src @param {unknown} dst */
  compareValues(at, src, dst) {
    if (isObject(src) && isObject(dst)) this.compareDicts(at, src, dst);
    else if (Array.isArray(src) && Array.isArray(dst)) this.compareLists(at, src, dst);
    else if (JSON.stringify(src) === JSON.stringify(dst)) return;
    else if (!at.length) this.insert({ op: "replace", path: [], value: dst });
    else this.itemReplaced(at.slice(0, -1), at[at.length - 1], dst);
  }
}

/** jsonpatch.make_patch(src, dst).patch. @param {unknown} src @param {unknown} dst
 * @returns {Operation[]} */
export function makePatch(src, dst) {
  const builder = new DiffBuilder();
  builder.compareValues([], src, dst);
  return builder.execute();
}

/** The reference's linear_patch (core/migration/context.py): objects key by key, arrays of one
 * length index by index, anything else replaced whole. @param {unknown} from @param {unknown} to
 * @returns {Operation[]} */
export function linearPatch(from, to) {
  /** @type {Operation[]} */
  const ops = [];
  /** @type {[unknown, unknown, string][]} */
  const stack = [[from, to, ""]];
  const same = (/** @type {unknown} */ a, /** @type {unknown} */ b) =>
    canonical(a) === canonical(b);
  while (stack.length) {
    const [a, b, path] = /** @type {[Json, Json, string]} */ (stack.pop());
    if (isObject(a) && isObject(b)) {
      for (const k of keysOf(a))
        if (!Object.hasOwn(b, k)) ops.push({ op: "remove", path: `${path}/${esc(k)}` });
      for (const k of keysOf(b)) {
        if (!Object.hasOwn(a, k)) ops.push({ op: "add", path: `${path}/${esc(k)}`, value: b[k] });
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

/** Lists longer than this take the linear diff: jsonpatch's array diff is quadratic
 * (core/migration/context.py, docs/security.md §6). */
export const PATCH_LIST_LIMIT = 1000;

/** @param {unknown} value */
function longestList(value) {
  let longest = 0;
  const stack = [value];
  while (stack.length) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      longest = Math.max(longest, v.length);
      stack.push(...v);
    } else if (isObject(v)) stack.push(...Object.values(v));
  }
  return longest;
}

/** What a migration changed, as the reference's MigrationResult.patch computes it.
 * @param {unknown} from @param {unknown} to @returns {Operation[]} */
export function jsonPatch(from, to) {
  if (longestList(from) > PATCH_LIST_LIMIT || longestList(to) > PATCH_LIST_LIMIT)
    return linearPatch(from, to);
  return makePatch(from, to);
}

/** Order the keys of every object of a migrated `doc` as the reference's dicts have them: the
 * keys `original` had at the same place first, in its order, then the new ones; the steps in
 * workflow order, then numeric (its repair_steps sorts them, unless the workflow has free
 * steps), each step's STEP_FIELDS first (its _step). @param {unknown} original
 * @param {unknown} doc @param {import("./types.js").Workflow | null} wf */
export function orderLike(original, doc, wf) {
  /** @type {[unknown, unknown, number, string][]} value, its original, depth, key */
  const stack = [[original, doc, 0, ""]];
  while (stack.length) {
    const [a, b, depth, name] = /** @type {[unknown, unknown, number, string]} */ (stack.pop());
    if (isObject(b)) {
      const kept = isObject(a) ? keysOf(a).filter((k) => Object.hasOwn(b, k)) : [];
      const had = new Set(kept);
      let order = [...kept, ...keysOf(b).filter((k) => !had.has(k))];
      if (depth === 1 && name === "steps" && wf && !wf.freeSteps) order = orderedKeys(b, wf);
      else if (depth === 1 && name === "steps" && !isObject(a) && !wf) order = orderedKeys(b, null);
      else if (depth === 1 && (name === "steps" || name === "review_audit") && isObject(a))
        order = renamedInPlace(a, b, order);
      else if (depth === 2 && STEP_FIELDS.every((k) => Object.hasOwn(b, k)))
        order = [...STEP_FIELDS, ...order.filter((k) => !STEP_FIELDS.includes(k))];
      setKeyOrder(b, order);
      for (const k of order) stack.push([isObject(a) ? a[k] : undefined, b[k], depth + 1, k]);
    } else if (Array.isArray(b))
      b.forEach((x, i) => {
        stack.push([Array.isArray(a) ? a[i] : undefined, x, depth + 1, ""]);
      });
  }
}

/** Steps not sorted, and review_audit: a renamed key (`3.5` → `3_5`, `step_3.5` → `step_3_5`,
 * `2a` → `2_1` with its x-legacy.key) keeps the place of its old key, as the reference's renaming rebuilds the steps in order.
 * @param {Record<string, Json>} a @param {Record<string, Json>} b @param {string[]} order */
function renamedInPlace(a, b, order) {
  const was = new Map(keysOf(a).map((k, i) => [k, i]));
  const place = (/** @type {string} */ k) => {
    const step = b[k];
    const legacy = isObject(step) && isObject(step["x-legacy"]) ? step["x-legacy"].key : undefined;
    for (const old of [legacy, k, k.replace(/_(?=[0-9]+$)/, ".")])
      if (typeof old === "string" && was.has(old)) return /** @type {number} */ (was.get(old));
    return Number.POSITIVE_INFINITY;
  };
  return order
    .map((k, i) => /** @type {[string, number, number]} */ ([k, place(k), i]))
    .sort((x, y) => x[1] - y[1] || x[2] - y[2])
    .map(([k]) => k);
}

/** Python's json.dumps(value, indent=2, ensure_ascii=False): objects' keys in their order as
 * read (keysOf), as Python's dicts keep theirs. @param {unknown} value @returns {string} */
export function pyDumps(value, indent = "") {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (!value.length) return "[]";
    return `[\n${value.map((v) => inner + pyDumps(v, inner)).join(",\n")}\n${indent}]`;
  }
  if (isObject(value)) {
    const keys = keysOf(value);
    if (!keys.length) return "{}";
    const members = keys.map((k) => `${inner}${JSON.stringify(k)}: ${pyDumps(value[k], inner)}`);
    return `{\n${members.join(",\n")}\n${indent}}`;
  }
  // a number as Python writes it (a float's shortest repr: 1e-05, 1.5e+17)
  if (typeof value === "number") return pyJson(value);
  return JSON.stringify(value) ?? "null";
}
