import { runCli } from './cli/program.js';
import { type CliIo, processIo } from './cli/output.js';

/** `voxkey <command>`: see `voxkey --help` and docs/deployment.md ("Command line"). */
export function main(argv: string[], io: CliIo = processIo): Promise<number> {
  return runCli(argv, io);
}
