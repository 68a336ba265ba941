// Checks of an existing 00-handoff.md (codes SR600-SR607): the header
// `# {project} — Handoff (Step {N} complete)`, the line `Updated: {timestamp} | …`, exactly the
// six H2 sections in order, at most 60 lines; stale or naming another project (warnings).

import { join } from "node:path";
import { readLimited } from "./files.mjs";
import { CODES } from "./codes.mjs";
import { strRepr } from "./findings.mjs";
import { firstInvalidUtf8, readJsonBytes } from "./jsonread.mjs";
import { STATE } from "./session.mjs";
import { formatTimestamp, parseTimestamp } from "./timeutil.mjs";

/** @typedef {import("./types.js").Found} Found */

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
export function checkHandoffText(text, opts = {}) {
  return checkHandoffFound(text, opts).map((f) => f.code);
}

/**
 * A handoff's findings in the reference's words and places (core/handoff_rules.py
 * `check_handoff_text`, in its order); `file` names the handoff in each.
 * @param {string} text
 * @param {{stateUpdated?: number | null, project?: string | null, file?: string}} [opts]
 * @returns {Found[]}
 */
export function checkHandoffFound(text, { stateUpdated = null, project = null, file = "" } = {}) {
  /** @type {Found[]} */
  const out = [];
  /** @param {string} code @param {string} message @param {number | null} [line]
   * @param {number | null} [column] */
  const add = (code, message, line = null, column = null) => {
    out.push({ code, message, pointer: "", file, line, column });
  };
  const lines = splitLines(text);
  if (lines.length > MAX_LINES)
    add(
      "SR605",
      `the handoff has ${lines.length} lines; at most ${MAX_LINES} are allowed`,
      MAX_LINES + 1,
      1,
    );
  /** @type {[number, string][]} */
  const content = [];
  lines.forEach((l, i) => {
    if (l.trim() !== "") content.push([i + 1, l]);
  });
  const header = content.length ? HEADER.exec(content[0][1]) : null;
  if (!header)
    add(
      "SR601",
      "the first line is not the header `# {project} — Handoff (Step {N} complete)`",
      content.length ? content[0][0] : 1,
      1,
    );
  else if (project !== null && header[1] !== project)
    add(
      "SR607",
      `the header names project ${strRepr(header[1])}, the state ${strRepr(project)}`,
      content[0][0],
      3,
    );
  const updatedLine = content.length > 1 ? content[1] : null;
  const m = updatedLine ? UPDATED.exec(updatedLine[1]) : null;
  const updatedAt = m ? parseTimestamp(m[1]) : null;
  if (updatedAt === null)
    add(
      "SR601",
      "the line after the header is not `Updated: {RFC 3339 UTC timestamp} | …`",
      updatedLine ? updatedLine[0] : null,
      updatedLine ? 1 : null,
    );
  /** @type {[number, string][]} */
  const found = [];
  let fenced = false;
  lines.forEach((l, i) => {
    if (FENCE.test(l)) {
      fenced = !fenced;
      return;
    }
    if (fenced) return;
    const h = H2.exec(l);
    if (h) found.push([i + 1, h[1]]);
  });
  const titles = found.map(([, t]) => t);
  for (const [i, title] of found) {
    if (!SECTIONS.includes(title))
      add(
        "SR604",
        `unexpected section \`## ${title}\`; the handoff has exactly the six sections of the protocol`,
        i,
        1,
      );
  }
  for (const name of SECTIONS)
    if (!titles.includes(name)) add("SR602", `the section \`## ${name}\` is missing`);
  const known = found.filter(([, t]) => SECTIONS.includes(t));
  const seen = new Set();
  for (const [i, t] of known) {
    if (seen.has(t)) add("SR603", `the section \`## ${t}\` appears twice`, i, 1);
    seen.add(t);
  }
  const expected = SECTIONS.filter((t) => seen.has(t));
  const actual = [...new Set(known.map(([, t]) => t))];
  const firstBad = actual.findIndex((t, k) => t !== expected[k]);
  if (firstBad !== -1) {
    const lineNo = known.find(([, t]) => t === actual[firstBad])?.[0] ?? null;
    add(
      "SR603",
      `the sections are out of order: \`## ${actual[firstBad]}\` where ` +
        `\`## ${expected[firstBad]}\` belongs (order: ${SECTIONS.join(", ")})`,
      lineNo,
      1,
    );
  }
  if (updatedAt !== null && stateUpdated !== null && updatedAt < stateUpdated)
    add(
      "SR606",
      `the handoff was updated at ${formatTimestamp(updatedAt)}, before the state it ` +
        `describes (${formatTimestamp(stateUpdated)})`,
      updatedLine ? updatedLine[0] : null,
      1,
    );
  return out;
}

/** The session directory's handoff against its state; nothing when there is none.
 * @param {string} dir @returns {string[]} */
export function checkSessionHandoff(dir) {
  return checkSessionHandoffFound(dir).map((f) => f.code);
}

/** checkSessionHandoff's findings in the reference's words (storage/handoff_file.py).
 * @param {string} dir @returns {Found[]} */
export function checkSessionHandoffFound(dir) {
  const path = join(dir, HANDOFF);
  const res = readLimited(path, { maxSize: 1 << 20, root: dir });
  if (res.codes?.includes("SR100")) return [];
  /** @param {string} message @returns {Found[]} */
  const unreadable = (message) => [{ code: "SR600", message, pointer: "", file: path }];
  if (!res.data) {
    const why = res.codes.map((c) => CODES[c]?.summary ?? c).join("; ") || "cannot read it";
    return unreadable(`the handoff cannot be read: ${why}`);
  }
  const bad = firstInvalidUtf8(res.data);
  if (bad !== -1) return unreadable(`the handoff is not UTF-8 (byte ${bad})`);
  const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(res.data);
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
  return checkHandoffFound(text, { stateUpdated, project, file: path });
}
