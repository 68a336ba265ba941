// What the YAML reader (yaml.mjs) adds to the `yaml` package so that values look as they do
// to the reference: a float the document wrote is kept apart from an integer of the same
// value, as the configuration's `int` checks need (storage/config.py), and a mapping key that
// is not a string (`1:`, `true:`, `1e3:`) is the property its str() writes, remembered for the
// messages that name it. The nesting limit and the places of anchors and tags are in
// yamlwords.mjs.

import { floatRepr } from "./findings.mjs";

/** A float the document wrote (`2.0`, `1e3`, `.inf`), kept apart from an integer of the same
 * value (the configuration's integers are Python's `int`, never a float). */
export class YamlFloat {
  /** @param {number} value */
  constructor(value) {
    this.value = value;
  }
}
const PY_INT = /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$/;

/** A scalar's value, a float the document wrote as a YamlFloat.
 * @param {{value: unknown, type?: string | null, source?: string}} node @returns {any} */
export function scalarOf(node) {
  if (typeof node.value === "number" && node.type === "PLAIN" && !PY_INT.test(node.source ?? ""))
    return new YamlFloat(node.value);
  return node.value;
}

/** The keys of a parsed mapping that were not strings in the YAML: the object's property name
 * to the key's own value (the reference names them `1`, `True`, `None`).
 * @type {WeakMap<object, Map<string, unknown>>} */
const NON_STRING_KEYS = new WeakMap();

/** Set `obj`'s member for the YAML key `key` (a scalar's value, as scalarOf gives it): the
 * property is the key as the reference's str() writes it (`1e3` is "1000.0").
 * @param {Record<string, unknown>} obj @param {unknown} key @param {unknown} value */
export function setMember(obj, key, value) {
  const name = key instanceof YamlFloat ? floatRepr(key.value) : String(key);
  obj[name] = value;
  if (typeof key !== "string") {
    const keys = NON_STRING_KEYS.get(obj) ?? new Map();
    keys.set(name, key);
    NON_STRING_KEYS.set(obj, keys);
  }
}

/** The key `name` of `obj` as its YAML wrote it: a string, or the scalar it was.
 * @param {object} obj @param {string} name */
export function keyAsWritten(obj, name) {
  const keys = NON_STRING_KEYS.get(obj);
  return keys?.has(name) ? keys.get(name) : name;
}
