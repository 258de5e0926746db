import pino, { type Logger } from 'pino';

/** Paths that may carry secrets; pino replaces their values before anything is written. */
const REDACT = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'bearer',
  '*.bearer',
  'token.bearer',
  'secret',
  '*.secret',
  'webhook_secret',
  'voice_data',
  '*.voice_data',
  'VOXKEY_ENCRYPTION_KEY',
];

/** Logs go to stdout for the server; CLI commands log to stderr so their stdout stays machine-readable. */
export function createLogger(level: string, destination: 1 | 2 = 1): Logger {
  return pino(
    {
    level,
    base: { service: 'voxkey', pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT, censor: '[redacted]' },
    formatters: { level: (label) => ({ level: label }) },
    },
    pino.destination({ fd: destination, sync: destination === 2 }),
  );
}

export type { Logger };
