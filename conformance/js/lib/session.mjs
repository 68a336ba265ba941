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
import { CODES } from "./codes.mjs";
import { parseTimestamp } from "./timeutil.mjs";

export const STATE = "00-session-state.json";
export const WORKLOG = "00-worklog.jsonl";
export const SENTINEL = "00-session.active";
const FULL_SCAN_LIMIT = 16 * 1024 * 1024;
/** The largest lease pid (a C int, as the reference's PID_MAX). */
export const PID_MAX = 2 ** 31 - 1;
/** What a session id is: every writer accepts only these; a lease naming anything else is
 *  unreadable (SR510). */
export const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

/** @typedef {import("./types.js").JsonObject} JsonObject */
/** @typedef {import("./types.js").Found} Found */

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
  return scanWorklogFound(dir).map((f) => f.code);
}

/** scanWorklog's findings in the reference's words (storage/worklog.py `scan`): the worklog
 * named, the line numbered. @param {string} dir @returns {Found[]} */
export function scanWorklogFound(dir) {
  const path = join(dir, WORKLOG);
  /** @type {(code: string, message: string, line?: number) => Found} */
  const at = (code, message, line) => ({
    code,
    message,
    pointer: "",
    file: path,
    ...(line === undefined ? {} : { line }),
  });
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return [];
  }
  if (!st.isFile()) return [at("SR501", "the worklog is not a regular file")];
  let data;
  try {
    if (st.size > FULL_SCAN_LIMIT)
      return readTail(dir, 10).codes.map((code) => at(code, CODES[code]?.summary ?? ""));
    data = readFileSync(path);
  } catch (err) {
    const why = /** @type {NodeJS.ErrnoException} */ (err).code ?? "an error";
    return [at("SR501", `cannot read the worklog: ${why}`)];
  }
  /** @type {Found[]} */
  const out = [];
  let lastSeq = 0;
  let lineNo = 0;
  for (const line of splitLines(data)) {
    lineNo++;
    if (blankLine(line.bytes)) continue;
    const ev = parseLine(line.bytes);
    if (!isObject(ev)) {
      // A torn record (an append cut short, maybe terminated by the next append) starts as
      // every record is written; anything else is garbage.
      if (line.terminated && startsLikeRecord(line.bytes))
        out.push(
          at(
            "SR502",
            "an incomplete worklog line (an append cut short by a crash); it is ignored",
            lineNo,
          ),
        );
      else if (line.terminated)
        out.push(at("SR503", "a worklog line is not a JSON object", lineNo));
      else
        out.push(
          at(
            "SR502",
            "the last worklog line is incomplete (a crash mid-append); it is ignored",
            lineNo,
          ),
        );
      continue;
    }
    if (isIntSeq(ev.seq)) {
      if (ev.seq <= lastSeq)
        out.push(at("SR504", `seq ${ev.seq} does not increase (previous ${lastSeq})`, lineNo));
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
  /** @param {JsonObject} lease @param {string} message */
  const bad = (lease, message) => ({
    lease,
    codes: ["SR510"],
    found: [{ code: "SR510", message, pointer: "", file: path }],
  });
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return { lease: null, codes: [], found: [] };
  }
  if (!st.isFile()) return bad({}, "the sentinel is not a regular file");
  let data;
  try {
    data = readFileSync(path);
  } catch (err) {
    const why = /** @type {NodeJS.ErrnoException} */ (err).code ?? "an error";
    return bad({}, `cannot read the sentinel: ${why}`);
  }
  if (data.length > 64 * 1024) return bad({}, "the sentinel is larger than 64 KiB");
  const parsed = readJsonBytes(data);
  if (parsed.value === null) return bad({}, "the sentinel is not a JSON object");
  const v = parsed.value;
  const pid = v.pid;
  if (pid !== undefined && pid !== null && !(Number.isInteger(pid) && pid > 0 && pid <= PID_MAX))
    return bad({}, `the sentinel's pid is not a process id (1..${PID_MAX})`);
  // text that is no session id (a newline, a `$(...)`) is never judged, shown or quoted
  if (typeof v.session === "string" && !SESSION_ID.test(v.session))
    return bad({}, "the sentinel's session is not a session id ([A-Za-z0-9._:@-], at most 128)");
  if (typeof v.session !== "string" || parseTimestamp(v.heartbeat) === null)
    return bad(v, "the sentinel is not a valid lease (session, heartbeat)");
  return { lease: v, codes: [], found: [] };
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
