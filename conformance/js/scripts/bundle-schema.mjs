#!/usr/bin/env node
// Bundle the protocol data into the package at pack time (npm `prepack`): the repository's
// top-level schema/ (JSON Schemas and workflows/*.yaml), the one source, is copied to
// ./schema; `--clean` (npm `postpack`) removes the copy again so a checkout never reads a stale
// one. `--check` compares an existing bundle with the source and exits 1 on any difference.

import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const source = resolve(pkg, "..", "..", "schema");
const target = join(pkg, "schema");
const PROTOCOL = /\.(json|yaml)$/;

/** @param {string} dir @returns {string[]} */
function files(dir) {
  /** @type {string[]} */
  const out = [];
  const walk = (/** @type {string} */ d) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (PROTOCOL.test(name)) out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out;
}

const mode = process.argv[2] ?? "--bundle";
if (mode === "--clean") {
  rmSync(target, { recursive: true, force: true });
} else if (mode === "--check") {
  const want = files(source);
  const have = existsSync(target) ? files(target) : [];
  const problems = [
    ...want.filter((f) => !have.includes(f)).map((f) => `missing: ${f}`),
    ...have.filter((f) => !want.includes(f)).map((f) => `extra: ${f}`),
    ...want
      .filter(
        (f) =>
          have.includes(f) && !readFileSync(join(source, f)).equals(readFileSync(join(target, f))),
      )
      .map((f) => `differs: ${f}`),
  ];
  for (const p of problems) process.stderr.write(`schema bundle ${p}\n`);
  process.exitCode = problems.length ? 1 : 0;
} else {
  if (!existsSync(join(source, "session-state"))) {
    process.stderr.write(
      `bundle-schema: no schema directory at ${source}; pack from a checkout of the repository\n`,
    );
    process.exit(1);
  }
  rmSync(target, { recursive: true, force: true });
  for (const f of files(source)) cpSync(join(source, f), join(target, f));
  process.stdout.write(
    `bundled ${files(target).length} protocol files from ${relative(process.cwd(), source) || "."}\n`,
  );
}
