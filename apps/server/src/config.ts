import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

const booleanFromEnv = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/**
 * VOXKEY_ENCRYPTION_KEY spells 32 bytes as 64 hex characters or as base64 (either alphabet, padded or
 * not), once normalised: surrounding quotes (an env file's) and whitespace (a wrapped line) removed.
 */
export const ENCRYPTION_KEY_PATTERN = /^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}={0,2})$/;

export function normaliseEncryptionKey(value: string): string {
  return value
    .trim()
    .replace(/^(['"])([\s\S]*)\1$/, '$2')
    .replace(/\s+/g, '');
}

/** The 32 bytes a VOXKEY_ENCRYPTION_KEY of ENCRYPTION_KEY_PATTERN spells. */
export function encryptionKeyBytes(value: string): Buffer {
  const key = normaliseEncryptionKey(value);
  return /^[0-9a-fA-F]{64}$/.test(key) ? Buffer.from(key, 'hex') : Buffer.from(key, 'base64'); // Node's base64 decoder reads the URL-safe alphabet too
}

/** Fewer distinct byte values than this in 32 bytes is a placeholder ('0' x 64), not a random key (which has about 30). */
const MIN_DISTINCT_KEY_BYTES = 16;

/**
 * A key of few distinct bytes ('0' x 64) is a placeholder. Production warns rather than refuses: the
 * data already sealed with it can only be read with it (there is no re-sealing).
 */
export function isPlaceholderKey(key: Buffer): boolean {
  return new Set(key).size < MIN_DISTINCT_KEY_BYTES;
}

const ConfigSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  /** Listen address. Unset: 127.0.0.1 in development and test; production requires it to be set (see productionProblems). */
  HOST: z.string().min(1).optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** `voxkey worker` serves /healthz, /readyz and /metrics here (0 picks a free port). */
  WORKER_PORT: z.coerce.number().int().min(0).max(65535).default(8081),
  DATABASE_URL: z
    .string()
    .regex(/^(sqlite:|postgres:\/\/|postgresql:\/\/)/, 'must start with sqlite: or postgres://')
    .default('sqlite:./data/voxkey.db'),
  DATA_DIR: z.string().default('./data'),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(15 * 1024 * 1024),
  BOOTSTRAP_DEMO_ORG: booleanFromEnv.default(true),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  /** PostgreSQL: longest wait for a connection from the pool (or a new one) before the request fails. */
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
  /** PostgreSQL: statements running longer are cancelled by the server (0 = no limit; migrations are exempt). */
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(30_000),
  /** PostgreSQL: prepare each statement once per connection; false behind a pooler in transaction mode that does not keep prepared statements. */
  DATABASE_PREPARED_STATEMENTS: booleanFromEnv.default(true),
  WEBHOOK_ALLOW_LOOPBACK: booleanFromEnv.default(false),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: booleanFromEnv.default(false),
  DOCS_SCRIPT_URL: z.string().optional(),
  VOXKEY_ENCRYPTION_KEY: z
    .string()
    .transform(normaliseEncryptionKey)
    .pipe(
      z
        .string()
        .regex(
          ENCRYPTION_KEY_PATTERN,
          'must be 32 bytes: 64 hex characters or base64 (43-44 characters; e.g. openssl rand -hex 32)',
        ),
    )
    .optional(),
  VOXKEY_MODELS_DIR: z.string().optional(),
  ENGINE_THREADS: z.coerce.number().int().min(1).max(64).optional(),
  ENGINE_INTRA_OP_THREADS: z.coerce.number().int().min(1).max(64).default(1),
  ENGINE_TASK_TIMEOUT_MS: z.coerce.number().int().min(1000).default(30_000),
  /** An inference call unanswered this long means a stuck worker thread (default: the task timeout plus 10 s). */
  ENGINE_STUCK_MS: z.coerce.number().int().min(100).optional(),
  /** How long a process with a stuck engine thread keeps running (degraded) before it exits for its supervisor to restart it. */
  ENGINE_WATCHDOG_EXIT_MS: z.coerce.number().int().min(0).default(60_000),
  JOB_MAX_QUEUE: z.coerce.number().int().min(1).default(500),
  /** Unfinished jobs one organisation may have; defaults to a quarter of JOB_MAX_QUEUE so one organisation cannot fill the queue. */
  JOB_MAX_QUEUE_PER_ORG: z.coerce.number().int().min(1).optional(),
  JOB_LEASE_MS: z.coerce.number().int().min(1000).default(120_000),
  JOB_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(3),
  /** Days finished job records and webhook deliveries are kept before the workers purge them. */
  RECORD_RETENTION_DAYS: z.coerce.number().int().min(1).default(30),
  JOB_POLL_MS: z.coerce.number().int().min(10).default(1000),
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .regex(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/, 'must be comma-separated seconds, e.g. 5,300,1800')
    .default('5,300,1800,7200,18000,36000,36000')
    .transform((v) => v.split(',').map((n) => Math.round(Number(n) * 1000))),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  SMTP_URL: z.string().optional(),
  SMTP_FROM: z.string().default('Voxkey <alerts@voxkey.invalid>'),
  ALERT_MIN_VERIFICATIONS: z.coerce.number().int().min(1).default(20),
  ALERT_FAILURE_RATE: z.coerce.number().min(0).max(1).default(0.5),
  ALERT_COOLDOWN_HOURS: z.coerce.number().min(0).default(6),
  /** match_score at or above which a verification is `verified` (the spec's "strong match" level). */
  MATCH_THRESHOLD: z.coerce.number().gt(0).lt(1).default(0.85),
  RUN_WORKERS: booleanFromEnv.default(true),
  /** Longest time a client may take to send a whole request (slow uploads are cut off with 408). */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1000).default(60_000),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  RATE_LIMIT_ENABLED: booleanFromEnv.default(true),
  RATE_LIMIT_TOKEN_RPS: z.coerce.number().positive().default(20),
  RATE_LIMIT_TOKEN_BURST: z.coerce.number().int().min(1).default(50),
  RATE_LIMIT_ORG_RPS: z.coerce.number().positive().default(50),
  RATE_LIMIT_ORG_BURST: z.coerce.number().int().min(1).default(100),
  RATE_LIMIT_TRIAL_RPS: z.coerce.number().positive().default(5),
  RATE_LIMIT_TRIAL_BURST: z.coerce.number().int().min(1).default(20),
  /** Real-time verification over WebSocket (docs/decisions.md, "Streaming verification"). Open streams per organisation, per process. */
  STREAM_MAX_PER_ORG: z.coerce.number().int().min(1).default(20),
  /** Longest audio one stream may carry (seconds of audio, the recording limit). */
  STREAM_MAX_AUDIO_SECONDS: z.coerce.number().positive().max(60).default(60),
  /** Most encoded audio bytes one stream may send. */
  STREAM_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(10 * 1024 * 1024),
  /** Largest single message (audio frame or JSON). */
  STREAM_MAX_FRAME_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(64 * 1024),
  /** A stream with no message for this long is closed (also the time allowed for the start message). */
  STREAM_IDLE_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** Longest a stream may stay open before its decision starts (slow senders). */
  STREAM_MAX_WALL_MS: z.coerce.number().int().min(1000).default(120_000),
  /** Bytes queued for a client that does not read before it is cut off. */
  STREAM_MAX_BUFFERED_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  /** Seconds of new audio between two early-decision probes once there is enough speech. */
  STREAM_PROBE_EVERY_S: z.coerce.number().positive().default(1.5),
  /** How far from the match threshold a probe's score must be to decide before the client ends the stream. */
  STREAM_EARLY_MARGIN: z.coerce.number().min(0).max(1).default(0.1),
  /** Longest wait for the job that records a streamed verification. */
  STREAM_RESULT_TIMEOUT_MS: z.coerce.number().int().min(1000).default(60_000),
  METRICS_ENABLED: booleanFromEnv.default(true),
  /** When set, GET /metrics requires `Authorization: Bearer <METRICS_TOKEN>`. */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type AppConfig = Omit<z.infer<typeof ConfigSchema>, 'JOB_MAX_QUEUE_PER_ORG' | 'HOST'> & {
  JOB_MAX_QUEUE_PER_ORG: number;
  /** The address to listen on: HOST, or 127.0.0.1 outside production. */
  HOST: string;
  /** Whether HOST was set explicitly. */
  hostConfigured: boolean;
  isDevelopment: boolean;
};

/** The share of the global queue one organisation may hold when JOB_MAX_QUEUE_PER_ORG is not set. */
export const DEFAULT_ORG_QUEUE_SHARE = 0.25;

export class ConfigError extends Error {}

/** Parses the environment once at start-up; throws a ConfigError listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const data = parsed.data;
  return {
    ...data,
    JOB_MAX_QUEUE_PER_ORG:
      data.JOB_MAX_QUEUE_PER_ORG ??
      Math.max(1, Math.floor(data.JOB_MAX_QUEUE * DEFAULT_ORG_QUEUE_SHARE)),
    HOST: data.HOST ?? (data.NODE_ENV === 'production' ? '0.0.0.0' : '127.0.0.1'),
    hostConfigured: data.HOST !== undefined,
    isDevelopment: data.NODE_ENV !== 'production',
  };
}

/**
 * What `voxkey serve` / `voxkey worker` refuse to start with in production: settings that are
 * only safe on a developer's machine. Empty outside production.
 */
export function productionProblems(config: AppConfig): string[] {
  if (config.isDevelopment) return [];
  const problems: string[] = [];
  if (!config.VOXKEY_ENCRYPTION_KEY)
    problems.push(
      'VOXKEY_ENCRYPTION_KEY is required (32 bytes, hex or base64): voiceprints and queued audio are sealed with it',
    );

  if (!config.hostConfigured)
    problems.push(
      'HOST must be set explicitly (0.0.0.0 to listen on every interface, 127.0.0.1 behind a proxy on the same host): production does not guess where to listen',
    );
  if (config.WEBHOOK_ALLOW_LOOPBACK)
    problems.push(
      'WEBHOOK_ALLOW_LOOPBACK=true is refused: callback URLs on loopback addresses reach services on this host',
    );
  if (config.WEBHOOK_ALLOW_PRIVATE_NETWORKS)
    problems.push(
      'WEBHOOK_ALLOW_PRIVATE_NETWORKS=true is refused: callback URLs on private networks reach internal services',
    );
  return problems;
}

export function ensureDataDir(config: AppConfig): string {
  const dir = path.resolve(config.DATA_DIR);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
  return dir;
}
