#!/usr/bin/env node
// `session-resume` of the npm package: validate | resume | migrate | recover and the write
// moments (lib/cli.mjs), with the reference CLI's exit codes and JSON shapes.
import { main } from "../lib/cli.mjs";

process.exitCode = main(process.argv.slice(2));
