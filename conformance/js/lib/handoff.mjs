// Checks of an existing 00-handoff.md (codes SR600-SR607): the header
// `# {project} — Handoff (Step {N} complete)`, the line `Updated: {timestamp} | …`, exactly the
// six H2 sections in order, at most 60 lines; stale or naming another project (warnings).

import { join } from "node:path";
import { readLimited } from "./files.mjs";
import { readJsonBytes } from "./jsonread.mjs";
import { STATE } from "./session.mjs";
import { parseTimestamp } from "./timeutil.mjs";

export const HANDOFF = "00-handoff.md";
const MAX_LINES = 60;
const SECTIONS = [
  "Completed Steps",
  "Key Decisions",
  "Open Challenger Findings (must_fix only)",
  "Context for Next Step",
  "Skill Context",
  "Artifacts",
];
const HEADER = /^# (.+) — Handoff \(Step (\S+) complete\)$/;
const UPDATED = /^Updated: (\S+)(?: \| .*)?$/;
const H2 = /^## (.*?)\s*#*\s*$/;
const FENCE = /^ {0,3}(```|~~~)/;

/** Lines as the limit counts them: every Unicode line break ends a line. @param {string} text */
function splitLines(text) {
  const parts = text.split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/);
  if (parts.length && parts[parts.length - 1] === "") parts.pop();
  return parts;
}

/**
 * The codes of a handoff's text; `stateUpdated` (µs) and `project`: the state's, when known.
 * @param {string} text @param {{stateUpdated?: number | null, project?: string | null}} [opts]
 * @returns {string[]}
 */
export function checkHandoffText(text, { stateUpdated = null, project = null } = {}) {
  /** @type {string[]} */
  const out = [];
  const lines = splitLines(text);
  if (lines.length > MAX_LINES) out.push("SR605");
  const content = lines.filter((l) => l.trim() !== "");
  const header = content.length ? HEADER.exec(content[0]) : null;
  if (!header) out.push("SR601");
  else if (project !== null && header[1] !== project) out.push("SR607");
  const m = content.length > 1 ? UPDATED.exec(content[1]) : null;
  const updatedAt = m ? parseTimestamp(m[1]) : null;
  if (updatedAt === null) out.push("SR601");
  /** @type {string[]} */
  const found = [];
  let fenced = false;
  for (const l of lines) {
    if (FENCE.test(l)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    const h = H2.exec(l);
    if (h) found.push(h[1]);
  }
  if (found.some((t) => !SECTIONS.includes(t))) out.push("SR604");
  if (SECTIONS.some((t) => !found.includes(t))) out.push("SR602");
  const known = found.filter((t) => SECTIONS.includes(t));
  if (new Set(known).size !== known.length) out.push("SR603");
  const firstSeen = [...new Set(known)];
  const inOrder = SECTIONS.filter((t) => firstSeen.includes(t));
  if (firstSeen.some((t, i) => t !== inOrder[i])) out.push("SR603");
  if (updatedAt !== null && stateUpdated !== null && updatedAt < stateUpdated) out.push("SR606");
  return out;
}

/** The session directory's handoff against its state; nothing when there is none.
 * @param {string} dir @returns {string[]} */
export function checkSessionHandoff(dir) {
  const path = join(dir, HANDOFF);
  const res = readLimited(path, { maxSize: 1 << 20, root: dir });
  if (res.codes?.includes("SR100")) return [];
  if (!res.data) return ["SR600"];
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(res.data);
  } catch {
    return ["SR600"];
  }
  let stateUpdated = null;
  let project = null;
  const st = readLimited(join(dir, STATE), { root: dir });
  if (st.data) {
    const parsed = readJsonBytes(st.data);
    if (parsed.value !== null) {
      stateUpdated = parseTimestamp(parsed.value.updated);
      project = typeof parsed.value.project === "string" ? parsed.value.project : null;
    }
  }
  return checkHandoffText(text, { stateUpdated, project });
}
