// The CLI's `review-audit STEP` (write moment 6, how a step's challenger review ran), with the
// reference's options, output (text and --format json) and exit codes (cli/commands/write.py).
// The write is write.mjs's; the CLI's parsing, naming and refusals come in as `kit`
// (lib/cli.mjs), so this module imports nothing from it.

import { reviewAudit } from "../write.mjs";
import { intValue, joinNegatives } from "./options.mjs";

/** @typedef {typeof import("../cli.mjs").KIT} Kit */

const COUNTS = ["--passes-planned", "--passes-executed", "--skipped-pass"];

/** @param {Kit} kit @returns {Record<string, (argv: string[]) => number>} */
export function reviewCommands(kit) {
  return {
    "review-audit"(argv) {
      const { values: v, positionals } = kit.parse(joinNegatives(argv, COUNTS), {
        ...kit.SESSION_OPTIONS,
        complexity: { type: "string" },
        "passes-planned": { type: "string" },
        "passes-executed": { type: "string" },
        model: { type: "string", multiple: true, default: [] },
        "skipped-pass": { type: "string", multiple: true, default: [] },
        "skip-reason": { type: "string", multiple: true, default: [] },
      });
      if (positionals.length !== 1) throw kit.usage("review-audit takes one STEP");
      const [step] = positionals;
      const audit = {
        complexity: v.complexity ?? null,
        passesPlanned: intValue(v["passes-planned"], "passes-planned", kit.usage),
        passesExecuted: intValue(v["passes-executed"], "passes-executed", kit.usage),
        models: v.model,
        skipped: v["skipped-pass"].map(
          (/** @type {string} */ n) =>
            /** @type {number} */ (intValue(n, "skipped-pass", kit.usage)),
        ),
        skipReasons: v["skip-reason"],
      };
      return kit.guarded(v.format, () => {
        const res = reviewAudit(kit.context(v), step, audit);
        const e = res.document.review_audit[`step_${step}`];
        const tier = e.complexity || "no tier";
        return kit.emitWrite(
          res,
          v.format,
          `review audit of ${kit.stepLabel(res, step)}: ${e.passes_executed} of ${e.passes_planned} passes run (${tier})`,
        );
      });
    },
  };
}
