#!/usr/bin/env node
// session-resume in JavaScript: a second, independent implementation of the validate, migrate,
// recover and resume operations (docs/spec.md), and its conformance adapter. It speaks the
// adapter protocol (docs/conformance.md, schema/conformance/*.json): NDJSON on stdin/stdout,
// `start` -> implementation info, `run` -> result | skipped | errored, `stop`.
//
// Dependencies: Node >= 20 and ajv + ajv-formats only; the JSON Schemas are read from the
// repository's schema/ directory (or $SESSION_RESUME_SCHEMA_DIR).

import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { isCorrupt, readJsonBytes } from "./lib/jsonstrict.mjs";
import { readLimited, real } from "./lib/files.mjs";
import { migrate, MigrationError } from "./lib/migrate.mjs";
import { decide, snapshot } from "./lib/resume.mjs";
import { setSchemaDir } from "./lib/schema.mjs";
import { STATE } from "./lib/session.mjs";
import { checkPaths, logEvent, recover, Refused, replaceState, serialize } from "./lib/store.mjs";
import { formatTimestamp, parseNow } from "./lib/timestamps.mjs";
import { validate } from "./lib/validate.mjs";
import { loadWorkflow, WorkflowError } from "./lib/workflow.mjs";

const here = dirname(fileURLToPath(import.meta.url));
setSchemaDir(process.env.SESSION_RESUME_SCHEMA_DIR ?? resolve(here, "..", "..", "..", "schema"));
const require = createRequire(import.meta.url);
const VERSION = "0.1.0";
const unique = (codes) => [...new Set(codes)].sort();

function opValidate(c) {
  const a = c.arguments;
  const codes = validate(a.path, {
    workflow: a.workflow,
    now: parseNow(c.now),
    skew: a.skew_seconds,
    maxSize: a.max_size,
    root: c.root,
    checkArtifacts: a.check_artifacts,
  });
  return { codes };
}

function opMigrate(c) {
  const now = parseNow(c.now);
  const dir = c.dir;
  try {
    checkPaths(dir, c.root);
  } catch (err) {
    if (err instanceof Refused) return { status: "refused", codes: err.codes };
    throw err;
  }
  let wf = null;
  try {
    wf = c.arguments.workflow ? loadWorkflow(c.arguments.workflow) : null;
  } catch (err) {
    if (err instanceof WorkflowError) return { status: "refused", codes: unique(err.codes) };
    throw err;
  }
  const res = readLimited(join(dir, STATE), { root: c.root });
  if (!res.data) return { status: "refused", codes: unique(res.codes) };
  const parsed = readJsonBytes(res.data);
  if (parsed.value === null || isCorrupt(parsed.codes)) return { status: "refused", codes: unique([...parsed.codes, "SR152"]) };
  let result;
  try {
    result = migrate(parsed.value, { now, workflow: wf, projectHint: basename(real(dir) ?? dir) });
  } catch (err) {
    if (err instanceof MigrationError) return { status: "refused", codes: unique(err.codes) };
    throw err;
  }
  if (!result.changed) return { status: "current", codes: [] };
  const doc = result.document;
  const prev = doc.revision;
  doc.revision = (Number.isInteger(prev) ? prev : 0) + 1;
  doc.updated = formatTimestamp(now);
  replaceState(dir, serialize(doc), { rotate: true, always: true });
  const extra = logEvent(dir, "migrated", { ts: formatTimestamp(now), detail: { from: result.from, to: "3.0" } });
  return { status: "migrated", codes: unique([...result.codes, ...extra]) };
}

function opRecover(c) {
  const a = c.arguments;
  try {
    const out = recover(c.dir, c.root, { now: parseNow(c.now), workflow: a.workflow, project: a.project });
    return { status: out.status, codes: unique(out.codes) };
  } catch (err) {
    if (err instanceof WorkflowError) return { status: "refused", codes: unique(err.codes) };
    throw err;
  }
}

function opResume(c) {
  const a = c.arguments;
  const snap = snapshot(c.dir, c.root, a.owner_alive);
  const wf = loadWorkflow(a.workflow ?? (snap.doc && typeof snap.doc.workflow === "string" ? snap.doc.workflow : null) ?? "apex");
  const decision = decide(snap, a.step, parseNow(c.now), wf, {
    session: a.session,
    staleSeconds: a.stale_seconds,
    takeover: a.takeover,
  });
  return { decision };
}

const OPS = { validate: opValidate, migrate: opMigrate, recover: opRecover, resume: opResume };

function handle(msg) {
  if (msg.cmd === "start") {
    return {
      version: 1,
      implementation: {
        name: "session-resume-js",
        language: "javascript",
        version: VERSION,
        source: "conformance/adapters/node",
        notes: `Node ${process.versions.node}, ajv ${require("ajv/package.json").version}`,
      },
      operations: Object.keys(OPS),
    };
  }
  if (msg.cmd === "run") {
    try {
      return { seq: msg.seq, result: OPS[msg.case.operation](msg.case) };
    } catch (err) {
      return { seq: msg.seq, errored: { message: String(err && err.message ? err.message : err), traceback: String(err && err.stack ? err.stack : "") } };
    }
  }
  return null;
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  if (msg.cmd === "stop") {
    rl.close();
    process.exit(0);
  }
  const answer = handle(msg);
  if (answer !== null) process.stdout.write(JSON.stringify(answer) + "\n");
});
rl.on("close", () => process.exit(0));
