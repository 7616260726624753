import { runCli } from "./program.js";

/**
 * The `judge` process (bin/judge.js imports this module): the CLI on this process's streams and
 * environment. The exit code is set rather than forced with process.exit(), so buffered output
 * is flushed and `serve` keeps running after its action returns.
 */
process.exitCode = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
