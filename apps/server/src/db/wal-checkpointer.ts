import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const CHECKPOINT_INTERVAL_MS = 250;

// An eval worker: no file for the bundler to place, and it loads the same driver as this process.
const CHECKPOINTER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.file);
let failed = false;
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    if (!failed) parentPort.postMessage({ error: String((err && err.message) || err) });
    failed = true;
  }
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface WalCheckpointer {
  stop(): Promise<void>;
}

/**
 * Copies a SQLite database's write-ahead log into the database file from a thread of its own.
 * SQLite otherwise checkpoints inside the commit that crosses `wal_autocheckpoint` (1000 pages),
 * on the thread that commits: with 5 s WAV recordings queued, 15-25 ms of copying and fsync every
 * few jobs on the main thread, while HTTP requests and the engine pool's next task wait. The
 * caller turns its connection's automatic checkpoints off; PASSIVE checkpoints never block its
 * writers. If the thread fails, `onFailure` runs (the caller turns automatic checkpoints back on).
 */
export function startWalCheckpointer(file: string, onFailure: (error: string) => void) {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(CHECKPOINTER_SOURCE, {
    eval: true,
    workerData: { driver, file, intervalMs: CHECKPOINT_INTERVAL_MS },
  });
  worker.unref();
  let stopped = false;
  let reported = false;
  const fail = (error: string) => {
    if (stopped || reported) return;
    reported = true;
    onFailure(error);
  };
  worker.on('message', (m: { error?: string }) => m.error && fail(m.error));
  worker.on('error', (err) => fail(err.message));
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', (code) => {
      fail(`the checkpoint thread exited (code ${code})`);
      resolve();
    }),
  );
  return {
    async stop() {
      if (stopped) return exited;
      stopped = true;
      // Unreferenced, the thread would not keep the event loop alive until it has closed its connection.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  } satisfies WalCheckpointer;
}
