// What the repository's git history says about a session, read-only (spec §10, SR708): how
// many commits since a time touched the repository outside the session directory. Git runs
// with optional locks off (nothing written); any failure (no git, not a repository, no commits,
// a timeout) is an unknown count, never an error. Mirrors storage/gitlog.py.

import { spawnSync } from "node:child_process";
import { formatTimestamp } from "./timeutil.mjs";

const TIMEOUT_MS = 5000;

/**
 * @param {string} root the repository root
 * @param {number} since microseconds since the epoch
 * @param {string | null} sessionRel the session directory, repository-relative
 * @returns {number | null}
 */
export function commitsSince(root, since, sessionRel) {
  const spec = ["--", "."];
  if (sessionRel !== null && sessionRel !== "" && sessionRel !== ".")
    spec.push(`:(exclude,literal)${sessionRel}`);
  const args = ["-C", root, "rev-list", "--count", `--since=${formatTimestamp(since)}`, "HEAD"];
  const out = spawnSync("git", [...args, ...spec], {
    encoding: "utf8",
    timeout: TIMEOUT_MS,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" },
  });
  const text = typeof out.stdout === "string" ? out.stdout.trim() : "";
  return out.status === 0 && /^[0-9]+$/.test(text) ? Number(text) : null;
}
