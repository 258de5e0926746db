import { EngineError, isEngineError } from '@voxkey/engine';
import type { Logger } from '../observability/logger.js';
import type { VoiceAnalyzer } from './job-processor.js';

export type EngineHealth = 'ok' | 'degraded';

export interface EngineWatchdogOptions {
  /** A call still unanswered after this long means its worker thread is stuck. */
  stuckAfterMs: number;
  /** How long a degraded process keeps running (finishing other work, answering /readyz) before it exits. */
  exitAfterMs: number;
  logger: Logger;
  /** Ends the process; a supervisor is expected to restart it. */
  exit: (code: number) => void;
  checkEveryMs?: number;
}

export interface EngineWatchdog {
  analyzer: VoiceAnalyzer;
  health(): EngineHealth;
  stop(): void;
}

/**
 * Watches the engine from the outside. A worker thread stuck inside native inference cannot be
 * interrupted: the engine's own task timeout answers the caller, but the thread stays busy. So a
 * call that times out, or stays unanswered past `stuckAfterMs`, marks the engine degraded: /readyz
 * says so, new tasks are refused with a retryable error (the job goes back to the queue for a
 * healthy process), and after `exitAfterMs` the process exits so its supervisor restarts it.
 */
export function watchEngine(engine: VoiceAnalyzer, options: EngineWatchdogOptions): EngineWatchdog {
  const inFlight = new Map<number, number>();
  let nextCall = 0;
  let degradedSince: number | null = null;
  let exitTimer: NodeJS.Timeout | null = null;

  const degrade = (reason: string) => {
    if (degradedSince !== null) return;
    degradedSince = Date.now();
    options.logger.error(
      { reason, exitAfterMs: options.exitAfterMs },
      `engine degraded: ${reason}; refusing new voice tasks`,
    );
    exitTimer = setTimeout(() => {
      options.logger.fatal(
        { degradedForMs: Date.now() - (degradedSince ?? Date.now()) },
        'engine worker thread stuck in inference; exiting so the supervisor restarts the process (unfinished jobs are reclaimed after their lease)',
      );
      options.exit(70);
    }, options.exitAfterMs);
    exitTimer.unref?.();
  };

  const check = setInterval(
    () => {
      const now = Date.now();
      for (const startedAt of inFlight.values()) {
        if (now - startedAt > options.stuckAfterMs)
          degrade(`an inference call has run for more than ${options.stuckAfterMs} ms`);
      }
    },
    options.checkEveryMs ?? Math.max(100, Math.min(5000, Math.floor(options.stuckAfterMs / 4))),
  );
  check.unref?.();

  async function guarded<T>(call: () => Promise<T>): Promise<T> {
    if (degradedSince !== null)
      throw new EngineError(
        'queue_full',
        'the engine is degraded (a worker thread is stuck); retry later',
      );
    const id = nextCall++;
    inFlight.set(id, Date.now());
    try {
      return await call();
    } catch (err) {
      if (isEngineError(err) && err.code === 'timeout')
        degrade('an inference call timed out and its worker thread did not answer');
      throw err;
    } finally {
      inFlight.delete(id);
    }
  }

  const analyzer: VoiceAnalyzer = {
    get speakerModelId() {
      return engine.speakerModelId;
    },
    get spoofModelId() {
      return engine.spoofModelId;
    },
    get defaultDeepfakeThreshold() {
      return engine.defaultDeepfakeThreshold;
    },
    get defaultEnrolmentDeepfakeThreshold() {
      return engine.defaultEnrolmentDeepfakeThreshold;
    },
    enrol: (...args) => guarded(() => engine.enrol(...args)),
    verify: (...args) => guarded(() => engine.verify(...args)),
  };

  return {
    analyzer,
    health: () => (degradedSince === null ? 'ok' : 'degraded'),
    stop() {
      clearInterval(check);
      if (exitTimer) clearTimeout(exitTimer);
    },
  };
}
