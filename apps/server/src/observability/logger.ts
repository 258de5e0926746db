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

/**
 * A server writes its lines in batches: once this much is pending, or every LOG_FLUSH_INTERVAL_MS.
 * One line per write cost the API path's main thread about a tenth of its time (each async write
 * is a hand-off to libuv's thread pool); pino flushes what is pending when the process exits.
 */
const LOG_BATCH_BYTES = 4096;
const LOG_FLUSH_INTERVAL_MS = 100;

/** Logs go to stdout for the server; CLI commands log to stderr, line by line, so their stdout stays machine-readable. */
export function createLogger(level: string, destination: 1 | 2 = 1): Logger {
  // A silent logger writes nothing, so it gets no batch and no flush timer (tests create one per context).
  const stream =
    destination === 1 && level !== 'silent'
      ? pino.destination({
          fd: 1,
          sync: false,
          minLength: LOG_BATCH_BYTES,
          periodicFlush: LOG_FLUSH_INTERVAL_MS,
        })
      : pino.destination({ fd: destination, sync: true });
  return pino(
    {
      level,
      base: { service: 'voxkey', pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    stream,
  );
}

export type { Logger };
