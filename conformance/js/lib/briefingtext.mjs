// The briefing for a person (resume's text output): the same content as the JSON's
// `briefing` (docs/spec.md §10), worded as the reference's CLI words it.

/**
 * @typedef {import("./types.js").Briefing} Briefing
 * @typedef {import("./types.js").Checkpoint} Checkpoint
 */

/** JSON as Python's json.dumps writes it (", " and ": " separators), optionally key-sorted.
 * @param {import("./types.js").Json} v a JSON value
 * @param {boolean} [sortKeys]
 * @returns {string}
 */
function dumps(v, sortKeys = false) {
  if (Array.isArray(v)) return `[${v.map((x) => dumps(x, sortKeys)).join(", ")}]`;
  if (v !== null && typeof v === "object") {
    const keys = sortKeys ? Object.keys(v).sort() : Object.keys(v);
    return `{${keys.map((k) => `${JSON.stringify(k)}: ${dumps(v[k], sortKeys)}`).join(", ")}}`;
  }
  return JSON.stringify(v);
}

/**
 * @param {Briefing | null | undefined} b the decision's briefing (null: nothing to say)
 * @returns {string[]}
 */
export function briefingText(b) {
  if (!b) return [];
  const lines = ["briefing (what the state holds; do not open the raw state file):"];
  if (b.optional)
    lines.push("  this step is optional: run it, or skip it (see the commands below)");
  const decisions = Object.entries(b.decisions ?? {}).map(([k, v]) => `${k}=${dumps(v)}`);
  lines.push(`  decisions: ${decisions.join(", ") || "none"}`);
  const findings = b.open_findings ?? [];
  lines.push(`  open findings: ${findings.length}`);
  for (const f of findings) lines.push(`    - ${f}`);
  for (const e of b.decision_log ?? []) lines.push(`  decision ${e.id}: ${e.title} → ${e.choice}`);
  if (b.review_audit !== null && b.review_audit !== undefined)
    lines.push(`  review audit: ${dumps(b.review_audit, true)}`);
  else if (b.review_audited)
    lines.push("  review audit: none yet (record it with `session-resume review-audit`)");
  for (const a of b.artifacts ?? [])
    lines.push(`  artifact: ${a.path} (${a.exists ? "on disk" : "MISSING"})`);
  for (const [label, cp] of /** @type {[string, Checkpoint | null][]} */ ([
    ["last checkpoint", b.last_checkpoint],
    ["next checkpoint", b.next_checkpoint],
  ])) {
    if (cp) lines.push(`  ${label}: ${cp.id}${cp.after ? `: after ${cp.after}` : ""}`);
  }
  for (const e of b.last_events ?? []) {
    const where = ["step", "sub_step"]
      .filter((k) => e[k])
      .map((k) => String(e[k]))
      .join(" ");
    lines.push(`  event: ${e.ts} ${e.event} ${where}`.trimEnd());
  }
  lines.push(b.load?.length ? "read now:" : "read now: nothing beyond this briefing");
  for (const f of b.load ?? []) lines.push(`  - ${f.path} (${f.why})`);
  if (b.skip?.length) {
    lines.push("do not read:");
    for (const f of b.skip) lines.push(`  - ${f.path} (${f.reason})`);
  }
  return lines;
}
