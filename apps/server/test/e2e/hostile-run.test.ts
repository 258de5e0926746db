import { describe, expect, it } from 'vitest';
import { TEST_DIALECT } from '../support/database.js';
import {
  HostileObservations,
  type HostileOrganisation,
  type HostileTrafficOptions,
  queuePoisonJobs,
  runHostileTraffic,
  sendVoice,
  unfinishedWork,
} from '../support/hostile-traffic.js';
import { rssMiB } from '../support/process-memory.js';
import { datasetPresentFor, speakerRecordings } from '../support/recordings.js';
import {
  createServerEnvironment,
  runCli,
  type ServerEnvironment,
  type ServerProcess,
  startServerProcess,
} from '../support/server-process.js';
import { type ReceivedWebhook, startWebhookReceiver } from '../support/webhook-receiver.js';

// Issue 15, "Done when": chunked floods, a cross-organisation flood and poison jobs at the same time,
// against one server process (API and workers), leave it answering, within bounded memory, with
// nothing lost. Each hardening item has its own focused test; this one runs them together.
// `npm run bench:hostile` runs the same traffic for longer.

const MiB = 1024 * 1024;
const FLOOD_MS = 20_000;
const MAX_ATTEMPTS = 3;
/** The default BODY_LIMIT_BYTES: an unauthenticated 14 MiB body fits under it, so buffering one would keep all of it. */
const BODY_LIMIT = 15 * MiB;
/**
 * Growth of the server's RSS over its warmed-up baseline. Reading the flood's bodies before the
 * token check (tried: the middleware order reversed) took it 640 MiB over; what may legitimately
 * grow is the one authenticated upload read up to the 15 MiB limit, the queued recordings and the
 * heap's slack (67-108 MiB seen).
 */
const RSS_GROWTH_BOUND_MIB = 256;
/**
 * /healthz answers every probe (within the probes' 10 s timeout, and under this bound) and nearly
 * every one within the second bound, on a loaded machine too (seen: p95 25-174 ms, max 0.5-2.8 s;
 * the probes go through this test's own busy event loop).
 */
const HEALTHZ_MAX_MS = 8000;
const HEALTHZ_P95_MS = 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!datasetPresentFor(import.meta.url, 'hostile run'))(
  `hostile run: chunked floods, a cross-organisation flood and poison jobs at once (${TEST_DIALECT})`,
  () => {
    it('keeps answering within bounded memory, and every accepted request gets exactly one webhook', async () => {
      const [enrolmentVoice, verificationVoice] = speakerRecordings({ speakers: 1, count: 2 })[0]!;
      const receiver = await startWebhookReceiver();
      const environment = await createServerEnvironment({
        JOB_MAX_QUEUE: '24',
        JOB_MAX_QUEUE_PER_ORG: '8',
        JOB_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
        BODY_LIMIT_BYTES: String(BODY_LIMIT),
        // A delivery retried after a receiver timeout must land inside the run's final wait, not after it.
        WEBHOOK_TIMEOUT_MS: '2000',
      }).catch(async (err: unknown) => {
        await receiver.close();
        throw err;
      });
      let server: ServerProcess | undefined;
      try {
        const signedUp = {
          flooder: await signUp(environment, 'Flooder', receiver.url),
          steady: await signUp(environment, 'Steady', receiver.url),
          poisoned: await signUp(environment, 'Poisoned', receiver.url),
        };
        server = await startServerProcess(environment);
        const api = server.baseUrl;
        const [flooder, steady, poisoned] = await Promise.all([
          withLiveToken(api, signedUp.flooder),
          withLiveToken(api, signedUp.steady),
          withLiveToken(api, signedUp.poisoned),
        ]);

        // Warm up (a voiceprint in each organisation, the engine's first inferences) before the baseline.
        const warmUp = [
          await sendVoice(api, flooder, 'enrollments', enrolmentVoice!, 'flo'),
          await sendVoice(api, steady, 'enrollments', enrolmentVoice!, 'stella'),
        ];
        const enrolled = await receiver.waitFor((calls) =>
          warmUp.every((s) => calls.some((c) => c.body.request_uuid === s.requestUuid)),
        );
        expect(enrolled.map((c) => c.body.status)).toEqual(['enrolled', 'enrolled']);
        warmUp.push(await sendVoice(api, steady, 'verifications', verificationVoice!, 'stella'));
        expect(warmUp[2]!.status).toBe(202);
        await receiver.waitFor((calls) =>
          calls.some((c) => c.body.request_uuid === warmUp[2]!.requestUuid),
        );
        const pid = server.child.pid!;
        const baseline = await rssBaseline(pid);

        const poisonJobs = await queuePoisonJobs({
          databaseUrl: environment.env.DATABASE_URL!,
          encryptionKey: environment.env.VOXKEY_ENCRYPTION_KEY!,
          orgId: poisoned.id,
          voice: verificationVoice!,
          maxAttempts: MAX_ATTEMPTS,
        });
        const options: HostileTrafficOptions = {
          api,
          serverPid: pid,
          durationMs: FLOOD_MS,
          flooder: { org: flooder, externalId: 'flo', loops: 3 },
          // One a second: well within B's fair share of the one worker lane even on a busy machine.
          steady: { org: steady, externalId: 'stella', everyMs: 1000 },
          voice: verificationVoice!,
          unauthenticated: { perWave: 100, bodyBytes: 14 * MiB, everyMs: 3000 },
          overLimitBodyBytes: BODY_LIMIT + 4 * MiB,
        };
        const observations = new HostileObservations();
        await runHostileTraffic(options, observations);
        // Before anything else: a server that buffered the flood shows it here, however the run went on.
        const peakRss = observations.peakRssMiB();
        expect(
          peakRss - baseline,
          `RSS ${baseline.toFixed(1)} -> peak ${peakRss.toFixed(1)} MiB`,
        ).toBeLessThan(RSS_GROWTH_BOUND_MIB);
        expect(observations.failures).toEqual([]);

        // Nothing lost: every accepted request and both poison jobs end in one webhook.
        const expected = new Set([
          ...observations.accepted().map((s) => s.requestUuid),
          ...poisonJobs,
        ]);
        await receiver.waitFor(
          (calls) => countByRequest(calls, expected).size === expected.size,
          30_000,
        );
        await sleep(1500); // a duplicate would arrive within the retry schedule
        const webhooks = countByRequest(receiver.calls, expected);
        const records = await readRecords(api, observations.accepted());
        const poisonRecords = await Promise.all(
          poisonJobs.map((uuid) =>
            getJson(api, poisoned.token, `/organisations/${poisoned.id}/enrollments/${uuid}`),
          ),
        );
        const stillAnswers = await getJson(api, steady.token, `/organisations/${steady.id}`);
        const unfinished = await unfinishedWork(environment.env.DATABASE_URL!);
        const webhookMs = (sent: { requestUuid: string; sentAt: number }) => {
          const call = receiver.calls.find((c) => c.body.request_uuid === sent.requestUuid);
          return call ? call.receivedAt - sent.sentAt : undefined;
        };
        const summary = observations.summary(options, baseline, webhookMs);
        console.log(
          JSON.stringify({
            dialect: TEST_DIALECT,
            seconds: FLOOD_MS / 1000,
            ...summary,
            webhooks: { expected: expected.size, received: receiver.calls.length - warmUp.length },
          }),
        );

        // Answering, with no server error at any point.
        expect(observations.sent.filter((s) => s.status >= 500)).toEqual([]);
        expect(observations.healthz.filter((h) => h.status !== 200)).toEqual([]);
        expect(summary.healthz.maxMs).toBeLessThan(HEALTHZ_MAX_MS);
        expect(summary.healthz.p95Ms).toBeLessThan(HEALTHZ_P95_MS);
        expect(stillAnswers.status).toBe(200);
        expect(server.output()).not.toMatch(/unhandled error/);

        // Chunked floods: refused from the headers (401) or at the limit (413), never read to the end.
        expect(observations.unauthenticated.length).toBeGreaterThanOrEqual(400);
        expect(
          observations.unauthenticated.filter(
            (u) => u.finishedWhenAnswered || ![401, null].includes(u.status),
          ),
        ).toEqual([]);
        expect(summary.unauthenticatedUploads.answered401).toBeGreaterThan(
          observations.unauthenticated.length / 2,
        );
        expect(observations.overLimit.length).toBeGreaterThanOrEqual(3);
        expect(observations.overLimit.filter((u) => ![413, null].includes(u.status))).toEqual([]);
        expect(summary.overLimitUploads.answered413).toBeGreaterThan(0);
        // The server answers once the limit is crossed and discards the rest; a client whose own event
        // loop lags (this test's, busy with the flood) may have written the rest before it reads the answer.
        expect(summary.overLimitUploads.answeredWhileStreaming).toBeGreaterThan(
          observations.overLimit.length / 2,
        );

        // Fairness: A sat at its cap (429 queue_full, never a quota), B was never turned away.
        expect(
          observations.of(flooder).filter((s) => s.status !== 202 && s.error !== 'queue_full'),
        ).toEqual([]);
        expect(summary.flooder.queueFull).toBeGreaterThan(0);
        expect(summary.steady.sent).toBeGreaterThanOrEqual(10);
        expect(observations.of(steady).filter((s) => s.status !== 202)).toEqual([]);

        // Nothing lost, nothing duplicated: one webhook per accepted request, and its record readable.
        expect([...expected].filter((uuid) => webhooks.get(uuid) !== 1)).toEqual([]);
        expect(receiver.calls.length).toBe(expected.size + warmUp.length);
        expect(
          records.filter(
            (r) => r.status !== 200 || !['completed', 'failed'].includes(r.body.status),
          ),
        ).toEqual([]);
        expect(unfinished).toEqual({ jobs: [], deliveries: [] });

        // The poison jobs ended as failed with processing_error, announced once.
        for (const record of poisonRecords)
          expect(record).toMatchObject({
            status: 200,
            body: { status: 'failed', failure_reason: 'processing_error' },
          });
        for (const uuid of poisonJobs) {
          expect(receiver.calls.find((c) => c.body.request_uuid === uuid)!.body).toMatchObject({
            status: 'failed',
            failure_reason: 'processing_error',
          });
        }
      } finally {
        await server?.stop();
        await receiver.close();
        await environment.cleanup();
      }
    }, 90_000);
  },
);

/** The largest of a few samples, taken once the server is warm. */
async function rssBaseline(pid: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    samples.push(rssMiB(pid));
    await sleep(100);
  }
  return Math.max(...samples);
}

function countByRequest(calls: ReceivedWebhook[], expected: Set<string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const call of calls) {
    const uuid = call.body.request_uuid as string;
    if (expected.has(uuid)) counts.set(uuid, (counts.get(uuid) ?? 0) + 1);
  }
  return counts;
}

async function getJson(api: string, token: string, path: string) {
  const res = await fetch(`${api}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json()) as any };
}

/** GETs the record of every accepted request, a few at a time. */
async function readRecords(
  api: string,
  accepted: Array<{ org: HostileOrganisation; kind: string; requestUuid: string }>,
) {
  const records: Array<{ status: number; body: any }> = [];
  for (let i = 0; i < accepted.length; i += 8) {
    const batch = accepted.slice(i, i + 8);
    records.push(
      ...(await Promise.all(
        batch.map((s) =>
          getJson(api, s.org.token, `/organisations/${s.org.id}/${s.kind}/${s.requestUuid}`),
        ),
      )),
    );
  }
  return records;
}

/** A Starter organisation (no Sandbox quota), its callback on the receiver. */
async function signUp(environment: ServerEnvironment, name: string, callbackUrl: string) {
  const created = await runCli(environment, [
    'org',
    'create',
    '--name',
    name,
    '--email',
    `${name.toLowerCase()}@example.com`,
    '--plan',
    '2',
    '--callback-url',
    callbackUrl,
  ]);
  expect(created.organisation.subscription).toMatchObject({ plan_id: 2 });
  return { id: created.organisation.id as number, trialToken: created.token.bearer as string };
}

/** A live token, so the trial token's Sandbox allowance does not cap the flood. */
async function withLiveToken(
  api: string,
  signedUp: { id: number; trialToken: string },
): Promise<HostileOrganisation> {
  const res = await fetch(`${api}/organisations/${signedUp.id}/api-tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${signedUp.trialToken}`, 'content-type': 'application/json' },
    // A token the trial token creates must expire no later than it: a day is within any trial.
    body: JSON.stringify({
      friendly_name: 'hostile-run',
      enabled: true,
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    }),
  });
  expect(res.status).toBe(201);
  return { id: signedUp.id, token: ((await res.json()) as { bearer: string }).bearer };
}
