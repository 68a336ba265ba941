// Compiled by `npm run typecheck` only (tsc --noEmit): uses the declared API the way a
// TypeScript consumer would, so a declaration that does not fit the API fails the check.
import * as sr from "session-resume";

const now: sr.Micros = sr.parseNow("2026-03-02T12:00:00Z");
const codes: sr.Code[] = sr.validate("agent-output/demo", { now, root: "." });
const decision: sr.ResumeDecision = sr.resume("agent-output/demo", { now, root: "." });
const ctx: sr.Context = { dir: "agent-output/demo", now, session: "s1" };
const res: sr.WriteResult = sr.start(ctx, "1", { force: false });
const audited: sr.WriteResult = sr.reviewAudit(ctx, "1", { complexity: "standard", skipped: [2] });
const lease: sr.SessionResult = sr.ping(ctx);
const ended: "ended" | "none" = sr.sessionEnd(ctx).action;
const wf: sr.Workflow = sr.loadWorkflow("apex");
const doc: sr.StateDocument = sr.transitions.complete(res.document, wf, "1", now);
const ids: string[] = sr.builtins();
const exit: number = sr.cli(["validate", "--format", "json"]);
const migrated: sr.MigrateResult = sr.migrate("agent-output/demo", {
  now,
  root: ".",
  salvage: true,
});
const fix: "migrate" | "migrate --salvage" | null = sr.repairCommand(doc, { now });
const rec: sr.RecoverResult = sr.recover("agent-output/demo", { now, root: "." });
const notes: sr.MigrationNote[] = sr.migrateDocument(doc, { now, salvage: false }).notes;
const toRead: string[] = decision.briefing ? decision.briefing.load.map((f) => f.path) : [];
export const used = [
  toRead,
  codes,
  decision.action,
  doc,
  ids,
  exit,
  sr.CURRENT,
  migrated.notes,
  fix,
  rec.migratedFrom,
  rec.backupProblems,
  notes,
  audited.revision,
  lease.lease,
  ended,
];
