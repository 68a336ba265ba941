// session-resume in JavaScript: the library API. See README.md and index.d.ts.
//
// Read side: validate, migrate, recover, the resume decision. Write side: the write moments
// (init, start, checkpoint, complete, skip, decide, logDecision, finding, reviewAudit,
// transition, approve), each one atomic save under the lock with its worklog event and the
// lease; the session's lease (sessionStart, sessionEnd, ping). Protocol data (schemas,
// built-in workflows) comes from the bundled schema/ (see lib/schema.mjs).

export {
  validatePath as validate,
  migrateDir as migrate,
  recoverDir as recover,
  resumeDir as resume,
} from "./lib/operations.mjs";
export { validateDocument, validateReport } from "./lib/validate.mjs";
export { migrate as migrateDocument, MigrationError, repairCommand } from "./lib/migrate.mjs";
export { decide as decideResume, snapshot } from "./lib/resume.mjs";
export { classify, load, Refused, serialize } from "./lib/store.mjs";
export { readJsonBytes } from "./lib/jsonread.mjs";
export { parseYaml, YamlError } from "./lib/yaml.mjs";
export { builtins, loadWorkflow, templateState, WorkflowError } from "./lib/workflow.mjs";
export { CURRENT, KNOWN, versionOf } from "./lib/versions.mjs";
export { getSchemaDir, setSchemaDir } from "./lib/schema.mjs";
export { formatTimestamp, parseNow, parseTimestamp } from "./lib/timeutil.mjs";
export { withLock, LockError } from "./lib/lock.mjs";
export * as transitions from "./lib/transitions.mjs";
export {
  approve,
  checkpointStep as checkpoint,
  completeStep as complete,
  decide,
  finding,
  init,
  logDecision,
  reviewAudit,
  save,
  skipStep as skip,
  startStep as start,
  transition,
  WriteError,
} from "./lib/write.mjs";
export { ping, sessionEnd, sessionStart } from "./lib/lease.mjs";
export { main as cli } from "./lib/cli.mjs";
