// RFC 3339 UTC timestamps as the protocol writes them (spec §2.3): 2026-03-02T10:15:00Z. The
// twin of core/timeutil.py.

const TS =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?Z$/;

/** @param {unknown} v */
export function looksLikeTimestamp(v) {
  return typeof v === "string" && TS.test(v);
}

/** @param {number} year @param {number} month */
function daysIn(year, month) {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Microseconds since the epoch, or null if `v` is not a well-formed real instant.
 * @param {unknown} v @returns {number | null} */
export function parseTimestamp(v) {
  if (typeof v !== "string") return null;
  const m = TS.exec(v);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const micro = Number((m[7] ?? "").slice(0, 6).padEnd(6, "0"));
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return d.getTime() * 1000 + micro;
}

/** Parse an RFC 3339 timestamp with Z or an offset (the `now` of a case).
 * @param {string} v @returns {number} */
export function parseNow(v) {
  const own = parseTimestamp(v);
  if (own !== null) return own;
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) throw new Error(`not a timestamp: ${v}`);
  return ms * 1000;
}

/** Second precision, UTC, Z. @param {number} micros @returns {string} */
export function formatTimestamp(micros) {
  return new Date(Math.floor(micros / 1e6) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The stamp of a kept corrupt file: 20260302T120000Z. @param {number} micros */
export function stamp(micros) {
  return formatTimestamp(micros).replace(/[-:]/g, "");
}
