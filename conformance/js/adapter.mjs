#!/usr/bin/env node
// The conformance adapter of the JavaScript implementation (docs/conformance.md,
// schema/conformance/*.json): NDJSON on stdin/stdout, `start` -> implementation info,
// `run` -> result | errored, `stop`. It runs the library's four operations (lib/operations.mjs)
// and, for the steps of a sequence case, its writes (lib/write.mjs).

import { existsSync, lstatSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { isAbsolute, join, normalize } from "node:path";
import { createInterface } from "node:readline";
import { migrateDir, recoverDir, resumeDir, validatePath } from "./lib/operations.mjs";
import { parseNow } from "./lib/timeutil.mjs";
import { LockError } from "./lib/lock.mjs";
import { loadWorkflow, WorkflowError } from "./lib/workflow.mjs";
import * as L from "./lib/lease.mjs";
import * as W from "./lib/write.mjs";

const require = createRequire(import.meta.url);
const pkg = require("./package.json");

/**
 * The session directory of a run request: `dir`, or the one `name` names as a command line would
 * (docs/spec.md §1, "Naming a session"): a project by the workflow's `session_dir` pattern under
 * the root; a relative path under the root when it exists there, else under `cwd`; `./` and
 * `../` always under `cwd`. @param {any} c @returns {string}
 */
function sessionDir(c) {
  if (c.dir) return c.dir;
  const name = c.name;
  if (name.project !== undefined) {
    const wf = loadWorkflow(c.arguments.workflow ?? "apex");
    return join(c.root, wf.sessionDir.replace("{project}", name.project));
  }
  const path = name.path;
  const cwd = c.cwd ?? c.root;
  if (isAbsolute(path)) return path;
  if (path === "." || path === ".." || path.startsWith("./") || path.startsWith("../"))
    return normalize(join(cwd, path));
  let underRoot = false;
  try {
    lstatSync(join(c.root, path));
    underRoot = true;
  } catch {
    /* not under the root */
  }
  return underRoot ? join(c.root, path) : join(cwd, path);
}

/** @type {Record<string, (ctx: any, a: any) => any>} */
const WRITES = {
  init: (ctx, a) => W.init(ctx, a.project, { workflow: a.workflow }),
  session_start: (ctx, a) => L.sessionStart(ctx, { takeover: a.takeover }),
  session_end: (ctx, a) => L.sessionEnd(ctx, a.reason ?? null),
  start: (ctx, a) => W.startStep(ctx, a.step, { force: a.force }),
  checkpoint: (ctx, a) =>
    W.checkpointStep(ctx, a.step, a.sub_step, {
      artifacts: a.artifacts,
      contextFiles: a.context_files,
    }),
  complete: (ctx, a) => W.completeStep(ctx, a.step),
  skip: (ctx, a) => W.skipStep(ctx, a.step, a.reason, { force: a.force }),
  decide: (ctx, a) => W.decide(ctx, a.key, a.value),
  transition: (ctx, a) => W.transition(ctx, a.complete, a.start, a.decisions, { force: a.force }),
  approve: (ctx, a) => W.approve(ctx, a.step, a.decisions ?? {}),
};

/** A write of a sequence: written, the refusal's codes, the session and revision it wrote. @param {any} c */
function write(c) {
  const a = c.arguments;
  const dir = sessionDir(c);
  const isDir = existsSync(dir) && statSync(dir).isDirectory();
  if (c.operation !== "init" && !isDir)
    return { written: false, codes: ["SR100"], session: null, revision: null };
  const ctx = {
    dir,
    now: parseNow(c.now),
    root: c.root,
    session: a.session,
    owner: a.owner,
    staleSeconds: a.stale_seconds,
    newSession: a.new_session,
  };
  try {
    const res = WRITES[c.operation](ctx, a);
    return {
      written: res.action !== "none",
      codes: [],
      session: res.session,
      revision: res.revision ?? null,
    };
  } catch (err) {
    const e = /** @type {any} */ (err);
    if (e instanceof W.WriteError || e instanceof WorkflowError || e instanceof LockError) {
      return {
        written: false,
        codes: [...new Set(/** @type {string[]} */ (e.codes))].sort(),
        session: null,
        revision: null,
      };
    }
    throw err;
  }
}

/** @type {Record<string, (c: any) => object>} */
const OPS = {
  validate: (c) => {
    const a = c.arguments;
    return {
      codes: validatePath(a.path, {
        workflow: a.workflow,
        now: parseNow(c.now),
        skew: a.skew_seconds,
        maxSize: a.max_size,
        root: c.root,
        checkArtifacts: a.check_artifacts,
      }),
    };
  },
  migrate: (c) => {
    const a = c.arguments;
    const out = migrateDir(sessionDir(c), {
      now: parseNow(c.now),
      root: c.root,
      workflow: a.workflow,
      salvage: a.salvage === true,
    });
    return { status: out.status, codes: out.codes };
  },
  recover: (c) => {
    const out = recoverDir(sessionDir(c), {
      now: parseNow(c.now),
      root: c.root,
      workflow: c.arguments.workflow,
      project: c.arguments.project,
    });
    return { status: out.status, codes: out.codes };
  },
  resume: (c) => {
    const a = c.arguments;
    return {
      decision: resumeDir(sessionDir(c), {
        now: parseNow(c.now),
        root: c.root,
        step: a.step,
        workflow: a.workflow,
        session: a.session,
        staleSeconds: a.stale_seconds,
        takeover: a.takeover,
        ownerAlive: a.owner_alive,
      }),
    };
  },
  ...Object.fromEntries(Object.keys(WRITES).map((op) => [op, write])),
};

/** @param {any} msg */
function handle(msg) {
  if (msg.cmd === "start") {
    return {
      version: 1,
      implementation: {
        name: "session-resume-js",
        language: "javascript",
        version: pkg.version,
        source: "conformance/js (npm package session-resume)",
        notes: `Node ${process.versions.node}, ajv ${require("ajv/package.json").version}, yaml ${require("yaml/package.json").version}`,
      },
      operations: Object.keys(OPS),
    };
  }
  if (msg.cmd === "run") {
    try {
      return { seq: msg.seq, result: OPS[msg.case.operation](msg.case) };
    } catch (err) {
      const e = /** @type {any} */ (err);
      return {
        seq: msg.seq,
        errored: {
          message: String(e?.message ? e.message : e),
          traceback: String(e?.stack ? e.stack : ""),
        },
      };
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
  if (answer !== null) process.stdout.write(`${JSON.stringify(answer)}\n`);
});
rl.on("close", () => process.exit(0));
