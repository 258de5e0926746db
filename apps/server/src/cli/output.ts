/** Where a command writes: stdout for results, stderr for messages and errors. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
}

export const processIo: CliIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
};

/** Documented in docs/deployment.md ("Command line"). */
export const EXIT = {
  ok: 0,
  /** The command could not do its work: database unreachable, engine error, anything unexpected. */
  failure: 1,
  /** Bad command line or configuration: unknown command or option, missing or invalid value. */
  usage: 2,
  /** The organisation or token named on the command line does not exist. */
  notFound: 3,
} as const;

export function printJson(io: CliIo, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}

export function printLine(io: CliIo, text: string): void {
  io.out(`${text}\n`);
}

export class UsageError extends Error {}
export class NotFoundError extends Error {}
