#!/usr/bin/env node
// The conformance adapter of the JavaScript implementation (docs/conformance.md,
// schema/conformance/*.json): NDJSON on stdin/stdout, `start` -> implementation info,
// `run` -> result | errored, `stop`. It runs the library's four operations (lib/operations.mjs).

import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { migrateDir, recoverDir, resumeDir, validatePath } from "./lib/operations.mjs";
import { parseNow } from "./lib/timeutil.mjs";

const require = createRequire(import.meta.url);
const pkg = require("./package.json");

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
    const out = migrateDir(c.dir, {
      now: parseNow(c.now),
      root: c.root,
      workflow: a.workflow,
      salvage: a.salvage === true,
    });
    return { status: out.status, codes: out.codes };
  },
  recover: (c) => {
    const out = recoverDir(c.dir, {
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
      decision: resumeDir(c.dir, {
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
