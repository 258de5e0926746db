import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { TEST_DIALECT } from '../support/database.js';
import { datasetPresentFor, speakerRecordings } from '../support/recordings.js';
import {
  createServerEnvironment,
  runCli,
  type ServerEnvironment,
  startServerProcess,
} from '../support/server-process.js';
import { signatureIsValid, startWebhookReceiver } from '../support/webhook-receiver.js';

async function post(baseUrl: string, token: string, path: string, body: unknown) {
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

describe.skipIf(!datasetPresentFor(import.meta.url, 'crashes, backpressure and rotation'))(
  `crashes, backpressure and rotation, with dataset recordings (${TEST_DIALECT})`,
  () => {
    let recordings: string[][];
    beforeAll(() => {
      recordings = speakerRecordings({ speakers: 1, count: 3 });
    });

    it('delivers exactly one result for every accepted job when the server is SIGKILLed mid-flight', async () => {
      const receiver = await startWebhookReceiver();
      const environment = await createServerEnvironment({ JOB_LEASE_MS: '2000' });
      try {
        const created = await runCli(environment, [
          'org',
          'create',
          '--name',
          'Crash',
          '--email',
          'c@example.com',
          '--callback-url',
          receiver.url,
        ]);
        const orgId = created.organisation.id;
        const token = created.token.bearer;
        let server = await startServerProcess(environment);
        const enrolUuid = randomUUID();
        await post(server.baseUrl, token, `/organisations/${orgId}/enrollments`, {
          voice_data: recordings[0]![0],
          request_uuid: enrolUuid,
          external_id: 'carol',
        });
        await receiver.waitFor((calls) => calls.some((c) => c.body.request_uuid === enrolUuid));

        const accepted: string[] = [];
        for (let i = 0; i < 8; i++) {
          const requestUuid = randomUUID();
          const res = await post(server.baseUrl, token, `/organisations/${orgId}/verifications`, {
            voice_data: recordings[0]![1 + (i % 2)],
            request_uuid: requestUuid,
            external_id: 'carol',
          });
          if (res.status === 202) accepted.push(requestUuid);
        }
        expect(accepted).toHaveLength(8);
        await receiver.waitFor((calls) =>
          calls.some((c) => accepted.includes(c.body.request_uuid)),
        );
        await server.kill();

        server = await startServerProcess(environment);
        const calls = await receiver.waitFor(
          (all) => accepted.every((uuid) => all.some((c) => c.body.request_uuid === uuid)),
          60_000,
        );
        await new Promise((r) => setTimeout(r, 1000));
        for (const uuid of accepted) {
          const forJob = calls.filter((c) => c.body.request_uuid === uuid);
          // At-least-once delivery may repeat an attempt, but there is exactly one result (one webhook-id).
          expect(new Set(forJob.map((c) => c.id)).size).toBe(1);
          expect(forJob.every((c) => signatureIsValid(created.webhook_secret, c))).toBe(true);
        }
        await server.stop();

        const database = openDatabase(environment.env.DATABASE_URL!);
        const jobs = await database.db.selectFrom('jobs').select('status').execute();
        const kept = await database.db.selectFrom('job_recordings').select('job_id').execute();
        await database.close();
        expect(jobs.every((job) => job.status === 'completed')).toBe(true);
        expect(kept).toEqual([]);
      } finally {
        await receiver.close();
        await environment.cleanup();
      }
      // Two server starts with every bundled model, a lease to expire and nine jobs, beside the other e2e files:
      // the receiver alone may wait 60 s for the redelivered results.
    }, 90_000);

    it('answers 429 with Retry-After when the queue is full, and stops at 410', async () => {
      const receiver = await startWebhookReceiver(() => 410);
      const environment = await createServerEnvironment({
        JOB_MAX_QUEUE: '2',
        JOB_MAX_QUEUE_PER_ORG: '2',
      });
      try {
        const created = await runCli(environment, [
          'org',
          'create',
          '--name',
          'Full',
          '--email',
          'f@example.com',
          '--callback-url',
          receiver.url,
        ]);
        const orgId = created.organisation.id;
        // An API-only process: nothing drains the queue.
        const apiOnly = await startServerProcess(environment, { RUN_WORKERS: 'false' });
        const statuses = [];
        for (let i = 0; i < 3; i++) {
          const res = await post(
            apiOnly.baseUrl,
            created.token.bearer,
            `/organisations/${orgId}/enrollments`,
            {
              voice_data: recordings[0]![i],
              request_uuid: randomUUID(),
              external_id: `user-${i}`,
            },
          );
          statuses.push(res.status);
          if (res.status === 429) {
            expect(res.headers.get('retry-after')).toBe('5');
            expect(res.body).toEqual({
              code: 429,
              error: 'queue_full',
              message: expect.any(String),
            });
          }
        }
        expect(statuses).toEqual([202, 202, 429]);
        await apiOnly.stop();

        const worker = await startServerProcess(environment);
        await receiver.waitFor((calls) => calls.length >= 2);
        await new Promise((r) => setTimeout(r, 1200));
        expect(receiver.calls).toHaveLength(2);
        const list = await fetch(`${worker.baseUrl}/organisations/${orgId}/webhook-deliveries`, {
          headers: { authorization: `Bearer ${created.token.bearer}` },
        });
        const deliveries = (await list.json()) as {
          results: Array<{ status: string; attempts: number; last_status_code: number }>;
        };
        expect(
          deliveries.results.every(
            (d) => d.status === 'failed' && d.attempts === 1 && d.last_status_code === 410,
          ),
        ).toBe(true);
        await worker.stop();
      } finally {
        await receiver.close();
        await environment.cleanup();
      }
    });

    it('signs with both secrets during a rotation, and stores voiceprints encrypted', async () => {
      const receiver = await startWebhookReceiver();
      const environment = await createServerEnvironment();
      try {
        const created = await runCli(environment, [
          'org',
          'create',
          '--name',
          'Rotate',
          '--email',
          'r@example.com',
          '--callback-url',
          receiver.url,
        ]);
        const orgId = created.organisation.id;
        const server = await startServerProcess(environment);
        const rotated = await post(
          server.baseUrl,
          created.token.bearer,
          `/organisations/${orgId}/webhook-secret`,
          undefined,
        );
        expect(rotated.status).toBe(201);
        expect(rotated.body.secret).toMatch(/^whsec_/);
        expect(rotated.body.previous_secret_expires_at).toEqual(expect.any(String));

        const requestUuid = randomUUID();
        await post(server.baseUrl, created.token.bearer, `/organisations/${orgId}/enrollments`, {
          voice_data: recordings[0]![0],
          request_uuid: requestUuid,
          external_id: 'dave',
        });
        const [call] = await receiver.waitFor((calls) => calls.length >= 1);
        expect(call!.signature.split(' ')).toHaveLength(2);
        expect(signatureIsValid(created.webhook_secret, call!)).toBe(true);
        expect(signatureIsValid(rotated.body.secret, call!)).toBe(true);
        await server.stop();

        const database = openDatabase(environment.env.DATABASE_URL!);
        const sample = await database.db
          .selectFrom('voiceprint_samples')
          .selectAll()
          .executeTakeFirstOrThrow();
        const secrets = await database.db
          .selectFrom('webhook_secrets')
          .select('sealed_secret')
          .execute();
        await database.close();
        expect(sample.sealed_embedding).toMatch(/^v1\./);
        expect(secrets.every((s) => !s.sealed_secret.includes('whsec_'))).toBe(true);
      } finally {
        await receiver.close();
        await environment.cleanup();
      }
    });
  },
);
