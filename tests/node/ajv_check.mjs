#!/usr/bin/env node
// Portability check of the session-resume JSON Schemas with ajv (Node), strict mode.
//
// Reads one JSON request on stdin (paths are relative to the cwd, the repository root):
//   {"schemas": ["schema/session-state/3.0.json", ...],
//    "cases": [{"schema": "schema/session-state/3.0.json",
//               "instance_file": "tests/fixtures/schema/3.0/valid/x.json"}, ...]}
//   A case may carry the instance itself ("instance": {...}); its "instance_file" is then
//   only its label (e.g. "conformance/cases/x/y/files/00-worklog.jsonl:3").
// Prints one JSON object on stdout:
//   {"compiled": {"<schema path>": true | "<error message>"},
//    "results": [{"instance_file", "schema", "valid", "errors": [{"instancePath", "keyword", ...}]}],
//    "warnings": {"<schema path>": ["<ajv log message>", ...]}, "ajv_version": "..."}
// Exit status: 0 whenever the request could be answered (invalid instances and schemas that do
// not compile are results, not failures); 1 only on a crash (bad request, unreadable file, ...).
// No network: schemas are only ever loaded from the files named in the request.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const require = createRequire(import.meta.url);

function readStdin() {
  return readFileSync(0, "utf8");
}

function readJson(path) {
  return JSON.parse(readFileSync(path, "utf8"));
}

function main() {
  const request = JSON.parse(readStdin());
  const schemaPaths = Array.isArray(request.schemas) ? [...request.schemas] : [];
  const cases = Array.isArray(request.cases) ? request.cases : [];
  for (const c of cases) {
    if (typeof c.schema !== "string" || typeof c.instance_file !== "string") {
      throw new Error(`bad case in request: ${JSON.stringify(c)}`);
    }
    if (!schemaPaths.includes(c.schema)) schemaPaths.push(c.schema);
  }

  // ajv logs strict-mode "log" messages and other warnings through its logger; keep stdout
  // for the one JSON answer and record what was logged per schema.
  let current = null;
  const warnings = {};
  const record = (...args) => {
    const msg = args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ");
    process.stderr.write(`ajv: ${current ?? "-"}: ${msg}\n`);
    if (current) (warnings[current] ??= []).push(msg);
  };
  const ajv = new Ajv2020({
    strict: true,
    allowUnionTypes: true,
    allErrors: true,
    logger: { log: record, warn: record, error: record },
  });
  addFormats(ajv);
  // VS Code's JSON language service reads these annotations (hovers, enum hovers and
  // completions, snippets); declared here so that strict mode knows them as annotations.
  // Any other unknown keyword is still an error.
  ajv.addVocabulary(["markdownDescription", "enumDescriptions", "markdownEnumDescriptions", "defaultSnippets"]);

  // Phase 1: register every schema (by its path, and by its $id so that cross-file $refs
  // resolve locally). Phase 2: compile each one; strict-mode errors are thrown here.
  const compiled = {};
  for (const path of schemaPaths) {
    current = path;
    try {
      ajv.addSchema(readJson(path), path);
    } catch (err) {
      compiled[path] = String(err && err.message ? err.message : err);
    }
  }
  const validators = {};
  for (const path of schemaPaths) {
    current = path;
    if (path in compiled) continue;
    try {
      const validate = ajv.getSchema(path);
      if (!validate) throw new Error(`schema ${path} was not registered`);
      validators[path] = validate;
      compiled[path] = true;
    } catch (err) {
      compiled[path] = String(err && err.message ? err.message : err);
    }
  }
  current = null;

  const results = [];
  for (const c of cases) {
    const validate = validators[c.schema];
    const instance = "instance" in c ? c.instance : readJson(c.instance_file);
    if (!validate) {
      results.push({ instance_file: c.instance_file, schema: c.schema, valid: null,
                     errors: [], error: `schema did not compile: ${compiled[c.schema]}` });
      continue;
    }
    const valid = validate(instance);
    const errors = (validate.errors ?? []).map((e) => ({
      instancePath: e.instancePath,
      keyword: e.keyword,
      schemaPath: e.schemaPath,
      message: e.message ?? "",
    }));
    results.push({ instance_file: c.instance_file, schema: c.schema, valid: Boolean(valid),
                   errors });
  }

  const ajvVersion = require("ajv/package.json").version;
  process.stdout.write(JSON.stringify({ compiled, results, warnings, ajv_version: ajvVersion }));
  process.stdout.write("\n");
}

try {
  main();
} catch (err) {
  process.stderr.write(`ajv_check: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
}
