// The session commands of the CLI: `session start`, `session end` and `ping` (the lease
// 00-session.active), with the reference's options, output (text and --format json) and exit
// codes (cli/commands/write.py). The services are lease.mjs's; the CLI's parsing, naming and
// refusals come in as `kit` (lib/cli.mjs), so this module imports nothing from it.

import { ping, sessionEnd, sessionStart } from "../lease.mjs";
import { intValue, joinNegatives } from "./options.mjs";

/** @typedef {typeof import("../cli.mjs").KIT} Kit */
/** @typedef {import("../lease.mjs").SessionResult} SessionResult */

/** The answer of `session start|end` and `ping` as JSON (the reference's SessionResult.to_json).
 * @param {SessionResult} res */
export function sessionJson(res) {
  /** @type {Record<string, unknown>} */
  const out = {
    ok: true,
    session: res.session,
    action: res.action,
    events: res.events,
    lease: res.lease,
  };
  if (res.previousSession !== null) out.previous_session = res.previousSession;
  return out;
}

/** @param {Kit} kit @returns {Record<string, (argv: string[]) => number>} */
export function sessionCommands(kit) {
  /** @param {SessionResult} res @param {string} format @param {string} text */
  const answer = (res, format, text) => {
    if (format === "json") kit.emit(sessionJson(res));
    else process.stdout.write(kit.clean(text));
    return kit.EXIT_OK;
  };

  /** @param {string[]} argv */
  const start = (argv) => {
    const { values: v, positionals } = kit.parse(joinNegatives(argv, ["--pid"]), {
      ...kit.SESSION_OPTIONS,
      owner: { type: "string" },
      pid: { type: "string" },
      takeover: { type: "boolean", default: false },
    });
    if (positionals.length) throw kit.usage(`unrecognized arguments: ${positionals.join(" ")}`);
    const pid = intValue(v.pid, "pid", kit.usage);
    return kit.guarded(v.format, () => {
      const res = sessionStart(kit.context(v), {
        owner: v.owner ?? null,
        pid,
        takeover: v.takeover,
      });
      if (v.format === "text" && res.action === "adopted")
        process.stderr.write(
          kit.clean(
            `session-resume: adopted the lease of session ${res.previousSession}, taken by earlier writes that named no session (logged)\n`,
          ),
        );
      if (v.format === "text" && res.action === "takeover")
        process.stderr.write(
          kit.clean(
            `session-resume: took over the lease of session ${res.previousSession} (logged)\n`,
          ),
        );
      return answer(res, v.format, `${res.session}\n`);
    });
  };

  /** @param {string[]} argv */
  const end = (argv) => {
    const { values: v, positionals } = kit.parse(argv, {
      ...kit.SESSION_OPTIONS,
      reason: { type: "string" },
    });
    if (positionals.length) throw kit.usage(`unrecognized arguments: ${positionals.join(" ")}`);
    // paused: the step in progress stops here and is continued by the next chat (spec §7)
    if (v.reason !== undefined && v.reason !== "paused")
      throw kit.usage(`--reason: invalid choice: ${JSON.stringify(v.reason)} (choose paused)`);
    return kit.guarded(v.format, () => {
      const res = sessionEnd(kit.context(v), v.reason === "paused" ? "paused" : null);
      const text = res.session ? `session ${res.session} ended\n` : "no active session\n";
      return answer(res, v.format, text);
    });
  };

  return {
    session(argv) {
      const [action, ...rest] = argv;
      if (action === "start") return start(rest);
      if (action === "end") return end(rest);
      throw kit.usage(
        action === undefined || action.startsWith("-")
          ? "session takes an ACTION first: start or end"
          : `session: invalid choice: ${JSON.stringify(action)} (choose start or end)`,
      );
    },
    ping(argv) {
      const { values: v, positionals } = kit.parse(argv, kit.SESSION_OPTIONS);
      if (positionals.length) throw kit.usage(`unrecognized arguments: ${positionals.join(" ")}`);
      return kit.guarded(v.format, () => {
        const res = ping(kit.context(v));
        const hb = res.lease?.heartbeat ?? "None";
        return answer(res, v.format, `session ${res.session}: heartbeat ${hb}\n`);
      });
    },
  };
}
