// The lease services (spec §7): `session start`, `session end`, `ping`, and the lease part of
// every write (read the lease, plan what a write does about it, acquire it, refresh its
// heartbeat, remove one a refused write created), as the reference's services/leases.py does
// them, refusals in its words. The state writes themselves are write.mjs's.

import { randomBytes } from "node:crypto";
import { lstatSync, renameSync, statSync, unlinkSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { pyRepr } from "./findings.mjs";
import { withLock } from "./lock.mjs";
import {
  appendEvent,
  endedIn,
  leaseState,
  PID_MAX,
  readLease,
  readTail,
  SENTINEL,
  STATE,
} from "./session.mjs";
import { fsyncDir, makeSessionDir, Refused, writeTemp } from "./store.mjs";
import { formatTimestamp, parseTimestamp } from "./timeutil.mjs";
import { fail, WriteError } from "./writeerror.mjs";

export const MAX_ATTEMPTS = 5;
const LEASE_TAIL_EVENTS = 200;
const DEFAULT_STALE_SECONDS = 300;

/**
 * @typedef {import("./types.js").JsonObject} JsonObject
 * @typedef {import("./types.js").WorklogEvent} WorklogEvent
 */
/** The lease as a write sees it: its state now and the parsed lease file (null: none).
 * @typedef {import("./types.js").LeaseState & {sentinel: JsonObject | null}} LeaseSeen */

/** @param {unknown} v @returns {v is JsonObject} */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const sameJson = (/** @type {unknown} */ a, /** @type {unknown} */ b) =>
  JSON.stringify(a) === JSON.stringify(b);

// spec §7: `$USER` (`$USERNAME`), else `unknown`; never the account name from the system
// spec §7: `$USER` (`$USERNAME`, `$LOGNAME`), else this account's number on this host (`uid
// N@HOST`, so that a lease always names who holds it); never the account name from the system
const envOwner = () => process.env.USER || process.env.USERNAME || process.env.LOGNAME || "";
export const defaultOwner = () =>
  envOwner() || (process.getuid ? `uid ${process.getuid()}@${hostname()}` : "unknown");

/**
 * Where and when a write happens, and as which session. `newSession`: the id a write uses when
 * it must choose one itself (an implicit lease, a takeover naming none); default a random one.
 * `defaultWorkflow`: the project's configured workflow (else apex); `initWorkflow`: the one a
 * suggested `init` names, as the user would type it (the configured one; none: null).
 * @typedef {{dir: string, now: number, root?: string|null, session?: string|null, owner?: string,
 *   staleSeconds?: number, defaultWorkflow?: string, initWorkflow?: string|null,
 *   newSession?: string|null, archiveKeep?: number}} Context
 */

const newSessionId = () => randomBytes(8).toString("hex");

/** Python's json.dumps(indent=2) (ASCII only), so both implementations write the same lease bytes. */
const asciiJson = (/** @type {unknown} */ v) =>
  JSON.stringify(v, null, 2).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );

/**
 * Replace the lease file atomically (temp file + rename, never following a link).
 * @param {string} dir
 * @param {import("./types.js").LeaseFile | JsonObject} sentinel
 */
export function writeSentinel(dir, sentinel) {
  const tmp = writeTemp(dir, Buffer.from(`${asciiJson(sentinel)}\n`), `.${SENTINEL}.`);
  try {
    renameSync(tmp, join(dir, SENTINEL));
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
    throw err;
  }
  fsyncDir(dir);
}

/** Whether the lease's owner pid runs on this host; null when unknowable.
 * @param {JsonObject | null} sent @returns {boolean | null} */
export function ownerAlive(sent) {
  if (!sent) return null;
  const pid = sent.pid;
  if (!Number.isInteger(pid) || pid <= 0 || sent.host !== hostname()) return null;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    const code = /** @type {NodeJS.ErrnoException} */ (err).code;
    return code === "ESRCH" ? false : code === "EPERM" ? true : null;
  }
}

/** The lease of the session directory now. @param {Context} ctx @returns {LeaseSeen} */
export function currentLease(ctx) {
  const path = join(ctx.dir, SENTINEL);
  const { lease: sent, codes } = readLease(ctx.dir);
  if (codes.length) {
    let st = null;
    try {
      st = lstatSync(path);
    } catch {
      /* absent */
    }
    if (st?.isDirectory())
      throw fail(
        "SR510",
        "the sentinel path is a directory; remove it before starting a session",
        path,
      );
  }
  let ended = false;
  if (sent !== null && !codes.length) {
    ended = endedIn(readTail(ctx.dir, LEASE_TAIL_EVENTS).events, sent.session);
  }
  const usable = sent !== null && !codes.length ? sent : null;
  /** @type {import("./types.js").LeaseState} */
  const judged =
    usable === null
      ? { state: sent === null ? "none" : "unreadable", age: null }
      : leaseState(usable, {
          now: ctx.now,
          ended,
          ownerAlive: ownerAlive(usable),
          staleSeconds: ctx.staleSeconds ?? DEFAULT_STALE_SECONDS,
        });
  return { state: judged.state, age: judged.age, sentinel: sent };
}

/**
 * What a write does about the lease: keep it, create one, adopt an implicit one (the same user,
 * now naming a session: spec §7), or take over (SR511 when a live lease of another session is
 * in the way).
 * @param {LeaseSeen} lease
 * @param {{session?: string|null, claim?: boolean, takeover?: boolean, file?: string,
 *   mint?: () => string, staleSeconds?: number}} opts
 * @returns {{action: "keep" | "create" | "adopt" | "takeover", session: string, lease: LeaseSeen,
 *   orphaned: boolean}}
 */
export function planLease(
  lease,
  {
    session = null,
    claim = false,
    takeover = false,
    file = "",
    mint = newSessionId,
    staleSeconds = DEFAULT_STALE_SECONDS,
  },
) {
  const holder = isObject(lease.sentinel) ? lease.sentinel.session : undefined;
  if (["none", "ended", "unreadable"].includes(lease.state) || typeof holder !== "string") {
    return { action: "create", session: session ?? mint(), lease, orphaned: false };
  }
  if (session !== null && session === holder)
    return { action: "keep", session: holder, lease, orphaned: false };
  const implicit = lease.sentinel?.implicit === true; // (a holder: the lease is there)
  if (lease.state === "idle") {
    // an implicit lease gone quiet: the same user's next write goes on with it (no takeover,
    // no crash); a named session or `session start` adopts it
    if (session === null && !claim)
      return { action: "keep", session: holder, lease, orphaned: false };
    return { action: "adopt", session: session ?? holder, lease, orphaned: false };
  }
  if (lease.state === "live") {
    // naming no session: an implicit lease is the caller's own; an explicit one is another
    // session's, refused below (spec §7, "Who may act on a live lease")
    if (session === null && !claim && implicit)
      return { action: "keep", session: holder, lease, orphaned: false };
    if (implicit) return { action: "adopt", session: session ?? holder, lease, orphaned: false };
    if (takeover) return { action: "takeover", session: session ?? mint(), lease, orphaned: false };
    throw refuseLive(lease, session, file, staleSeconds);
  }
  return { action: "takeover", session: session ?? mint(), lease, orphaned: true };
}

/** "session ID (owner O, pid P on H, heartbeat N s ago)": the lease's holder as refusals name
 * it (the reference's `_holder_text`). @param {{age: number|null, sentinel: any}} lease */
function holderText(lease) {
  /** @type {any} */
  const s = isObject(lease.sentinel) ? lease.sentinel : {};
  const age = lease.age === null ? "" : `, heartbeat ${Math.round(lease.age)} s ago`;
  const proc = Number.isInteger(s.pid) ? `, pid ${s.pid} on ${s.host || "?"}` : "";
  return `session ${s.session} (owner ${s.owner || "?"}${proc}${age})`;
}

/**
 * SR511: the live lease of an explicit session is in the way of a caller naming another one,
 * or naming none (the reference's services/leases.refuse_live, word for word): the holder,
 * when its lease goes stale, and what to run -- the caller's own command with `--session
 * HOLDER` if it is the caller's (the CLI puts the command line in), else a takeover only with
 * the user's consent. @param {{age: number|null, sentinel: any}} lease
 * @param {string|null} session @param {string} file @param {number} staleSeconds
 */
function refuseLive(lease, session, file, staleSeconds) {
  /** @type {any} */
  const s = isObject(lease.sentinel) ? lease.sentinel : {};
  const holder = String(s.session);
  let at = "";
  try {
    const hb = typeof s.heartbeat === "string" ? parseTimestamp(s.heartbeat) : null;
    if (hb !== null) at = ` at ${formatTimestamp(hb + staleSeconds * 1e6)}`;
  } catch {
    at = "";
  }
  const stale = `Its lease goes stale${at} unless it writes or pings again (the stale threshold: ${staleSeconds} s after the last heartbeat, \`stale_after_seconds\` in the config)`;
  let who;
  let mine;
  let takeover;
  if (session === null) {
    who = "this command named no session (`--session`): only that session may write here";
    mine = `Session ${holder} is yours only if its id appears earlier in this conversation or in your notes (a \`session start\` you ran printed it): then run the same command with \`--session ${holder}\`. If you cannot find it there, it is not yours, so`;
    takeover = "`session-resume session start --takeover`";
  } else {
    who = `session ${session} may not write here`;
    mine = "It is not yours, so";
    takeover = `\`session-resume session start --takeover --session ${session}\``;
  }
  // (a hint of its own, as the reference's diagnostic carries)
  return new WriteError([
    /** @type {any} */ ({
      code: "SR511",
      message: `${holderText(lease)} holds a live lease on this session directory and ${who}; nothing was written. ${stale}`,
      file,
      hint: `${mine} do not write: wait for that session to end or to go stale, or take over with ${takeover} only with the user's consent (logged).`,
    }),
  ]);
}

/**
 * The lease plan of a write with `ctx`.
 * @param {Context} ctx
 * @param {{claim?: boolean, takeover?: boolean, file?: string}} [opts]
 */
export const planFor = (ctx, opts = {}) =>
  planLease(currentLease(ctx), {
    session: ctx.session ?? null,
    file: join(ctx.dir, SENTINEL),
    mint: () => ctx.newSession ?? newSessionId(),
    staleSeconds: ctx.staleSeconds ?? DEFAULT_STALE_SECONDS,
    ...opts,
  });

/** @typedef {ReturnType<typeof planLease>} LeasePlan */

export class LeaseChanged extends Error {}

/**
 * Write the new lease of `plan` under the lock and log `takeover` (or `session_start`: when
 * `logStart`, and always for an adoption, naming the implicit session adopted). `implicit`:
 * the caller named no session, so a lease it creates is implicit (spec §7).
 * @param {Context} ctx
 * @param {LeasePlan} plan
 * @param {{logStart: boolean, pid?: number|null, owner?: string|null, implicit?: boolean}} opts
 */
export function acquire(ctx, plan, { logStart, pid = null, owner = null, implicit = false }) {
  const ts = formatTimestamp(ctx.now);
  /** @type {WorklogEvent[]} */
  const events = [];
  withLock(ctx.dir, () => {
    if (!sameJson(readLease(ctx.dir).lease, plan.lease.sentinel)) throw new LeaseChanged();
    /** @type {import("./types.js").LeaseFile} */
    const sentinel = {
      v: 1,
      session: plan.session,
      owner: owner || ctx.owner || defaultOwner(),
      pid,
      host: hostname(),
      started: ts,
      heartbeat: ts,
    };
    if (implicit && (plan.action === "create" || plan.action === "takeover"))
      sentinel.implicit = true;
    if (plan.action === "takeover") {
      const prev = plan.lease.sentinel ?? {};
      /** @type {Record<string, unknown>} */
      const detail = {
        previous: prev.session,
        previous_owner: prev.owner,
        orphaned: plan.orphaned,
        reason: plan.lease.state,
      };
      if (plan.lease.age !== null) detail.silent_seconds = Math.round(plan.lease.age);
      events.push(appendEvent(ctx.dir, "takeover", { ts, session: plan.session, detail }));
    } else if (logStart || plan.action === "adopt") {
      /** @type {Record<string, unknown>} */
      const detail = { owner: sentinel.owner };
      if (plan.action === "adopt") detail.adopted = plan.lease.sentinel?.session;
      if (pid !== null) detail.pid = pid;
      events.push(appendEvent(ctx.dir, "session_start", { ts, session: plan.session, detail }));
    }
    writeSentinel(ctx.dir, sentinel);
    if (plan.action === "create") created = { sentinel, logged: events.length > 0 };
  });
  return events;
}

/** @typedef {{sentinel: import("./types.js").LeaseFile, logged: boolean}} Created */
/** @type {Created | null} the lease the running write created */
let created = null;

/**
 * Run a write; a lease it created (there was none, or it had ended) is removed again when the
 * write fails after taking it (every check that can refuse a write runs before), logging
 * `session_end` with `detail.reason` `write_refused` if its start was logged: a failed write
 * leaves no lease behind (spec §7, "Refused writes").
 * @template T
 * @param {Context} ctx
 * @param {() => T} fn
 * @returns {T}
 */
export function noLeaseLeftOnFailure(ctx, fn) {
  created = null;
  try {
    return fn();
  } catch (err) {
    const mine = /** @type {Created | null} */ (created); // (set by acquire, inside fn)
    if (err instanceof WriteError && mine !== null) {
      withLock(ctx.dir, () => {
        if (!sameJson(readLease(ctx.dir).lease, mine.sentinel)) return;
        if (mine.logged)
          appendEvent(ctx.dir, "session_end", {
            ts: formatTimestamp(ctx.now),
            session: mine.sentinel.session,
            detail: { reason: "write_refused" },
          });
        unlinkSync(join(ctx.dir, SENTINEL));
      });
    }
    throw err;
  } finally {
    created = null;
  }
}

/**
 * Refresh the heartbeat of `session`'s lease (if it still holds it).
 * @param {Context} ctx
 * @param {string} session
 */
export function refresh(ctx, session) {
  withLock(ctx.dir, () => {
    const { lease: sent } = readLease(ctx.dir);
    if (!isObject(sent) || sent.session !== session) return;
    writeSentinel(ctx.dir, { ...sent, heartbeat: formatTimestamp(ctx.now) });
  });
}
// --- session start, session end, ping --------------------------------------------------------

/**
 * What `session start`, `session end` and `ping` did (the reference's SessionResult): the
 * session, the action, the worklog events logged, the lease now (null: removed) and the
 * session whose lease was adopted or taken over.
 * @typedef {{session: string|null, action: "created"|"kept"|"adopted"|"takeover"|"ended"|"none"|"refreshed",
 *   events: WorklogEvent[], lease: JsonObject|null, previousSession: string|null}} SessionResult
 */

/** A string as Python's ascii() writes it (repr, every non-ASCII character escaped).
 * @param {string} s */
const asciiRepr = (s) =>
  pyRepr(s).replace(/[^\x00-\x7f]/gu, (c) => {
    const n = /** @type {number} */ (c.codePointAt(0));
    if (n <= 0xff) return `\\x${n.toString(16).padStart(2, "0")}`;
    if (n <= 0xffff) return `\\u${n.toString(16).padStart(4, "0")}`;
    return `\\U${n.toString(16).padStart(8, "0")}`;
  });

/** SR182 (exit 2): an owner a lease cannot hold (a control character). @param {string} owner
 * @param {string} file */
function checkOwner(owner, file) {
  if (/[\x00-\x1f\x7f-\x9f\ud800-\udfff]/.test(owner))
    throw new WriteError(
      [
        {
          code: "SR182",
          message: `the owner ${asciiRepr(owner)} is not text a lease can hold (bytes that are not UTF-8, or a control character); nothing was written. Pass \`--owner NAME\` (the default is $USER)`,
          file,
        },
      ],
      2,
    );
}

/** SR183 (exit 2): a pid a lease cannot hold (the reader would call the lease unreadable).
 * @param {number|null} pid @param {string} file */
function checkPid(pid, file) {
  if (pid !== null && !(pid > 0 && pid <= PID_MAX))
    throw new WriteError(
      [
        {
          code: "SR183",
          message: `--pid ${pid} is not a process id (1..${PID_MAX}); nothing was written`,
          file,
        },
      ],
      2,
    );
}

/** Create the session directory, walked from the root (store.mjs `makeSessionDir`); a link
 * out of the root refuses the write (SR105, nothing created). @param {Context} ctx */
export function makeDir(ctx) {
  try {
    makeSessionDir(ctx.dir, ctx.root ?? ctx.dir);
  } catch (err) {
    if (err instanceof Refused)
      throw new WriteError(
        err.found?.length
          ? err.found.map((f) => ({ ...f, file: f.file ?? ctx.dir }))
          : err.codes.map((code) => ({ code, message: err.message, file: ctx.dir })),
      );
    throw err;
  }
}

/**
 * `session start`: create the lease (logging `session_start`), keep it when the caller's own
 * session holds it (refreshing the heartbeat), adopt an implicit one, take over an orphaned one,
 * or a live one with `takeover` (logging `takeover`). A live lease of another session: SR511.
 * Without `owner` and without $USER, an owner `pid` names the owner (`pid PID@HOST`).
 * @param {Context} ctx @param {{takeover?: boolean, owner?: string|null, pid?: number|null}} [opts]
 * @returns {SessionResult}
 */
export function sessionStart(ctx, { takeover = false, owner = null, pid = null } = {}) {
  const file = join(ctx.dir, SENTINEL);
  checkOwner(owner || ctx.owner || defaultOwner(), file);
  checkPid(pid, file);
  const who =
    !owner && pid !== null && (ctx.owner || defaultOwner()) === "unknown"
      ? `pid ${pid}@${hostname()}`
      : owner;
  makeDir(ctx);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const plan = planFor(ctx, { claim: true, takeover });
    if (plan.action === "keep") {
      const kept = withLock(ctx.dir, () => {
        const { lease: sent } = readLease(ctx.dir);
        if (!isObject(sent) || sent.session !== plan.session) return null;
        const now = {
          ...sent,
          heartbeat: formatTimestamp(ctx.now),
          ...(who ? { owner: who } : {}),
          ...(pid !== null ? { pid } : {}),
        };
        writeSentinel(ctx.dir, now);
        return now;
      });
      if (kept)
        return {
          session: plan.session,
          action: "kept",
          events: [],
          lease: kept,
          previousSession: null,
        };
      continue;
    }
    try {
      const events = acquire(ctx, plan, { logStart: true, pid, owner: who });
      const action =
        plan.action === "takeover" ? "takeover" : plan.action === "adopt" ? "adopted" : "created";
      const adopting = plan.action === "takeover" || plan.action === "adopt";
      return {
        session: plan.session,
        action,
        events,
        lease: readLease(ctx.dir).lease,
        previousSession: adopting ? (plan.lease.sentinel?.session ?? null) : null,
      };
    } catch (err) {
      if (err instanceof LeaseChanged) continue;
      throw err;
    }
  }
  throw new WriteError([
    /** @type {any} */ ({
      code: "SR511",
      message: "the lease keeps changing (other sessions start and end here); nothing was written",
      file: join(ctx.dir, STATE),
      hint: "Run the same command again.",
    }),
  ]);
}

/** SR511 unless the caller may act on the live `lease`: it names its session, or the lease is
 * implicit (anybody's). `session end` and `ping` never end or refresh an explicit session they
 * were not told is theirs. @param {Context} ctx @param {LeaseSeen} lease @param {string} holder */
function refuseUnlessNamed(ctx, lease, holder) {
  if (lease.state !== "live" || (ctx.session ?? null) === holder) return;
  if (lease.sentinel?.implicit === true) return;
  throw refuseLive(
    lease,
    ctx.session ?? null,
    join(ctx.dir, SENTINEL),
    ctx.staleSeconds ?? DEFAULT_STALE_SECONDS,
  );
}

/** @param {string} dir */
function isDir(dir) {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/**
 * `session end`: log `session_end` for the lease's session (unless it ended already) and remove
 * the lease; an orphan's end names why. Refused (SR511) for the live lease of an explicit
 * session the caller does not name; an implicit, ended or orphaned lease is ended by anyone.
 * `reason` `paused`: the agent stops before the step is complete (spec §7, SR720).
 * @param {Context} ctx @param {string|null} [reason] @returns {SessionResult}
 */
export function sessionEnd(ctx, reason = null) {
  /** @type {SessionResult} */
  const none = { session: null, action: "none", events: [], lease: null, previousSession: null };
  if (!isDir(ctx.dir)) return none;
  return withLock(ctx.dir, () => {
    const lease = currentLease(ctx);
    const holder = isObject(lease.sentinel) ? lease.sentinel.session : undefined;
    if (lease.state === "none" || typeof holder !== "string") return none;
    refuseUnlessNamed(ctx, lease, holder);
    /** @type {WorklogEvent[]} */
    const events = [];
    if (lease.state !== "ended") {
      /** @type {Record<string, unknown>|null} */
      let detail = null;
      if (lease.state === "stale" || lease.state === "dead_owner") {
        detail = { orphaned: true, reason: lease.state };
        if (ctx.session) detail.ended_by = ctx.session;
      } else if (reason !== null) {
        // a stop mid-step (spec §7): the next resume reports the pause (SR720)
        detail = { reason };
      }
      events.push(
        appendEvent(ctx.dir, "session_end", {
          ts: formatTimestamp(ctx.now),
          session: holder,
          detail,
        }),
      );
    }
    unlinkSync(join(ctx.dir, SENTINEL));
    return { session: holder, action: "ended", events, lease: null, previousSession: null };
  });
}

/** SR514: no lease to refresh. @param {Context} ctx */
const noLease = (ctx) =>
  fail(
    "SR514",
    `no session holds a lease in ${ctx.dir}; run \`session-resume session start\` first`,
    join(ctx.dir, SENTINEL),
  );

/**
 * `ping`: refresh the lease's heartbeat; writes only the lease (no state write, no worklog
 * line). Refused: no lease (SR514), the live lease of an explicit session the caller does not
 * name (SR511), another session's orphaned lease (SR512: a ping revives no other session).
 * @param {Context} ctx @returns {SessionResult}
 */
export function ping(ctx) {
  if (!isDir(ctx.dir)) throw noLease(ctx);
  return withLock(ctx.dir, () => {
    const lease = currentLease(ctx);
    const holder = isObject(lease.sentinel) ? lease.sentinel.session : undefined;
    if (["none", "ended", "unreadable"].includes(lease.state) || typeof holder !== "string")
      throw noLease(ctx);
    refuseUnlessNamed(ctx, lease, holder);
    const orphaned = lease.state === "stale" || lease.state === "dead_owner";
    if (orphaned && (ctx.session ?? null) !== holder)
      throw new WriteError([
        /** @type {any} */ ({
          code: "SR512",
          // an error here, whatever the catalogue's default: the ping was refused
          severity: "error",
          message: `the lease of ${holderText(lease)} is orphaned (${lease.state}); a ping does not revive another session: take it over with \`session-resume session start\` (or any write)`,
          file: join(ctx.dir, SENTINEL),
        }),
      ]);
    const sent = { ...lease.sentinel, heartbeat: formatTimestamp(ctx.now) };
    writeSentinel(ctx.dir, sent);
    return { session: holder, action: "refreshed", events: [], lease: sent, previousSession: null };
  });
}
