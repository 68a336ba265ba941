// The resume answer as text (`session-resume resume` without `--format json`): the same content
// as the JSON (schema/decision/2.json) in the order an agent acts on it. One function,
// `planText`, renders it; control characters in values from the session's files are escaped
// by the caller (`cleanTree`), and a backtick in the state's values here (`\x60`), so a value
// never opens or closes a code span. A port of the reference's
// validator/session_resume/rendering/plan_text.py, function for function: change both.

import { clean } from "./reporters.mjs";

/** @typedef {Record<string, any>} Json */

/** `text` with each backtick as `\x60` (the reference's `no_backticks`). @param {string} text */
export const noBackticks = (text) => text.replaceAll("`", "\\x60");

/** JSON as Python's json.dumps writes it (", " and ": " separators, non-ASCII kept), keys
 * sorted when asked. @param {unknown} v @param {boolean} [sortKeys] @returns {string} */
function dumps(v, sortKeys = false) {
  if (v === undefined) return "null";
  if (Array.isArray(v)) return `[${v.map((x) => dumps(x, sortKeys)).join(", ")}]`;
  if (v !== null && typeof v === "object") {
    const keys = sortKeys ? Object.keys(v).sort() : Object.keys(v);
    return `{${keys.map((k) => `${JSON.stringify(k)}: ${dumps(/** @type {Json} */ (v)[k], sortKeys)}`).join(", ")}}`;
  }
  return JSON.stringify(v);
}

/** Python's str() of a value in an f-string (None, True, False as Python spells them).
 * @param {unknown} v */
function str(v) {
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  return String(v);
}

/** @param {string} label @param {unknown} entries */
function codes(label, entries) {
  /** @type {string[]} */
  const out = [];
  for (const e of /** @type {unknown[]} */ (entries || [])) {
    if (e !== null && typeof e === "object" && !Array.isArray(e)) {
      const d = /** @type {Json} */ (e);
      const message = str(d.message).replace(/\.+$/, "");
      out.push(`${label} ${str(d.code)}: ${message}. To do: ${str(d.hint)}`);
    } else {
      out.push(`${label} ${str(e)}`); // a decision of version 1 (bare codes)
    }
  }
  return out;
}

const PLAIN = /^[A-Za-z0-9._~$/-]+$/;

// a string that reads as a JSON or Python literal is quoted: bare, it would look unset or typed
const LITERALS = ["none", "null", "true", "false", "nan"];
/** A decision's value: bare when it is a plain word, else as JSON (quoted, escaped).
 * @param {unknown} v */
const value = (v) =>
  typeof v === "string" && PLAIN.test(v) && !LITERALS.includes(v.toLowerCase()) ? v : dumps(v);

// A skip reason the text says once, in the state's heading, instead of per file.
const CARRIED = "the briefing carries it";

/** @param {Json} b */
function state(b) {
  const lines = ["state (never open its file):"];
  const decisions = b.decisions || {};
  lines.push(
    `  decisions: ${
      Object.entries(decisions)
        .map(([k, v]) => `${k}=${value(v)}`)
        .join(", ") || "none"
    }`,
  );
  const findings = b.open_findings || [];
  const said = findings.map((/** @type {unknown} */ f) => `  open finding: ${str(f)}`);
  lines.push(...(said.length ? said : ["  open findings: none"]));
  for (const e of b.decision_log || [])
    lines.push(`  decision ${str(e.id)}: ${str(e.title)} -> ${str(e.choice)}`);
  if (b.review_audit !== null && b.review_audit !== undefined)
    lines.push(`  review audit: ${dumps(b.review_audit, true)}`);
  const load = b.load || [];
  const loaded = new Set(load.map((/** @type {Json} */ f) => f.path));
  for (const a of b.artifacts || []) {
    // one in `read now` is on disk: said there
    if (!loaded.has(a.path))
      lines.push(`  artifact: ${a.path} (${a.exists ? "on disk" : "MISSING"})`);
  }
  lines.push(`read now:${load.length ? "" : " nothing beyond this answer"}`);
  for (const f of load)
    lines.push(`  ${f.path}${String(f.why).includes("partial") ? " (partial: continue it)" : ""}`);
  const skip = (b.skip || []).filter((/** @type {Json} */ f) => f.reason !== CARRIED);
  if (skip.length) {
    lines.push("do not read:");
    for (const f of skip) lines.push(`  ${f.path} (${f.reason})`);
  }
  return lines;
}

/** @param {Json} p */
function finish(p) {
  const lines = [`to finish step ${p.step}:`];
  const audit = p.review_audit;
  if (audit !== null && audit !== undefined) {
    // else its command above says it all (its tier while undecided too)
    if (audit.recorded !== null && audit.recorded !== undefined)
      lines.push("  review audit: recorded");
  }
  lines.push(`  findings: ${p.open_findings.rule}`);
  const gateOf = p.gate;
  // a session break is said by `session end`'s condition
  if (gateOf !== null && gateOf !== undefined)
    lines.push(...gate(gateOf, `after \`complete\`: ${gateOf.rule}`, false));
  const nxt = p.next_step;
  const hasGate = gateOf !== null && gateOf !== undefined;
  const later = nxt !== null && nxt !== undefined && nxt.by === "next_chat";
  // else an agent waits for a stop that never comes
  if (nxt !== null && nxt !== undefined && !later) {
    const first = hasGate ? `after ${gateOf.id} is approved` : "no gate: after `complete`";
    lines.push(
      `  ${first}, go on with step ${nxt.key} in this chat (its start${nxt.skip ? " or skip" : ""} below, then ask \`resume\` with \`--step ${nxt.key}\` for its plan)`,
    );
  }
  if (later && hasGate && nxt)
    lines.push(
      `  after ${gateOf.id} is approved this chat ends (\`session end\`); the next chat starts step ${nxt.key} under its own session, from its own \`resume\``,
    );
  if (nxt !== null && nxt !== undefined) {
    const opt = nxt.optional ? "optional" : "required";
    lines.push(`  next step: ${nxt.key} (${str(nxt.name)}), ${opt}`);
    if (!later) lines.push(`  start: ${nxt.start}`);
    if (nxt.skip)
      lines.push(`  or skip${later ? " (this chat, if the user chose it)" : ""}: ${nxt.skip}`);
  } else {
    lines.push("  next step: none (the workflow is then complete)");
  }
  lines.push(`  ${p.artifacts_rule}`);
  return lines;
}

/** A gate and the decisions recorded there (`decide KEY VALUE`), with allowed values.
 * @param {Json} g @param {string} where @param {boolean} [brk] */
function gate(g, where, brk = true) {
  const note = brk && g.session_break ? "; a new chat after it" : "";
  const lines = [`  ${str(g.id)} (${str(g.kind)}${note}) ${where}`];
  for (const d of g.decisions || []) {
    const allowed = noBackticks(d.allowed?.length ? d.allowed.map(str).join(" | ") : "free text");
    const now =
      d.value === null || d.value === undefined
        ? "not decided"
        : `now ${noBackticks(dumps(d.value))} (keep unless the user changes it)`;
    lines.push(`    decide ${d.key} (${allowed}); ${now}`);
  }
  return lines;
}

/**
 * The resume answer (a decision of schema/decision/2.json) as text: the action, the codes with
 * their words, the state from the briefing and what to read, the commands in order with their
 * `when`, and what finishes the step. @param {Json} decision
 */
export function planText(decision) {
  const r = decision;
  let head = `action: ${r.action}`;
  if (r.step) {
    const name = r.step_name ? ` (${r.step_name})` : "";
    const said = (r.reasons || []).some(
      (/** @type {unknown} */ e) =>
        e !== null && typeof e === "object" && str(/** @type {Json} */ (e).message).includes(name),
    );
    head += `, step ${r.step}${said ? "" : name}`; // once, in the reason if it says it
  }
  if (r.sub_step && r.action !== "resume_from_checkpoint")
    // SR703 says it
    head += `, after checkpoint ${r.sub_step}`;
  const lines = [head];
  if (r.next_step) lines.push(`next step: ${r.next_step}`);
  if (r.incomplete?.length) lines.push(`incomplete earlier steps: ${r.incomplete.join(", ")}`);
  lines.push(...codes("reason", r.reasons));
  lines.push(...codes("warning", r.warnings));
  const lease = r.lease;
  if (lease)
    lines.push(
      noBackticks(
        `lease: ${lease.state} (session ${str(lease.session)}, owner ${str(lease.owner)}, heartbeat ${str(lease.heartbeat)})`,
      ),
    );
  const o = r.orphan;
  if (o) {
    let where = o.step ? `was in step ${o.step}` : "no step in progress";
    if (o.sub_step) where += ` at ${o.sub_step}`;
    lines.push(
      noBackticks(
        `orphaned session ${str(o.session)}: silent for ${o.silent_seconds} s (${o.reason}), ${where}`,
      ),
    );
    for (const f of o.possibly_incomplete)
      lines.push(`  possibly incomplete: ${noBackticks(f.path)} (${f.why})`);
    if (!o.possibly_incomplete.length) lines.push("  possibly incomplete: none");
  }
  // the state's values: no line of it has a code span of its own
  if (r.briefing) lines.push(...state(r.briefing).map(noBackticks));
  const openGate = r.plan?.open_gate;
  if (openGate) {
    // before the step starts: the user approves it, `decide KEY VALUE` records
    lines.push(
      `first, the gate of step ${openGate.step} (\`approve\` records the user's approval; \`decide KEY VALUE\` a decision the user changes):`,
    );
    lines.push(...gate(openGate, "is still open"));
  }
  const session = r.session || {};
  const commands = r.commands || [];
  if (commands.length) {
    const at = commands.findIndex((/** @type {unknown} */ c) => run(c).includes(" session start"));
    const fresh =
      session.new && session.id && at >= 0
        ? ` (${at + 1} takes session ${session.id}, new for this answer: name it in a later resume)`
        : "";
    lines.push(`commands in order${fresh}, each when its [condition] holds:`);
    commands.forEach((/** @type {any} */ c, /** @type {number} */ i) => {
      lines.push(
        c !== null && typeof c === "object" ? `${i + 1}. [${c.when}] ${c.run}` : `${i + 1}. ${c}`,
      );
    });
  }
  for (const c of r.alternatives || []) lines.push(`  instead, [${c.when}] ${c.run}`);
  if (r.plan) lines.push(...finish(r.plan));
  return `${lines.join("\n")}\n`;
}

/** @param {any} c */
const run = (c) => (c !== null && typeof c === "object" ? c.run : str(c));

/** `value` (JSON-like) with every string, keys included, passed through `clean`: the data of a
 * text answer escaped before it is formatted (the reference's `clean_tree`).
 * @param {unknown} v @returns {any} */
export function cleanTree(v) {
  if (typeof v === "string") return clean(v);
  if (Array.isArray(v)) return v.map(cleanTree);
  if (v !== null && typeof v === "object")
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [clean(k), cleanTree(x)]));
  return v;
}
