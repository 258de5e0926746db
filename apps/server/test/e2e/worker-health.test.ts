import { mkdtempSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/connection.js';
import { createWorkerApp } from '../../src/worker-app.js';
import { TEST_DIALECT } from '../support/database.js';
import { useContext } from '../support/expect.js';
import {
  createServerEnvironment,
  startServerProcess,
  startWorkerProcess,
} from '../support/server-process.js';

describe(`voxkey worker: health, readiness and metrics on WORKER_PORT (${TEST_DIALECT})`, () => {
  const ctx = useContext();

  it('a running worker answers /healthz, /readyz (database and engine) and /metrics, and exits cleanly on SIGTERM', async () => {
    const environment = await createServerEnvironment();
    onTestFinished(() => environment.cleanup());
    const worker = await startWorkerProcess(environment);
    try {
      const health = await fetch(`${worker.baseUrl}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });

      const ready = await fetch(`${worker.baseUrl}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({
        status: 'ready',
        checks: { database: 'ok', engine: 'ok' },
      });

      const metrics = await fetch(`${worker.baseUrl}/metrics`);
      expect(metrics.status).toBe(200);
      expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
      const text = await metrics.text();
      expect(text).toMatch(/^voxkey_job_queue_depth\{status="queued"\} 0$/m);
      expect(text).toMatch(/^voxkey_engine_pool_utilization /m);
      expect(text).toContain('voxkey_webhook_attempts_total');

      // The worker serves no API.
      expect((await fetch(`${worker.baseUrl}/v1/organisations/1`)).status).toBe(404);
    } finally {
      expect(await worker.stop()).toBe(0);
    }
    await expect(fetch(`${worker.baseUrl}/healthz`)).rejects.toThrow();
  });

  it('a worker without a usable model is alive but not ready (503, engine named), so a supervisor keeps it out of rotation', async () => {
    const environment = await createServerEnvironment({
      VOXKEY_MODELS_DIR: mkdtempSync(path.join(tmpdir(), 'voxkey-no-models-')),
    });
    onTestFinished(() => environment.cleanup());
    const worker = await startWorkerProcess(environment);
    try {
      expect((await fetch(`${worker.baseUrl}/healthz`)).status).toBe(200);
      const ready = await fetch(`${worker.baseUrl}/readyz`);
      expect(ready.status).toBe(503);
      const body = (await ready.json()) as {
        status: string;
        code: number;
        message: string;
        checks: { database: string; engine: string };
      };
      expect(body).toMatchObject({
        status: 'unavailable',
        code: 503,
        message: 'Engine unavailable',
      });
      expect(body.checks.database).toBe('ok');
      expect(body.checks.engine).toBe('unavailable (model_missing)');
    } finally {
      await worker.stop();
    }
  });

  it('a worker (or server) whose port is taken exits with a one-line configuration error (2) instead of running unwatched', async () => {
    const environment = await createServerEnvironment();
    onTestFinished(() => environment.cleanup());
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
    const port = String((blocker.address() as AddressInfo).port);
    await expect(startWorkerProcess(environment, { WORKER_PORT: port })).rejects.toThrow(
      new RegExp(`exited with 2[\\s\\S]*WORKER_PORT=${port} is already in use on 127\\.0\\.0\\.1`),
    );
    // The API server says the same, in one line, before it loads the models.
    const serving = startServerProcess(environment, { PORT: port });
    await expect(serving).rejects.toThrow(
      new RegExp(`exited with 2[\\s\\S]*PORT=${port} is already in use`),
    );
    await expect(serving).rejects.not.toThrow(/\n\s+at /);
    // Both before they load the models: no process with the port taken starts an engine.
    await expect(serving).rejects.not.toThrow(/engine ready/);
    await expect(startWorkerProcess(environment, { WORKER_PORT: port })).rejects.not.toThrow(
      /engine ready/,
    );
  });

  it('/readyz is 503 when the database does not answer, and says which check failed without leaking the address', async () => {
    // Nothing listens on port 1: every query fails as if the database were down.
    const broken = openDatabase('postgres://voxkey@127.0.0.1:1/unreachable', { poolSize: 1 });
    onTestFinished(() => broken.close());
    const app = createWorkerApp({ ...ctx().deps, database: broken }, () => true);
    const res = await app.request('/readyz');
    expect(res.status).toBe(503);
    const body = await res.json();
    expect(body).toMatchObject({
      status: 'unavailable',
      code: 503,
      message: 'Database unreachable',
      checks: { database: 'unreachable', engine: 'ok' },
    });
    expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|kysely/i);
    expect((await app.request('/healthz')).status).toBe(200);
  });

  it('/readyz says a draining worker is shutting down (503), not that its engine is unavailable', async () => {
    let draining = false;
    const app = createWorkerApp(
      ctx().deps,
      () => true,
      () => draining,
    );
    expect((await app.request('/readyz')).status).toBe(200);
    draining = true;
    const res = await app.request('/readyz');
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      status: 'unavailable',
      message: 'Shutting down',
      checks: { database: 'ok', engine: 'ok' },
    });
  });

  it('WORKER_PORT is validated at start-up like every other setting', () => {
    expect(loadConfig({}).WORKER_PORT).toBe(8081);
    expect(loadConfig({ WORKER_PORT: '9100' }).WORKER_PORT).toBe(9100);
    expect(() => loadConfig({ WORKER_PORT: 'http' })).toThrow(/WORKER_PORT/);
    expect(() => loadConfig({ WORKER_PORT: '70000' })).toThrow(/WORKER_PORT/);
  });
});
