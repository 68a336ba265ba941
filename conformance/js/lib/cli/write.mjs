// The CLI's write moments: `init`, `start`, `checkpoint`, `complete`, `skip`, `decide` (and
// `decide --log`), `finding add|resolve`, `transition` and `approve`, with the reference's options, output
// (text and --format json) and exit codes (cli/commands/write.py). The writes are write.mjs's;
// the CLI's parsing, naming and refusals come in as `kit` (lib/cli.mjs), so this module imports
// nothing from it.

import { join } from "node:path";
import { STATE } from "../session.mjs";
import * as W from "../write.mjs";

/** @typedef {typeof import("../cli.mjs").KIT} Kit */

/** `--decision K=V ...` (transition, approve) as `{K: V}`; a usage error for an item without `=`.
 * @param {string[]} items @param {Kit} kit @returns {Record<string, string>} */
function decisionsOf(items, kit) {
  /** @type {Record<string, string>} */
  const decisions = {};
  for (const item of items) {
    const at = item.indexOf("=");
    if (at <= 0) throw kit.usage(`--decision ${JSON.stringify(item)}: expected KEY=VALUE`);
    decisions[item.slice(0, at)] = item.slice(at + 1);
  }
  return decisions;
}

/** @param {Kit} kit @returns {Record<string, (argv: string[]) => number>} */
export function writeCommands(kit) {
  return {
    init(argv) {
      const { values: v, positionals } = kit.parse(argv, {
        ...kit.SESSION_OPTIONS,
        workflow: { type: "string" },
        fresh: { type: "boolean", default: false },
      });
      if (positionals.length !== 1) throw kit.usage("init takes one PROJECT");
      return kit.guarded(v.format, () => {
        const ctx = kit.context(v, positionals[0]);
        const res = W.init(ctx, positionals[0], { workflow: v.workflow ?? null, fresh: v.fresh });
        if (v.format === "text" && res.archivedTo)
          process.stdout.write(`archived the previous session's files to ${res.archivedTo}\n`);
        const steps = Object.keys(res.document?.steps ?? {}).length;
        return kit.emitWrite(
          res,
          v.format,
          `initialised ${kit.hereRelative(join(ctx.dir, STATE))} (project ${positionals[0]}, workflow ${res.document?.workflow}, ${steps} steps pending); session ${res.session} holds the lease: name it in every later write (--session ${res.session})`,
        );
      });
    },
    start(argv) {
      const { values: v, positionals } = kit.parse(argv, {
        ...kit.SESSION_OPTIONS,
        force: { type: "boolean", default: false },
        name: { type: "string" },
      });
      if (positionals.length !== 1) throw kit.usage("start takes one STEP");
      return kit.guarded(v.format, () => {
        const res = W.startStep(kit.context(v), positionals[0], {
          force: v.force,
          name: v.name ?? null,
        });
        const detail = /** @type {any} */ (res.event)?.detail ?? {};
        const extra = detail.restart ? `, restarted (attempt ${detail.attempts ?? "None"})` : "";
        return kit.emitWrite(
          res,
          v.format,
          `${kit.stepLabel(res, positionals[0])}: in_progress${extra}`,
        );
      });
    },
    checkpoint(argv) {
      const { values: v, positionals } = kit.parse(argv, {
        ...kit.SESSION_OPTIONS,
        artifact: { type: "string", multiple: true, default: [] },
        "context-file": { type: "string", multiple: true, default: [] },
      });
      if (positionals.length !== 2) throw kit.usage("checkpoint takes STEP SUB_STEP");
      return kit.guarded(v.format, () => {
        const res = W.checkpointStep(kit.context(v), positionals[0], positionals[1], {
          artifacts: v.artifact,
          contextFiles: v["context-file"],
        });
        const sub = res.document.steps[positionals[0]].sub_step;
        return kit.emitWrite(
          res,
          v.format,
          `${kit.stepLabel(res, positionals[0])}: checkpoint ${sub}`,
        );
      });
    },
    complete(argv) {
      const { values: v, positionals } = kit.parse(argv, kit.SESSION_OPTIONS);
      if (positionals.length !== 1) throw kit.usage("complete takes one STEP");
      return kit.guarded(v.format, () => {
        const res = W.completeStep(kit.context(v), positionals[0]);
        return kit.emitWrite(res, v.format, `${kit.stepLabel(res, positionals[0])}: complete`);
      });
    },
    skip(argv) {
      const { values: v, positionals } = kit.parse(argv, {
        ...kit.SESSION_OPTIONS,
        reason: { type: "string" },
        force: { type: "boolean", default: false },
      });
      if (positionals.length !== 1) throw kit.usage("skip takes one STEP");
      if (v.reason === undefined) throw kit.usage("skip needs --reason");
      return kit.guarded(v.format, () => {
        const res = W.skipStep(kit.context(v), positionals[0], v.reason, { force: v.force });
        return kit.emitWrite(
          res,
          v.format,
          `${kit.stepLabel(res, positionals[0])}: skipped (${v.reason})`,
        );
      });
    },
    decide(argv) {
      const { values: v, positionals } = kit.parse(argv, {
        ...kit.SESSION_OPTIONS,
        log: { type: "boolean", default: false },
        title: { type: "string" },
        choice: { type: "string" },
        rationale: { type: "string" },
        step: { type: "string" },
        alternative: { type: "string", multiple: true, default: [] },
      });
      if (v.log) {
        if (positionals.length)
          throw kit.usage("decide --log takes no KEY VALUE (use --title, --choice, --rationale)");
        const missing = ["title", "choice", "rationale"].filter((o) => !v[o]);
        if (missing.length)
          throw kit.usage(`decide --log needs ${missing.map((m) => `--${m}`).join(", ")}`);
        return kit.guarded(v.format, () => {
          const res = W.logDecision(kit.context(v), {
            title: v.title,
            choice: v.choice,
            rationale: v.rationale,
            step: v.step ?? null,
            alternatives: v.alternative,
          });
          const entry = res.document.decision_log.at(-1);
          return kit.emitWrite(
            res,
            v.format,
            `decision ${entry.id} logged: ${v.title} → ${v.choice}`,
          );
        });
      }
      if (positionals.length !== 2)
        throw kit.usage("decide needs KEY VALUE, or --log --title T --choice C --rationale R");
      if (v.title || v.choice || v.rationale || v.step || v.alternative.length)
        throw kit.usage("--title, --choice, --rationale, --step and --alternative go with --log");
      return kit.guarded(v.format, () =>
        kit.emitWrite(
          W.decide(kit.context(v), positionals[0], positionals[1]),
          v.format,
          `decision ${positionals[0]} = ${positionals[1]}`,
        ),
      );
    },
    finding(argv) {
      const [action, ...rest] = argv;
      if (action !== "add" && action !== "resolve")
        throw kit.usage("finding takes add or resolve, then TITLE");
      const { values: v, positionals } = kit.parse(rest, kit.SESSION_OPTIONS);
      if (positionals.length !== 1) throw kit.usage(`finding ${action} takes one TITLE`);
      return kit.guarded(v.format, () => {
        const res = W.finding(kit.context(v), action, positionals[0]);
        const n = (res.document.open_findings ?? []).length;
        const verb = action === "add" ? "added" : "resolved";
        return kit.emitWrite(res, v.format, `finding ${verb}: ${positionals[0]} (${n} open)`);
      });
    },
    transition(argv) {
      const { values: v, positionals } = kit.parse(argv, {
        ...kit.SESSION_OPTIONS,
        complete: { type: "string" },
        start: { type: "string" },
        decision: { type: "string", multiple: true, default: [] },
        force: { type: "boolean", default: false },
      });
      if (positionals.length || !v.complete || !v.start)
        throw kit.usage("transition needs --complete A --start B");
      const decisions = decisionsOf(v.decision, kit);
      return kit.guarded(v.format, () => {
        const res = W.transition(kit.context(v), v.complete, v.start, decisions, {
          force: v.force,
        });
        let text = `${kit.stepLabel(res, v.complete)}: complete; ${kit.stepLabel(res, v.start)}: in_progress`;
        const given = Object.entries(decisions);
        if (given.length) text += `; decisions: ${given.map(([k, x]) => `${k}=${x}`).join(", ")}`;
        return kit.emitWrite(res, v.format, text);
      });
    },
    approve(argv) {
      const { values: v, positionals } = kit.parse(argv, {
        ...kit.SESSION_OPTIONS,
        decision: { type: "string", multiple: true, default: [] },
      });
      if (positionals.length !== 1) throw kit.usage("approve takes one STEP");
      const decisions = decisionsOf(v.decision, kit);
      return kit.guarded(v.format, () => {
        const res = W.approve(kit.context(v), positionals[0], decisions);
        const entry = res.document.decision_log.at(-1);
        let text = `${entry.gate} of ${kit.stepLabel(res, positionals[0])}: approved (${entry.id})`;
        const given = Object.entries(decisions);
        if (given.length) text += `; decisions: ${given.map(([k, x]) => `${k}=${x}`).join(", ")}`;
        return kit.emitWrite(res, v.format, text);
      });
    },
  };
}
