/** Entry point of the `outreach-api` executable: runs the CLI and exits with its code. */
import { runCli } from './cli/index.js';

const code = await runCli(process.argv.slice(2));
if (code !== 0) process.exitCode = code;
