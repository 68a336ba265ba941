// The code catalogue (the twin of validator/session_resume/core/codes.py): lib/codes.json,
// generated from the Python catalogue by `nox -s docs`, read once here; and the package's
// version, which every report names.

import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/** @typedef {{name: string, severity: "error" | "warning" | "info", summary: string, fix: string}} CodeEntry */

/** Every code's name, severity, summary and fix. @type {Readonly<Record<string, CodeEntry>>} */
export const CODES = Object.freeze(require("./codes.json"));

/** This package's version (package.json). @type {string} */
export const VERSION = require("../package.json").version;

/** A code's severity ("error" for a code the catalogue does not know). @param {string} code */
export const severity = (code) => CODES[code]?.severity ?? "error";
