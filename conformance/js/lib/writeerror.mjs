// A refused write: what the write service (write.mjs) and the lease service (lease.mjs) throw,
// with the problems that say why and what to do.

/** @typedef {import("./types.js").Problem} Problem */

/** A write was refused; `problems` say why and what to do (nothing was written, except SR505). */
export class WriteError extends Error {
  /** @param {Problem[]} problems @param {number} [exitCode] */
  constructor(problems, exitCode = 1) {
    super(problems.map((p) => `${p.code} ${p.message}`).join("; "));
    this.problems = problems;
    this.codes = problems.map((p) => p.code);
    this.exitCode = exitCode;
  }
}

/** @param {string} code @param {string} message @param {string} [file] */
export const fail = (code, message, file = "") => new WriteError([{ code, message, file }]);
