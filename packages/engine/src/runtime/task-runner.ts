import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { deserializeEngineError, EngineError } from '../errors.js';
import { PACKAGE_DIR } from '../package-dir.js';
import type { WorkerConfig, WorkerReply, WorkerTask } from './worker.js';

export interface TaskRunnerOptions {
  threads: number;
  maxQueue: number;
  /** Per task, queueing included. */
  taskTimeoutMs: number;
  workerConfig: WorkerConfig;
}

export interface TaskRunnerStats {
  queueSize: number;
  utilization: number;
  completed: number;
  threads: number;
}

export interface TaskRunner {
  /** Runs one task on a pool worker; `transfer` moves the buffer to the worker instead of copying it. */
  run<T>(
    task: WorkerTask,
    opts?: { signal?: AbortSignal; transfer?: ArrayBuffer },
  ): Promise<{ value: T; queueMs: number }>;
  stats(): TaskRunnerStats;
  close(): Promise<void>;
}

function workerFile(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [join(here, 'worker.js'), join(PACKAGE_DIR, 'dist', 'worker.js')]) {
    if (existsSync(candidate)) return candidate;
  }
  throw new EngineError(
    'internal',
    `engine worker bundle not found next to ${here}; run \`npm -w @voxkey/engine run build\``,
  );
}

/**
 * The Piscina pool behind the engine: each task gets a shared cancellation flag, a deadline and
 * typed errors. Abort and timeout answer the caller at once; the running task is not killed
 * (see `WorkerTask.cancel`): the worker stops at its next checkpoint and its thread stays in the pool.
 */
export function createTaskRunner(opts: TaskRunnerOptions): TaskRunner {
  const pool = new Piscina({
    filename: workerFile(),
    minThreads: opts.threads,
    maxThreads: opts.threads,
    maxQueue: opts.maxQueue,
    concurrentTasksPerWorker: 1,
    idleTimeout: Number.MAX_SAFE_INTEGER >>> 0,
    workerData: opts.workerConfig,
    resourceLimits: { maxOldGenerationSizeMb: 512 },
  });
  let closed = false;

  function poolError(e: unknown): EngineError {
    const message = (e as Error)?.message ?? String(e);
    if (/queue is at limit/i.test(message)) {
      return new EngineError(
        'queue_full',
        'the engine queue is full; retry later',
        { maxQueue: opts.maxQueue },
        { cause: e },
      );
    }
    if (closed)
      return new EngineError('engine_closed', 'the engine has been closed', undefined, {
        cause: e,
      });
    return new EngineError(
      'worker_crashed',
      `an engine worker failed while running the task: ${message}`,
      undefined,
      { cause: e },
    );
  }

  async function run<T>(
    task: WorkerTask,
    o: { signal?: AbortSignal; transfer?: ArrayBuffer } = {},
  ): Promise<{ value: T; queueMs: number }> {
    const { signal, transfer } = o;
    if (closed) throw new EngineError('engine_closed', 'the engine has been closed');
    if (signal?.aborted) throw new EngineError('aborted', 'the task was aborted before it started');
    const cancel = new SharedArrayBuffer(4);
    const flag = new Int32Array(cancel);
    const queuedAt = performance.now();
    const work = pool.run({ ...task, cancel }, { transferList: transfer ? [transfer] : undefined });
    const reply = await new Promise<WorkerReply<T>>((resolve, reject) => {
      const finish = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = () => {
        finish();
        Atomics.store(flag, 0, 1);
        reject(new EngineError('aborted', 'the task was aborted'));
      };
      const timer = setTimeout(() => {
        finish();
        Atomics.store(flag, 0, 2);
        reject(
          new EngineError('timeout', `the task exceeded the ${opts.taskTimeoutMs} ms limit`, {
            taskTimeoutMs: opts.taskTimeoutMs,
          }),
        );
      }, opts.taskTimeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      work.then(
        (r: WorkerReply<T>) => {
          finish();
          resolve(r);
        },
        (e: unknown) => {
          finish();
          reject(poolError(e));
        },
      );
    });
    if (!reply.ok) throw deserializeEngineError(reply.error);
    const workerMs =
      (reply.value as { timings?: { workerMs?: number } } | null)?.timings?.workerMs ?? 0;
    return { value: reply.value, queueMs: Math.max(0, performance.now() - queuedAt - workerMs) };
  }

  return {
    run,
    stats: () => ({
      queueSize: pool.queueSize,
      utilization: pool.utilization,
      completed: pool.completed,
      threads: pool.threads.length,
    }),
    async close() {
      if (closed) return;
      closed = true;
      await pool.destroy();
    },
  };
}
