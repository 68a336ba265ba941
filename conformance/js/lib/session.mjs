// The session directory's other files: worklog (spec §6), lease (spec §7), temp files (§1).

import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { parseLine, readJsonBytes } from "./jsonread.mjs";
import { parseTimestamp } from "./timeutil.mjs";

export const STATE = "00-session-state.json";
export const WORKLOG = "00-worklog.jsonl";
export const SENTINEL = "00-session.active";
const FULL_SCAN_LIMIT = 16 * 1024 * 1024;

/** @typedef {import("./types.js").JsonObject} JsonObject */

/** @param {unknown} v @returns {v is JsonObject} */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
/** @param {unknown} v @returns {v is number} */
const isIntSeq = (v) => typeof v === "number" && Number.isInteger(v);

/** The temp files a writer left behind (`.00-session-state.json.*.tmp`). @param {string} dir */
export function tempFiles(dir) {
  try {
    return readdirSync(dir)
      .filter((n) => n.startsWith(`.${STATE}.`) && n.endsWith(".tmp"))
      .sort();
  } catch {
    return [];
  }
}

/** Split bytes into lines as written: each line keeps whether it was newline-terminated.
 * @param {Buffer} data */
function splitLines(data) {
  /** @type {{bytes: Buffer, terminated: boolean}[]} */
  const out = [];
  let start = 0;
  for (let i = 0; i < data.length; i++) {
    if (data[i] === 0x0a) {
      out.push({ bytes: data.subarray(start, i), terminated: true });
      start = i + 1;
    }
  }
  if (start < data.length) out.push({ bytes: data.subarray(start), terminated: false });
  return out;
}

const RECORD_START = Buffer.from('{"v":');
const startsLikeRecord = (/** @type {Buffer} */ b) =>
  b.subarray(0, RECORD_START.length).equals(RECORD_START);
const blankLine = (/** @type {Buffer} */ b) =>
  b.every((x) => x === 0x20 || (x >= 0x09 && x <= 0x0d));

/** Every line checked (validate): garbage SR503, torn last line SR502, seq order SR504.
 * @param {string} dir @returns {string[]} */
export function scanWorklog(dir) {
  const path = join(dir, WORKLOG);
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return [];
  }
  let data;
  try {
    if (st.size > FULL_SCAN_LIMIT) return readTail(dir, 10).codes;
    data = readFileSync(path);
  } catch {
    return ["SR501"];
  }
  /** @type {string[]} */
  const out = [];
  let lastSeq = 0;
  for (const line of splitLines(data)) {
    if (blankLine(line.bytes)) continue;
    const ev = parseLine(line.bytes);
    if (!isObject(ev)) {
      // A torn record (an append cut short, maybe terminated by the next append) starts as
      // every record is written; anything else is garbage.
      out.push(!line.terminated || startsLikeRecord(line.bytes) ? "SR502" : "SR503");
      continue;
    }
    if (isIntSeq(ev.seq)) {
      if (ev.seq <= lastSeq) out.push("SR504");
      lastSeq = Math.max(lastSeq, ev.seq);
    }
  }
  return out;
}

/** Whether `events` (a worklog tail) hold a `session_end` of `session` after its latest
 * `session_start` (one taking the same id again after its end makes it live again, spec §7).
 * @param {import("./types.js").Tail["events"]} events @param {unknown} session @returns {boolean}
 */
export function endedIn(events, session) {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.session === session && (e.event === "session_end" || e.event === "session_start"))
      return e.event === "session_end";
  }
  return false;
}

/**
 * The last `n` events, read backwards from the end of the file in chunks (never the whole
 * file). Returns {events, codes, lastSeq, endsWithNewline, exists}.
 * @param {string} dir @param {number} n @returns {import("./types.js").Tail}
 */
export function readTail(dir, n) {
  const path = join(dir, WORKLOG);
  /** @type {import("./types.js").Tail} */
  const out = { events: [], codes: [], lastSeq: 0, endsWithNewline: true, exists: false, size: 0 };
  let fd;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    if (/** @type {NodeJS.ErrnoException} */ (err).code !== "ENOENT") out.codes.push("SR501");
    return out;
  }
  try {
    const size = fstatSync(fd).size;
    out.exists = true;
    out.size = size;
    let pos = size;
    let buf = Buffer.alloc(0);
    /** @type {{bytes: Buffer, terminated: boolean}[]} */
    let lines = [];
    const CHUNK = 64 * 1024;
    while (pos > 0 && lines.length <= n + 1) {
      const step = Math.min(CHUNK, pos);
      pos -= step;
      const chunk = Buffer.alloc(step);
      readSync(fd, chunk, 0, step, pos);
      buf = Buffer.concat([chunk, buf]);
      lines = splitLines(buf);
    }
    if (pos > 0) lines = lines.slice(1); // the first piece may start mid-line
    out.endsWithNewline = size === 0 || buf[buf.length - 1] === 0x0a;
    /** @type {JsonObject[]} */
    const events = [];
    lines.forEach((line, i) => {
      if (blankLine(line.bytes)) return;
      const ev = parseLine(line.bytes);
      if (!isObject(ev)) {
        out.codes.push(i === lines.length - 1 && !line.terminated ? "SR502" : "SR503");
        return;
      }
      events.push(ev);
    });
    out.events = n ? events.slice(-n) : [];
    out.lastSeq = Math.max(0, ...events.filter((e) => isIntSeq(e.seq)).map((e) => e.seq));
    return out;
  } catch {
    out.codes.push("SR501");
    return out;
  } finally {
    closeSync(fd);
  }
}

/** The lease as found: {lease (null: no file; {} or the object when unusable), codes}.
 * @param {string} dir @returns {import("./types.js").LeaseRead} */
export function readLease(dir) {
  const path = join(dir, SENTINEL);
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return { lease: null, codes: [] };
  }
  if (!st.isFile()) return { lease: {}, codes: ["SR510"] };
  let data;
  try {
    data = readFileSync(path);
  } catch {
    return { lease: {}, codes: ["SR510"] };
  }
  if (data.length > 64 * 1024) return { lease: {}, codes: ["SR510"] };
  const parsed = readJsonBytes(data);
  if (parsed.value === null) return { lease: {}, codes: ["SR510"] };
  const v = parsed.value;
  if (typeof v.session !== "string" || parseTimestamp(v.heartbeat) === null)
    return { lease: v, codes: ["SR510"] };
  return { lease: v, codes: [] };
}

/** The lease's state now (spec §7 table, first match).
 * @param {JsonObject | null} lease
 * @param {{now: number, ended: boolean, ownerAlive: boolean | null, staleSeconds: number}} opts
 * @returns {import("./types.js").LeaseState} */
export function leaseState(lease, { now, ended, ownerAlive, staleSeconds }) {
  if (lease === null) return { state: "none", age: null };
  const hb = parseTimestamp(lease.heartbeat);
  if (hb === null) return { state: "unreadable", age: null };
  const age = (now - hb) / 1e6;
  if (ended) return { state: "ended", age };
  if (ownerAlive === false) return { state: "dead_owner", age };
  // an implicit lease (writes naming no session) gone quiet is idle, never an orphan (spec §7)
  if (age > staleSeconds) return { state: lease.implicit === true ? "idle" : "stale", age };
  return { state: "live", age };
}

/**
 * Append one worklog event (spec §6); a torn last line is terminated first.
 * @param {string} dir @param {string} event
 * @param {{ts: string, session?: string, step?: string | null, subStep?: string | null,
 *   detail?: Record<string, unknown> | null}} opts
 * @returns {import("./types.js").WorklogEvent}
 */
export function appendEvent(
  dir,
  event,
  { ts, session = "", step = null, subStep = null, detail = null },
) {
  const path = join(dir, WORKLOG);
  const tail = readTail(dir, 1);
  if (tail.codes.includes("SR501")) throw new Error("the worklog cannot be read");
  /** @type {import("./types.js").WorklogEvent} */
  const record = { v: 1, ts, seq: tail.lastSeq + 1, session, event };
  if (step !== null) record.step = step;
  if (subStep !== null) record.sub_step = subStep;
  if (detail) record.detail = detail;
  let line = Buffer.from(`${JSON.stringify(record)}\n`);
  if (tail.exists && !tail.endsWithNewline) line = Buffer.concat([Buffer.from("\n"), line]);
  const fd = openSync(
    path,
    constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0),
    0o644,
  );
  try {
    writeSync(fd, line); // one write() per record
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return record;
}
