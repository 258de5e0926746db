import type { StreamStart } from '@voxkey/contract';
import type { EngineErrorCode, VoiceEngine } from '@voxkey/engine';
import type { AppConfig } from './config.js';
import type { Database } from './db/connection.js';
import type { TokenKind } from './db/types.js';
import type { Logger } from './observability/logger.js';
import type { Metrics } from './observability/metrics.js';
import type { Sealer } from './security/sealing.js';

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

/** The socket a verification stream writes to (ws in production, anything alike in tests). */
export interface StreamSocket {
  send(text: string): void;
  close(code: number, reason?: string): void;
  terminate(): void;
  readonly bufferedAmount: number;
}

/** An open verification stream, as its socket's events reach it. */
export interface OpenStream {
  receiveText(text: string): void;
  receiveBinary(bytes: Uint8Array): void;
  socketClosed(): void;
}

/** A slot for one stream, taken before the upgrade: `open` once the WebSocket is up, `release` if it never is. */
export interface StreamTicket {
  /** `parseStart` validates the `start` message like a posted request's body; it throws ApiError. */
  open(socket: StreamSocket, parseStart: (message: unknown) => StreamStart): OpenStream;
  release(): void;
}

/** The open verification streams of this process (built by streams/registry.ts). */
export interface StreamRegistry {
  /** The checks a stream passes before its upgrade; throws ApiError when it may not open. */
  admit(auth: Pick<AuthContext, 'orgId' | 'tokenKind'>): Promise<StreamTicket>;
  count(): number;
  /** Refuses new streams and lets each open one finish its decision. */
  shutdown(): Promise<void>;
}

export interface Observability {
  logger: Logger;
  metrics: Metrics;
  poolStats?: () => { utilization: number; queueSize: number };
}

/**
 * Why the engine could not start: its error code only. The engine's message names local paths and CLI
 * commands, so it goes to the server log and never reaches clients or /readyz.
 */
export interface VoiceUnavailable {
  code: EngineErrorCode;
}

/** Everything the request side and the workers share, built once by the runtime. */
export interface AppDeps {
  database: Database;
  config: AppConfig;
  sealer: Sealer;
  signals: JobSignals;
  /** Set when this process should process voice but cannot (e.g. no model installed): voice requests get 503. */
  voiceUnavailable?: VoiceUnavailable;
  /** Set in processes that run the engine: 'degraded' once the watchdog saw a stuck worker thread. */
  engineHealth?: () => 'ok' | 'degraded';
  /** Runs audio pre-checks in the engine's pool; absent where this process has no engine. */
  audioChecker?: Pick<VoiceEngine, 'checkAudio'>;
  /**
   * The primary language subtags (`en`) the engine's speech recogniser can check phrases in; absent
   * where this process has no engine (challenges and phrases are then refused with 503).
   */
  phraseLanguages?: () => Promise<readonly string[]>;
  observability: Observability;
  /** Open verification streams (WebSocket); absent where this process serves no API. */
  streams?: StreamRegistry;
}
