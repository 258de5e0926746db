import type { VoiceEngine } from '@voxkey/engine';
import type { AppConfig } from './config.js';
import type { Database } from './db/connection.js';
import type { TokenKind } from './db/types.js';
import type { Logger } from './observability/logger.js';
import type { Metrics } from './observability/metrics.js';
import type { Sealer } from './security/sealing.js';
import type { StreamRegistry } from './services/verification-streams.js';

/** Who is calling: resolved from the bearer token on every request. */
export interface AuthContext {
  orgId: number;
  tokenId: number;
  tokenKind: TokenKind;
  /** When the calling token expires (null: never); a trial token cannot create tokens that outlive it. */
  tokenExpiresAt: string | null;
}

export interface JobSignals {
  /** Wakes this process's job runner (other processes poll). */
  jobQueued(): void;
  /** Wakes this process's webhook dispatcher. */
  deliveryQueued(): void;
}

export interface Observability {
  logger: Logger;
  metrics: Metrics;
  poolStats?: () => { utilization: number; queueSize: number };
}

/** Everything the request side and the workers share, built once by the runtime. */
export interface AppDeps {
  database: Database;
  config: AppConfig;
  sealer: Sealer;
  signals: JobSignals;
  /** Set when this process should process voice but cannot (e.g. no model installed): voice requests get 503. */
  voiceUnavailable?: string;
  /** Set in processes that run the engine: 'degraded' once the watchdog saw a stuck worker thread. */
  engineHealth?: () => 'ok' | 'degraded';
  /** Runs audio pre-checks in the engine's pool; absent where this process has no engine. */
  audioChecker?: Pick<VoiceEngine, 'checkAudio'>;
  observability: Observability;
  /** Open verification streams (WebSocket); absent where this process serves no API. */
  streams?: StreamRegistry;
}
