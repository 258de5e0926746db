import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { sealRecording } from '../../src/security/recordings.js';
import { createSealer, parseEncryptionKey } from '../../src/security/sealing.js';
import { TEST_DIALECT } from '../support/database.js';
import { rssMiB } from '../support/process-memory.js';
import { HAS_DATASET, speakerRecordings } from '../support/recordings.js';
import { createServerEnvironment, runCli, type ServerEnvironment, type ServerProcess, startServerProcess } from '../support/server-process.js';
import { type StreamedUpload, streamUpload } from '../support/streamed-upload.js';
import { type ReceivedWebhook, startWebhookReceiver } from '../support/webhook-receiver.js';

// Issue 15, "Done when": chunked floods, a cross-organisation flood and poison jobs at the same time,
// against one server process (API and workers), leave it answering, within bounded memory, with
// nothing lost. Each hardening item has its own focused test; this one runs them together.

const MiB = 1024 * 1024;
const FLOOD_MS = 20_000;
const MAX_QUEUE = 24;
const MAX_QUEUE_PER_ORG = 8;
const MAX_ATTEMPTS = 3;
/** The default BODY_LIMIT_BYTES: an unauthenticated 14 MiB body fits under it, so buffering one would keep all of it. */
const BODY_LIMIT = 15 * MiB;
const UNAUTHENTICATED_PER_WAVE = 100;
const UNAUTHENTICATED_BODY = 14 * MiB;
const WAVE_EVERY_MS = 3000;
const OVER_LIMIT_BODY = BODY_LIMIT + 2 * MiB;
const STEADY_EVERY_MS = 1000;
/**
 * Growth of the server's RSS over its warmed-up baseline. Reading one flood wave's bodies before
 * the token check would take 100 x 14 MiB (1.4 GiB); what may legitimately grow is the one
 * authenticated upload read up to the 15 MiB limit, the queued recordings and the heap's slack.
 */
const RSS_GROWTH_BOUND_MIB = 256;
/** /healthz answers every probe within the first bound and nearly every one within the second, on a loaded machine too. */
const HEALTHZ_MAX_MS = 5000;
const HEALTHZ_P95_MS = 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)]!;
};

interface Organisation {
  id: number;
  token: string;
}

type VoiceKind = 'enrollments' | 'verifications';

interface Sent {
  org: Organisation;
  kind: VoiceKind;
  requestUuid: string;
  status: number;
  error?: string;
  sentAt: number;
}

/** What the run saw, for the assertions and for the figures docs/deployment.md quotes. */
class Observations {
  readonly sent: Sent[] = [];
  readonly unauthenticated: StreamedUpload[] = [];
  readonly overLimit: StreamedUpload[] = [];
  readonly healthz: Array<{ status: number | null; ms: number }> = [];
  readonly rss: number[] = [];

  accepted(org?: Organisation) {
    return this.sent.filter((s) => s.status === 202 && (!org || s.org === org));
  }
}

describe.skipIf(!HAS_DATASET)(`hostile run: chunked floods, a cross-organisation flood and poison jobs at once (${TEST_DIALECT})`, () => {
  it('keeps answering within bounded memory, and every accepted request gets exactly one webhook', async () => {
    const [enrolmentVoice, verificationVoice] = speakerRecordings({ speakers: 1, count: 2 })[0]!;
    const receiver = await startWebhookReceiver();
    const environment = await createServerEnvironment({
      JOB_MAX_QUEUE: String(MAX_QUEUE),
      JOB_MAX_QUEUE_PER_ORG: String(MAX_QUEUE_PER_ORG),
      JOB_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
      BODY_LIMIT_BYTES: String(BODY_LIMIT),
    });
    let server: ServerProcess | undefined;
    try {
      const signedUp = { flooder: await signUp(environment, 'Flooder', receiver.url), steady: await signUp(environment, 'Steady', receiver.url), poisoned: await signUp(environment, 'Poisoned', receiver.url) };
      server = await startServerProcess(environment);
      const api = server.baseUrl;
      const [flooder, steady, poisoned] = await Promise.all([withLiveToken(api, signedUp.flooder), withLiveToken(api, signedUp.steady), withLiveToken(api, signedUp.poisoned)]);
      const observations = new Observations();
      const send = async (org: Organisation, kind: VoiceKind, voice: string, externalId: string) => {
        const requestUuid = randomUUID();
        const sentAt = Date.now();
        const res = await postJson(api, org.token, `/organisations/${org.id}/${kind}`, { voice_data: voice, request_uuid: requestUuid, external_id: externalId });
        const error = res.status === 202 ? undefined : (res.body as { error?: string } | undefined)?.error;
        const sent = { org, kind, requestUuid, status: res.status, error, sentAt };
        observations.sent.push(sent);
        return sent;
      };

      // Warm up (voiceprints for both users, the engine's first inference) before the baseline.
      const warmUp = [await send(flooder, 'enrollments', enrolmentVoice!, 'flo'), await send(steady, 'enrollments', enrolmentVoice!, 'stella')];
      const enrolled = await receiver.waitFor((calls) => warmUp.every((s) => calls.some((c) => c.body.request_uuid === s.requestUuid)));
      expect(enrolled.map((c) => c.body.status)).toEqual(['enrolled', 'enrolled']);
      const warmVerification = await send(steady, 'verifications', verificationVoice!, 'stella');
      expect(warmVerification.status).toBe(202);
      await receiver.waitFor((calls) => calls.some((c) => c.body.request_uuid === warmVerification.requestUuid));
      const pid = server.child.pid!;
      const baseline = Math.max(...(await sampleRss(pid, 5, 100)));

      // The poison jobs, as the server would find them: one whose workers died on every attempt
      // (processing, lease expired, attempts used up), one that fails every time it runs (its sealed
      // recording does not open).
      const poisonJobs = await queuePoisonJobs(environment, poisoned.id, verificationVoice!);

      const rssSampler = setInterval(() => {
        // The process may be gone (a crash): the assertions below say so.
        if (server?.child.exitCode === null) observations.rss.push(rssMiB(pid));
      }, 50);
      const healthOrigin = api.replace(/\/v1$/, '');
      const failures = await runTogether(FLOOD_MS, [
        // Organisation A keeps its share of the queue full, ignoring Retry-After.
        ...Array.from({ length: 3 }, () => async (running: () => boolean) => {
          while (running()) {
            const sent = await send(flooder, 'verifications', verificationVoice!, 'flo');
            if (sent.status !== 202) await sleep(100);
          }
        }),
        // Organisation B sends one verification a second, well within its fair share of the workers.
        async (running) => {
          while (running()) {
            const started = Date.now();
            await send(steady, 'verifications', verificationVoice!, 'stella');
            await sleep(STEADY_EVERY_MS - (Date.now() - started));
          }
        },
        // Waves of unauthenticated chunked uploads (no token, or a wrong one), offered slowly.
        async (running) => {
          while (running()) {
            const started = Date.now();
            const wave = await Promise.all(
              Array.from({ length: UNAUTHENTICATED_PER_WAVE }, (_, i) =>
                streamUpload(api, `/organisations/${steady.id}/verifications`, {
                  token: i % 2 ? `vk_live_${'x'.repeat(43)}` : undefined,
                  totalBytes: UNAUTHENTICATED_BODY,
                  chunkDelayMs: 20,
                  timeoutMs: 20_000,
                }),
              ),
            );
            observations.unauthenticated.push(...wave);
            await sleep(WAVE_EVERY_MS - (Date.now() - started));
          }
        },
        // Authenticated chunked uploads over the body limit, one after another.
        async (running) => {
          while (running()) {
            observations.overLimit.push(await streamUpload(api, `/organisations/${flooder.id}/verifications`, { token: flooder.token, totalBytes: OVER_LIMIT_BODY, timeoutMs: 20_000 }));
            await sleep(500);
          }
        },
        // /healthz, probed throughout.
        async (running) => {
          while (running()) {
            const started = Date.now();
            const status = await fetch(`${healthOrigin}/healthz`, { signal: AbortSignal.timeout(10_000) }).then(
              (res) => res.status,
              () => null,
            );
            observations.healthz.push({ status, ms: Date.now() - started });
            await sleep(100);
          }
        },
      ]).finally(() => clearInterval(rssSampler));
      const peakRss = Math.max(...observations.rss);
      // Before anything else: a server that buffered the flood shows it here, however the run went on.
      expect(peakRss - baseline, `RSS ${baseline.toFixed(1)} -> peak ${peakRss.toFixed(1)} MiB`).toBeLessThan(RSS_GROWTH_BOUND_MIB);
      expect(failures).toEqual([]);

      // Nothing lost: every accepted request and both poison jobs end in one webhook.
      const expected = new Set([...observations.accepted().map((s) => s.requestUuid), ...poisonJobs]);
      const drainStarted = Date.now();
      await receiver.waitFor((calls) => countByRequest(calls, expected).size === expected.size, 30_000);
      const drainMs = Date.now() - drainStarted;
      await sleep(1500); // a duplicate would arrive within the retry schedule
      const webhooks = countByRequest(receiver.calls, expected);
      const unexpected = receiver.calls.filter((c) => !expected.has(c.body.request_uuid));

      const records = await readRecords(api, observations.accepted());
      const poisonRecords = await Promise.all(poisonJobs.map((uuid) => getJson(api, poisoned.token, `/organisations/${poisoned.id}/enrollments/${uuid}`)));
      const stillAnswers = await getJson(api, steady.token, `/organisations/${steady.id}`);
      const flooderSent = observations.sent.filter((s) => s.org === flooder && s.kind === 'verifications');
      const steadySent = observations.sent.filter((s) => s.org === steady && s.kind === 'verifications' && s !== warmVerification);
      const steadyLatencies = steadySent.filter((s) => s.status === 202).map((s) => receiver.calls.find((c) => c.body.request_uuid === s.requestUuid)!.receivedAt - s.sentAt);
      const healthMs = observations.healthz.map((h) => h.ms);
      const database = openDatabase(environment.env.DATABASE_URL!);
      const unfinishedJobs = await database.db.selectFrom('jobs').select(['request_uuid', 'status']).where('status', 'not in', ['completed', 'failed']).execute();
      const undelivered = await database.db.selectFrom('webhook_deliveries').select(['request_uuid', 'status']).where('status', '!=', 'delivered').execute();
      await database.close();

      console.log(
        JSON.stringify({
          dialect: TEST_DIALECT,
          rssMiB: { baseline: round(baseline), peak: round(peakRss), growth: round(peakRss - baseline), bound: RSS_GROWTH_BOUND_MIB },
          healthz: { probes: healthMs.length, p50Ms: percentile(healthMs, 0.5), p95Ms: percentile(healthMs, 0.95), p99Ms: percentile(healthMs, 0.99), maxMs: Math.max(...healthMs) },
          unauthenticated: { uploads: observations.unauthenticated.length, answered401: observations.unauthenticated.filter((u) => u.status === 401).length },
          overLimit: { uploads: observations.overLimit.length, answered413: observations.overLimit.filter((u) => u.status === 413).length },
          flooder: { sent: flooderSent.length, accepted: flooderSent.filter((s) => s.status === 202).length, queueFull: flooderSent.filter((s) => s.status === 429).length },
          steady: { sent: steadySent.length, accepted: steadySent.filter((s) => s.status === 202).length, webhookP95Ms: percentile(steadyLatencies, 0.95) },
          webhooks: { expected: expected.size, received: receiver.calls.length, drainMs },
        }),
      );

      // Answering, with no server error at any point.
      expect(observations.sent.filter((s) => s.status >= 500)).toEqual([]);
      expect(observations.healthz.filter((h) => h.status !== 200)).toEqual([]);
      expect(Math.max(...healthMs)).toBeLessThan(HEALTHZ_MAX_MS);
      expect(percentile(healthMs, 0.95)).toBeLessThan(HEALTHZ_P95_MS);
      expect(stillAnswers.status).toBe(200);
      expect(server.output()).not.toMatch(/unhandled error/);

      // Chunked floods: refused from the headers (401) or at the limit (413), never read to the end.
      expect(observations.unauthenticated.length).toBeGreaterThanOrEqual(4 * UNAUTHENTICATED_PER_WAVE);
      expect(observations.unauthenticated.filter((u) => u.finishedWhenAnswered || ![401, null].includes(u.status))).toEqual([]);
      expect(observations.unauthenticated.filter((u) => u.status === 401).length).toBeGreaterThan(observations.unauthenticated.length / 2);
      expect(observations.overLimit.length).toBeGreaterThanOrEqual(3);
      expect(observations.overLimit.filter((u) => u.finishedWhenAnswered || ![413, null].includes(u.status) || u.sentWhenAnswered > BODY_LIMIT + 2 * MiB)).toEqual([]);
      expect(observations.overLimit.some((u) => u.status === 413)).toBe(true);

      // Fairness: A sat at its cap (429 queue_full, never a quota), B was never turned away.
      expect(flooderSent.filter((s) => s.status !== 202 && (s.status !== 429 || s.error !== 'queue_full'))).toEqual([]);
      expect(flooderSent.some((s) => s.status === 429)).toBe(true);
      expect(steadySent.length).toBeGreaterThanOrEqual(FLOOD_MS / STEADY_EVERY_MS / 2);
      expect(steadySent.filter((s) => s.status !== 202)).toEqual([]);

      // Nothing lost, nothing duplicated: one webhook per accepted request, and its record readable.
      expect([...expected].filter((uuid) => webhooks.get(uuid) !== 1)).toEqual([]);
      expect(unexpected.filter((c) => !warmUp.some((s) => s.requestUuid === c.body.request_uuid) && c.body.request_uuid !== warmVerification.requestUuid)).toEqual([]);
      expect(records.filter((r) => r.status !== 200 || !['completed', 'failed'].includes(r.body.status))).toEqual([]);
      expect(unfinishedJobs).toEqual([]);
      expect(undelivered).toEqual([]);

      // The poison jobs ended as failed with processing_error, announced once.
      for (const record of poisonRecords) expect(record).toMatchObject({ status: 200, body: { status: 'failed', failure_reason: 'processing_error' } });
      for (const uuid of poisonJobs) {
        expect(receiver.calls.find((c) => c.body.request_uuid === uuid)!.body).toMatchObject({ status: 'failed', failure_reason: 'processing_error' });
      }
    } finally {
      await server?.stop();
      await receiver.close();
      await environment.cleanup();
    }
  }, 90_000);
});

/** Runs the loops side by side until `durationMs` has passed or one of them fails; returns the failures. */
async function runTogether(durationMs: number, loops: Array<(running: () => boolean) => Promise<void>>): Promise<unknown[]> {
  const deadline = Date.now() + durationMs;
  const failures: unknown[] = [];
  const running = () => failures.length === 0 && Date.now() < deadline;
  await Promise.all(loops.map((loop) => loop(running).catch((err: unknown) => void failures.push(err))));
  return failures;
}

const round = (value: number) => Math.round(value * 10) / 10;

async function sampleRss(pid: number, count: number, everyMs: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    samples.push(rssMiB(pid));
    await sleep(everyMs);
  }
  return samples;
}

function countByRequest(calls: ReceivedWebhook[], expected: Set<string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const call of calls) {
    const uuid = call.body.request_uuid as string;
    if (expected.has(uuid)) counts.set(uuid, (counts.get(uuid) ?? 0) + 1);
  }
  return counts;
}

async function postJson(api: string, token: string, path: string, body: unknown) {
  const res = await fetch(`${api}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function getJson(api: string, token: string, path: string) {
  const res = await fetch(`${api}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json()) as any };
}

/** GETs the record of every accepted request, a few at a time. */
async function readRecords(api: string, accepted: Sent[]) {
  const records: Array<{ status: number; body: any }> = [];
  for (let i = 0; i < accepted.length; i += 8) {
    const batch = accepted.slice(i, i + 8);
    records.push(...(await Promise.all(batch.map((s) => getJson(api, s.org.token, `/organisations/${s.org.id}/${s.kind}/${s.requestUuid}`)))));
  }
  return records;
}

/** A Starter organisation (no Sandbox quota), its callback on the receiver. */
async function signUp(environment: ServerEnvironment, name: string, callbackUrl: string) {
  const created = await runCli(environment, ['org', 'create', '--name', name, '--email', `${name.toLowerCase()}@example.com`, '--plan', '2', '--callback-url', callbackUrl]);
  expect(created.organisation.subscription).toMatchObject({ plan_id: 2 });
  return { id: created.organisation.id as number, trialToken: created.token.bearer as string };
}

/** A live token, so the trial token's Sandbox allowance does not cap the flood. */
async function withLiveToken(api: string, signedUp: { id: number; trialToken: string }): Promise<Organisation> {
  const res = await postJson(api, signedUp.trialToken, `/organisations/${signedUp.id}/api-tokens`, { friendly_name: 'hostile-run', enabled: true });
  expect(res.status).toBe(201);
  return { id: signedUp.id, token: res.body.bearer };
}

async function queuePoisonJobs(environment: ServerEnvironment, orgId: number, voice: string): Promise<string[]> {
  const sealer = createSealer(parseEncryptionKey(environment.env.VOXKEY_ENCRYPTION_KEY!));
  const recording = Buffer.from(voice, 'base64');
  const now = new Date().toISOString();
  const expired = new Date(Date.now() - 1000).toISOString();
  const job = (requestUuid: string, sealedFor: string) => ({
    org_id: orgId,
    kind: 'enrollment' as const,
    request_uuid: requestUuid,
    body_hash: 'poison',
    external_id: `poison-${requestUuid.slice(0, 8)}`,
    language: 'en-UK',
    audio: Buffer.from(sealRecording(sealer, orgId, sealedFor, recording)),
    mode: 'new' as const,
    run_after: now,
    created_at: now,
    updated_at: now,
  });
  const killedItsWorkers = randomUUID();
  const failsEveryAttempt = randomUUID();
  const database = openDatabase(environment.env.DATABASE_URL!);
  try {
    await database.db
      .insertInto('jobs')
      .values([
        { ...job(killedItsWorkers, killedItsWorkers), status: 'processing', attempts: MAX_ATTEMPTS, lease_owner: 'dead-worker', lease_expires_at: expired },
        { ...job(failsEveryAttempt, randomUUID()), status: 'queued', attempts: 0 },
      ])
      .execute();
  } finally {
    await database.close();
  }
  return [killedItsWorkers, failsEveryAttempt];
}
