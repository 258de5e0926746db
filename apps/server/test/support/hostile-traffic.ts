import { randomUUID } from 'node:crypto';
import type { Insertable } from 'kysely';
import { openDatabase } from '../../src/db/connection.js';
import type { JobsTable } from '../../src/db/types.js';
import { sealRecording } from '../../src/security/recordings.js';
import { createSealer, parseEncryptionKey } from '../../src/security/sealing.js';
import { rssMiB } from './process-memory.js';
import { type StreamedUpload, streamUpload } from './streamed-upload.js';

/**
 * The hostile run of issue 15 against one running server: chunked floods (unauthenticated, and
 * authenticated over the body limit), one organisation flooding its share of the queue while
 * another sends at a steady pace, /healthz probes and the server's RSS, all at once. Shared by the
 * e2e test (test/e2e/hostile-run.test.ts) and the operators' longer run (bench/hostile.ts); the
 * callers set the server up, check the outcome and say what they expect.
 */

export interface HostileOrganisation {
  id: number;
  token: string;
}

export type VoiceKind = 'enrollments' | 'verifications';

export interface Sent {
  org: HostileOrganisation;
  kind: VoiceKind;
  requestUuid: string;
  status: number;
  /** The error code of a refusal (`queue_full`, ...). */
  error?: string;
  sentAt: number;
}

export interface HostileTrafficOptions {
  /** The API base URL (`.../v1`). */
  api: string;
  serverPid: number;
  durationMs: number;
  /** Organisation A: keeps its share of the queue full, ignoring Retry-After. */
  flooder: { org: HostileOrganisation; externalId: string; loops: number };
  /** Organisation B: one verification every `everyMs`. */
  steady: { org: HostileOrganisation; externalId: string; everyMs: number };
  /** The recording both verify with (base64). */
  voice: string;
  unauthenticated: { perWave: number; bodyBytes: number; everyMs: number };
  /** Bytes each authenticated over-limit upload offers (more than BODY_LIMIT_BYTES). */
  overLimitBodyBytes: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** A token-shaped bearer that belongs to nobody. */
const WRONG_TOKEN = `vk_live_${'x'.repeat(43)}`;

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0
    ? 0
    : sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)]!;
}

export async function sendVoice(
  api: string,
  org: HostileOrganisation,
  kind: VoiceKind,
  voice: string,
  externalId: string,
): Promise<Sent> {
  const requestUuid = randomUUID();
  const sentAt = Date.now();
  const res = await fetch(`${api}/organisations/${org.id}/${kind}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${org.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ voice_data: voice, request_uuid: requestUuid, external_id: externalId }),
    // A wedged server must end the run with an error, not leave its loops waiting past the test's timeout.
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  const error =
    res.status === 202 || !text ? undefined : (JSON.parse(text) as { error?: string }).error;
  return { org, kind, requestUuid, status: res.status, error, sentAt };
}

/** What the run saw. */
export class HostileObservations {
  readonly sent: Sent[] = [];
  readonly unauthenticated: StreamedUpload[] = [];
  readonly overLimit: StreamedUpload[] = [];
  readonly healthz: Array<{ status: number | null; ms: number }> = [];
  readonly rssMiB: number[] = [];
  /** Errors that stopped the run early (e.g. an upload the server never answered). */
  readonly failures: unknown[] = [];

  accepted(): Sent[] {
    return this.sent.filter((s) => s.status === 202);
  }

  of(org: HostileOrganisation): Sent[] {
    return this.sent.filter((s) => s.org === org);
  }

  peakRssMiB(): number {
    return Math.max(...this.rssMiB);
  }

  /** The figures docs/deployment.md quotes. `webhookMs` gives a request's request-to-webhook time. */
  summary(
    options: HostileTrafficOptions,
    baselineRssMiB: number,
    webhookMs: (sent: Sent) => number | undefined,
  ) {
    const round = (value: number) => Math.round(value * 10) / 10;
    const healthMs = this.healthz.map((h) => h.ms);
    const flooder = this.of(options.flooder.org);
    const steady = this.of(options.steady.org);
    const steadyMs = steady.map(webhookMs).filter((ms): ms is number => ms !== undefined);
    const statuses: Record<string, number> = {};
    for (const s of this.sent) statuses[s.status] = (statuses[s.status] ?? 0) + 1;
    return {
      rssMiB: {
        baseline: round(baselineRssMiB),
        peak: round(this.peakRssMiB()),
        growth: round(this.peakRssMiB() - baselineRssMiB),
      },
      healthz: {
        probes: healthMs.length,
        failed: this.healthz.filter((h) => h.status !== 200).length,
        p50Ms: percentile(healthMs, 0.5),
        p95Ms: percentile(healthMs, 0.95),
        p99Ms: percentile(healthMs, 0.99),
        maxMs: Math.max(...healthMs),
      },
      unauthenticatedUploads: {
        count: this.unauthenticated.length,
        answered401: this.unauthenticated.filter((u) => u.status === 401).length,
        closedBeforeAnswerRead: this.unauthenticated.filter((u) => u.status === null).length,
        readToTheEnd: this.unauthenticated.filter((u) => u.finishedWhenAnswered).length,
      },
      overLimitUploads: {
        count: this.overLimit.length,
        answered413: this.overLimit.filter((u) => u.status === 413).length,
        answeredWhileStreaming: this.overLimit.filter((u) => !u.finishedWhenAnswered).length,
        maxMiBSentBeforeAnswer: round(
          Math.max(0, ...this.overLimit.map((u) => u.sentWhenAnswered)) / (1024 * 1024),
        ),
      },
      flooder: {
        sent: flooder.length,
        accepted: flooder.filter((s) => s.status === 202).length,
        queueFull: flooder.filter((s) => s.error === 'queue_full').length,
      },
      steady: {
        sent: steady.length,
        accepted: steady.filter((s) => s.status === 202).length,
        refused: steady.filter((s) => s.status !== 202).length,
        webhookP50Ms: percentile(steadyMs, 0.5),
        webhookP95Ms: percentile(steadyMs, 0.95),
      },
      voiceRequestStatuses: statuses,
      serverErrors: this.sent.filter((s) => s.status >= 500).length,
    };
  }
}

/**
 * Runs the hostile traffic for `durationMs` (or until one of its loops fails), recording into
 * `observations`; the server's RSS is sampled every 50 ms.
 */
export async function runHostileTraffic(
  options: HostileTrafficOptions,
  observations: HostileObservations,
): Promise<void> {
  const { api, flooder, steady } = options;
  const deadline = Date.now() + options.durationMs;
  const running = () => observations.failures.length === 0 && Date.now() < deadline;
  const sampler = setInterval(() => {
    try {
      observations.rssMiB.push(rssMiB(options.serverPid));
    } catch {
      // The process is gone: the caller finds out from its requests.
    }
  }, 50);
  const record = async (sending: Promise<Sent>) => {
    const sent = await sending;
    observations.sent.push(sent);
    return sent;
  };
  const loops: Array<() => Promise<void>> = [
    ...Array.from({ length: flooder.loops }, () => async () => {
      while (running()) {
        const sent = await record(
          sendVoice(api, flooder.org, 'verifications', options.voice, flooder.externalId),
        );
        if (sent.status !== 202) await sleep(100);
      }
    }),
    async () => {
      while (running()) {
        const started = Date.now();
        await record(sendVoice(api, steady.org, 'verifications', options.voice, steady.externalId));
        await sleep(steady.everyMs - (Date.now() - started));
      }
    },
    // Waves of unauthenticated chunked uploads (no token, or a wrong one), each offered slowly.
    async () => {
      while (running()) {
        const started = Date.now();
        const wave = await Promise.all(
          Array.from({ length: options.unauthenticated.perWave }, (_, i) =>
            streamUpload(api, `/organisations/${steady.org.id}/verifications`, {
              token: i % 2 ? WRONG_TOKEN : undefined,
              totalBytes: options.unauthenticated.bodyBytes,
              chunkDelayMs: 20,
              timeoutMs: 20_000,
            }),
          ),
        );
        observations.unauthenticated.push(...wave);
        await sleep(options.unauthenticated.everyMs - (Date.now() - started));
      }
    },
    // Authenticated chunked uploads over the body limit, one after another (at most 12.8 MiB/s).
    async () => {
      while (running()) {
        observations.overLimit.push(
          await streamUpload(api, `/organisations/${flooder.org.id}/verifications`, {
            token: flooder.org.token,
            totalBytes: options.overLimitBodyBytes,
            chunkDelayMs: 5,
            timeoutMs: 20_000,
          }),
        );
        await sleep(500);
      }
    },
    async () => {
      const healthz = `${api.replace(/\/v1$/, '')}/healthz`;
      while (running()) {
        const started = Date.now();
        const status = await fetch(healthz, { signal: AbortSignal.timeout(10_000) }).then(
          (res) => res.status,
          () => null,
        );
        observations.healthz.push({ status, ms: Date.now() - started });
        await sleep(100);
      }
    },
  ];
  try {
    await Promise.all(
      loops.map((loop) => loop().catch((err: unknown) => void observations.failures.push(err))),
    );
  } finally {
    clearInterval(sampler);
  }
}

/**
 * Two poison jobs, written as the server would find them: one whose workers died on every attempt
 * (processing, lease expired, `maxAttempts` used up), one that fails every time it runs (its sealed
 * recording does not open: sealed for another request). Returns their request UUIDs.
 */
export async function queuePoisonJobs(options: {
  databaseUrl: string;
  encryptionKey: string;
  orgId: number;
  voice: string;
  maxAttempts: number;
}): Promise<string[]> {
  const sealer = createSealer(parseEncryptionKey(options.encryptionKey));
  const recording = Buffer.from(options.voice, 'base64');
  const now = new Date().toISOString();
  const job = (requestUuid: string) => ({
    org_id: options.orgId,
    kind: 'enrollment' as const,
    request_uuid: requestUuid,
    body_hash: 'poison',
    external_id: `poison-${requestUuid.slice(0, 8)}`,
    language: 'en-UK',
    mode: 'new' as const,
    run_after: now,
    created_at: now,
    updated_at: now,
  });
  const killedItsWorkers = randomUUID();
  const failsEveryAttempt = randomUUID();
  const database = openDatabase(options.databaseUrl);
  try {
    const seed = async (values: Insertable<JobsTable>, sealedFor: string) => {
      const { id } = await database.db
        .insertInto('jobs')
        .values(values)
        .returning('id')
        .executeTakeFirstOrThrow();
      await database.db
        .insertInto('job_recordings')
        .values({
          job_id: id,
          audio: Buffer.from(sealRecording(sealer, options.orgId, sealedFor, recording)),
          audio_info: null,
        })
        .execute();
    };
    await seed(
      {
        ...job(killedItsWorkers),
        status: 'processing',
        attempts: options.maxAttempts,
        lease_owner: 'dead-worker',
        lease_expires_at: new Date(Date.now() - 1000).toISOString(),
      },
      killedItsWorkers,
    );
    // Sealed for another request: this recording can never be opened.
    await seed({ ...job(failsEveryAttempt), status: 'queued', attempts: 0 }, randomUUID());
  } finally {
    await database.close();
  }
  return [killedItsWorkers, failsEveryAttempt];
}

/** Jobs not yet completed or failed, and deliveries not yet delivered: both empty once nothing is lost. */
export async function unfinishedWork(databaseUrl: string) {
  const database = openDatabase(databaseUrl);
  try {
    return {
      jobs: await database.db
        .selectFrom('jobs')
        .select(['request_uuid', 'status'])
        .where('status', 'not in', ['completed', 'failed'])
        .execute(),
      deliveries: await database.db
        .selectFrom('webhook_deliveries')
        .select(['request_uuid', 'status'])
        .where('status', '!=', 'delivered')
        .execute(),
    };
  } finally {
    await database.close();
  }
}
