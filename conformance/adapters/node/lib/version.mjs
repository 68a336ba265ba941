// Schema versions (spec §2.2): "MAJOR.MINOR" strings compared as numbers; missing means 1.0.

const VERSION = /^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})$/;
export const KNOWN = ["1.0", "2.0", "3.0"];

/** The version of a parsed document: {raw, num} or {invalid: true}. */
export function versionOf(doc) {
  if (!("schema_version" in doc)) return { raw: "1.0", num: [1, 0] };
  const raw = doc.schema_version;
  if (typeof raw !== "string") return { invalid: true };
  const m = VERSION.exec(raw);
  return m ? { raw, num: [Number(m[1]), Number(m[2])] } : { invalid: true };
}

export const newerThanKnown = ([a, b]) => a > 3 || (a === 3 && b > 0);
