import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { TEST_DIALECT } from '../support/database.js';
import { datasetPresentFor, speakerRecordings } from '../support/recordings.js';
import {
  createServerEnvironment,
  runCli,
  startServerProcess,
  startWorkerProcess,
} from '../support/server-process.js';
import { signatureIsValid, startWebhookReceiver } from '../support/webhook-receiver.js';

async function post(baseUrl: string, token: string, path: string, body: unknown) {
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return res.status;
}

const HAS_DATASET = datasetPresentFor(
  import.meta.url,
  'graceful shutdown; scale-out on PostgreSQL',
);

describe.skipIf(!HAS_DATASET)(
  `graceful shutdown, with dataset recordings (${TEST_DIALECT})`,
  () => {
    it('stops on SIGTERM without losing accepted jobs', async () => {
      const recordings = speakerRecordings({ speakers: 1, count: 3 });
      const receiver = await startWebhookReceiver();
      const environment = await createServerEnvironment({
        JOB_LEASE_MS: '2000',
        SHUTDOWN_TIMEOUT_MS: '15000',
      });
      try {
        const created = await runCli(environment, [
          'org',
          'create',
          '--name',
          'Stop',
          '--email',
          's@example.com',
          '--callback-url',
          receiver.url,
        ]);
        const orgPath = `/organisations/${created.organisation.id}`;
        let server = await startServerProcess(environment);
        const enrolUuid = randomUUID();
        expect(
          await post(server.baseUrl, created.token.bearer, `${orgPath}/enrollments`, {
            voice_data: recordings[0]![0],
            request_uuid: enrolUuid,
            external_id: 'erin',
          }),
        ).toBe(202);
        await receiver.waitFor((calls) => calls.some((c) => c.body.request_uuid === enrolUuid));

        const accepted: string[] = [];
        for (let i = 0; i < 6; i++) {
          const requestUuid = randomUUID();
          if (
            (await post(server.baseUrl, created.token.bearer, `${orgPath}/verifications`, {
              voice_data: recordings[0]![1 + (i % 2)],
              request_uuid: requestUuid,
              external_id: 'erin',
            })) === 202
          ) {
            accepted.push(requestUuid);
          }
        }
        const started = Date.now();
        const code = await server.stop();
        expect(code).toBe(0);
        expect(Date.now() - started).toBeLessThan(15_000);
        expect(server.output()).toContain('shutdown complete');
        await expect(fetch(`${server.baseUrl}${orgPath}`)).rejects.toThrow();

        server = await startServerProcess(environment);
        const calls = await receiver.waitFor(
          (all) => accepted.every((uuid) => all.some((c) => c.body.request_uuid === uuid)),
          60_000,
        );
        for (const uuid of accepted)
          expect(
            new Set(calls.filter((c) => c.body.request_uuid === uuid).map((c) => c.id)).size,
          ).toBe(1);
        await server.stop();
      } finally {
        await receiver.close();
        await environment.cleanup();
      }
    });
  },
);

// Several processes on one PostgreSQL database behave as one service.
describe.skipIf(!HAS_DATASET || TEST_DIALECT !== 'postgres')(
  'scale-out: two API processes and a worker on PostgreSQL, with dataset recordings',
  () => {
    it('yields exactly one result and one delivered webhook per accepted job when an API process and the worker are killed mid-flight', async () => {
      const recordings = speakerRecordings({ speakers: 2, count: 3 });
      const receiver = await startWebhookReceiver();
      // Short leases: work a killed process held is taken over within seconds.
      const environment = await createServerEnvironment({
        JOB_LEASE_MS: '2000',
        WEBHOOK_TIMEOUT_MS: '2000',
      });
      try {
        const created = await runCli(environment, [
          'org',
          'create',
          '--name',
          'Scale',
          '--email',
          'scale@example.com',
          '--callback-url',
          receiver.url,
        ]);
        const token = created.token.bearer;
        const orgPath = `/organisations/${created.organisation.id}`;
        // Start the API processes together: migrations must run once under the lock.
        let [api1, api2] = await Promise.all([
          startServerProcess(environment, { RUN_WORKERS: 'false' }),
          startServerProcess(environment, { RUN_WORKERS: 'false' }),
        ]);
        let worker = await startWorkerProcess(environment);

        const enrolments = [randomUUID(), randomUUID()];
        expect(
          await post(api1!.baseUrl, token, `${orgPath}/enrollments`, {
            voice_data: recordings[0]![0],
            request_uuid: enrolments[0],
            external_id: 'u0',
          }),
        ).toBe(202);
        expect(
          await post(api2!.baseUrl, token, `${orgPath}/enrollments`, {
            voice_data: recordings[1]![0],
            request_uuid: enrolments[1],
            external_id: 'u1',
          }),
        ).toBe(202);
        await receiver.waitFor((calls) =>
          enrolments.every((uuid) => calls.some((c) => c.body.request_uuid === uuid)),
        );

        const accepted: string[] = [...enrolments];
        const send = async (api: { baseUrl: string }, i: number) => {
          const requestUuid = randomUUID();
          const status = await post(api.baseUrl, token, `${orgPath}/verifications`, {
            voice_data: recordings[i % 2]![1 + (i % 2)],
            request_uuid: requestUuid,
            external_id: `u${i % 2}`,
          });
          expect(status).toBe(202);
          accepted.push(requestUuid);
        };
        for (let i = 0; i < 10; i++) await send(i % 2 ? api2! : api1!, i);
        await receiver.waitFor((calls) => calls.length > 2);
        await Promise.all([api1!.kill(), worker.kill()]);
        for (let i = 10; i < 14; i++) await send(api2!, i);

        [api1, worker] = await Promise.all([
          startServerProcess(environment, { RUN_WORKERS: 'false' }),
          startWorkerProcess(environment),
        ]);
        const calls = await receiver.waitFor(
          (all) => accepted.every((uuid) => all.some((c) => c.body.request_uuid === uuid)),
          90_000,
        );
        for (const uuid of accepted) {
          const forJob = calls.filter((c) => c.body.request_uuid === uuid);
          expect(new Set(forJob.map((c) => c.id)).size).toBe(1);
          expect(signatureIsValid(created.webhook_secret, forJob[0]!)).toBe(true);
        }
        const database = openDatabase(environment.env.DATABASE_URL!);
        // A delivery whose attempt the killed worker never recorded is sent again (same webhook-id) once its lease expires.
        for (let i = 0; i < 60; i++) {
          const pending = await database.db
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('status', '!=', 'delivered')
            .execute();
          if (pending.length === 0) break;
          await new Promise((r) => setTimeout(r, 500));
        }
        await Promise.all([api1!.stop(), api2!.stop(), worker.stop()]);

        const jobs = await database.db.selectFrom('jobs').select(['status']).execute();
        const deliveries = await database.db
          .selectFrom('webhook_deliveries')
          .select(['status', 'job_id'])
          .execute();
        const migrations = await database.db
          .selectFrom('kysely_migration' as never)
          .selectAll()
          .execute();
        await database.close();
        const finalCalls = receiver.calls;
        for (const uuid of accepted)
          expect(
            new Set(finalCalls.filter((c) => c.body.request_uuid === uuid).map((c) => c.id)).size,
          ).toBe(1);
        expect(jobs).toHaveLength(accepted.length);
        expect(jobs.every((job) => job.status === 'completed')).toBe(true);
        expect(deliveries).toHaveLength(accepted.length);
        expect(deliveries.every((d) => d.status === 'delivered')).toBe(true);
        expect(migrations.length).toBeGreaterThan(0);
      } finally {
        await receiver.close();
        await environment.cleanup();
      }
    });
  },
);
