// What the YAML reader (yaml.mjs) adds to the `yaml` package for the configuration
// (config.mjs): a float the document wrote is kept apart from an integer of the same value,
// as the reference's `int` checks need (storage/config.py). The nesting limit and the places
// of anchors and tags are in yamlwords.mjs.

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
