// Test driver of the differential test (tests/test_js_differential.py): runs a batch of
// command lines through the session-resume npm package's CLI in one Node process.
// stdin: {"cwd": DIR, "runs": [[arg, ...], ...]}; stdout: [{"rc": N, "stdout": TEXT, "stderr": TEXT}, ...].

import { readFileSync } from "node:fs";
import { cli } from "session-resume";

const request = JSON.parse(readFileSync(0, "utf8"));
process.chdir(request.cwd);
const results = [];
const out = process.stdout.write.bind(process.stdout);
const err = process.stderr.write.bind(process.stderr);
for (const argv of request.runs) {
  let stdout = "";
  let stderr = "";
  process.stdout.write = (chunk) => { stdout += chunk; return true; };
  process.stderr.write = (chunk) => { stderr += chunk; return true; };
  let rc;
  try {
    rc = cli(argv);
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
  results.push({ rc, stdout, stderr });
}
process.stdout.write(JSON.stringify(results) + "\n");
