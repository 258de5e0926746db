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

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'voxkey', pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT, censor: '[redacted]' },
    formatters: { level: (label) => ({ level: label }) },
  });
}

export type { Logger };
