/**
 * `npm run bench:hostile` — the hostile run of issue 15, for longer than the e2e test runs it.
 *
 *   tsx bench/hostile.ts [--minutes 3] [--postgres] [--fixtures] [--label x]
 *
 * Not part of CI. Against one `voxkey serve` (API and workers, default settings but for
 * RATE_LIMIT_ENABLED=false): waves of 100 unauthenticated chunked uploads of 14 MiB offered slowly,
 * authenticated chunked uploads over the 15 MiB body limit, organisation A flooding its share of the
 * queue, organisation B sending one verification a second, two poison jobs, /healthz probed every
 * 100 ms and the server's RSS every 50 ms; then every accepted request's webhook and record are
 * checked. The traffic is the e2e test's (apps/server/test/support/hostile-traffic.ts). Writes
 * bench/results/hostile-<date>[-postgres][-fixtures][-<label>].json and exits 1 if a check failed.
 */
import { readFileSync } from 'node:fs';
import {
  HostileObservations,
  type HostileOrganisation,
  type HostileTrafficOptions,
  queuePoisonJobs,
  runHostileTraffic,
  type Sent,
  sendVoice,
  unfinishedWork,
} from '../apps/server/test/support/hostile-traffic.js';
import { client, fiveSecondClips, startReceiver } from './lib/api.js';
import {
  argValue,
  chooseModels,
  createBenchOrganisation,
  createEnvironment,
  type Dialect,
  FIXTURE_MODELS,
  hasFlag,
  machine,
  rssMiB,
  startServer,
  today,
  writeResult,
  runBench,
} from './lib/server.js';

const MINUTES = Number(argValue('--minutes', '3'));
const dialect: Dialect = hasFlag('--postgres') ? 'postgres' : 'sqlite';
const FIXTURES = hasFlag('--fixtures');
const LABEL = argValue('--label');
const MiB = 1024 * 1024;
const BODY_LIMIT = 15 * MiB;
const JOB_MAX_ATTEMPTS = 3;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  const models = FIXTURES
    ? { dir: FIXTURE_MODELS, which: 'engine fixture models (--fixtures)' }
    : chooseModels();
  const startedAt = new Date().toISOString();
  const machineAtStart = machine();
  console.log(`bench:hostile ${MINUTES} min on ${dialect}; models: ${models.which}`);
  const environment = await createEnvironment(dialect, { VOXKEY_MODELS_DIR: models.dir });
  const receiver = await startReceiver();
  const server = await startServer(environment, {}, 'hostile');
  const api = `${server.baseUrl}/v1`;
  try {
    const organisation = async (name: string): Promise<HostileOrganisation> => {
      const { orgId, bearer } = await createBenchOrganisation(environment, name, receiver.url);
      return { id: orgId, token: bearer };
    };
    const flooder = await organisation('Flooder');
    const steady = await organisation('Steady');
    const poisoned = await organisation('Poisoned');

    // One speaker whose clip enrols in both organisations; the flood verifies with its second clip.
    let speaker: { enrol: string; probe: string } | undefined;
    for (const candidate of fiveSecondClips(8, 2)) {
      const [enrol, probe] = candidate.clips.map((c) => c.base64);
      const sent = await sendVoice(api, flooder, 'enrollments', enrol!, `flo-${candidate.speaker}`);
      if ((await receiver.waitFor(sent.requestUuid)).body.status !== 'enrolled') continue;
      const again = await sendVoice(
        api,
        steady,
        'enrollments',
        enrol!,
        `stella-${candidate.speaker}`,
      );
      if ((await receiver.waitFor(again.requestUuid)).body.status !== 'enrolled') continue;
      speaker = { enrol: `${candidate.speaker}`, probe: probe! };
      break;
    }
    if (!speaker) throw new Error('no clip could be enrolled');
    await sleep(2000);
    const baseline = Math.max(...[0, 1, 2, 3, 4].map(() => rssMiB(server.pid) ?? 0));

    const poisonJobs = await queuePoisonJobs({
      databaseUrl: environment.databaseUrl,
      encryptionKey: environment.env.VOXKEY_ENCRYPTION_KEY!,
      orgId: poisoned.id,
      voice: speaker.probe,
      maxAttempts: JOB_MAX_ATTEMPTS,
    });
    const options: HostileTrafficOptions = {
      api,
      serverPid: server.pid,
      durationMs: MINUTES * 60_000,
      flooder: { org: flooder, externalId: `flo-${speaker.enrol}`, loops: 3 },
      steady: { org: steady, externalId: `stella-${speaker.enrol}`, everyMs: 1000 },
      voice: speaker.probe,
      unauthenticated: { perWave: 100, bodyBytes: 14 * MiB, everyMs: 3000 },
      overLimitBodyBytes: BODY_LIMIT + 4 * MiB,
    };
    const observations = new HostileObservations();
    const rssTimeline: Array<{ seconds: number; rssMiB: number | null }> = [];
    const floodStarted = Date.now();
    const progress = setInterval(() => {
      const rss = rssMiB(server.pid);
      rssTimeline.push({ seconds: Math.round((Date.now() - floodStarted) / 1000), rssMiB: rss });
      console.log(
        `${observations.sent.length} voice requests, ${observations.unauthenticated.length} unauthenticated uploads, ${receiver.count} webhooks; RSS ${rss} MiB`,
      );
    }, 15_000);
    await runHostileTraffic(options, observations).finally(() => clearInterval(progress));

    const accepted = observations.accepted();
    const expected = [...accepted.map((s) => s.requestUuid), ...poisonJobs];
    const drainStarted = Date.now();
    while (
      expected.some((uuid) => !receiver.perRequest.has(uuid)) &&
      Date.now() - drainStarted < 180_000
    )
      await sleep(500);
    const drainSeconds = Math.round((Date.now() - drainStarted) / 100) / 10;
    await sleep(2000); // a duplicate would arrive within the retry schedule

    const readable = async (sent: {
      org: HostileOrganisation;
      kind: string;
      requestUuid: string;
    }) => {
      const res = await client(api, sent.org.token)(
        'GET',
        `/organisations/${sent.org.id}/${sent.kind}/${sent.requestUuid}`,
      );
      return res.status === 200 && ['completed', 'failed'].includes(res.body.status);
    };
    let unreadable = 0;
    for (let i = 0; i < accepted.length; i += 8)
      unreadable += (await Promise.all(accepted.slice(i, i + 8).map(readable))).filter(
        (ok) => !ok,
      ).length;
    const poisonRecords = await Promise.all(
      poisonJobs.map((uuid) =>
        client(api, poisoned.token)('GET', `/organisations/${poisoned.id}/enrollments/${uuid}`),
      ),
    );
    const unfinished = await unfinishedWork(environment.databaseUrl);
    const log = readFileSync(server.logFile, 'utf8');
    const webhookMs = (sent: Sent) => {
      const arrival = receiver.arrivals.get(sent.requestUuid);
      return arrival ? Math.round(arrival.at + performance.timeOrigin - sent.sentAt) : undefined;
    };
    const summary = observations.summary(options, baseline, webhookMs);
    const checks = {
      noServerErrors: summary.serverErrors === 0 && !/unhandled error/.test(log),
      healthzAlwaysAnswered: summary.healthz.failed === 0,
      unauthenticatedNeverRead: observations.unauthenticated.every(
        (u) => !u.finishedWhenAnswered && (u.status === 401 || u.status === null),
      ),
      overLimitRefused: observations.overLimit.every((u) => u.status === 413 || u.status === null),
      flooderOnlyQueueFull: observations
        .of(flooder)
        .every((s) => s.status === 202 || s.error === 'queue_full'),
      steadyNeverRefused: summary.steady.refused === 0,
      oneWebhookPerAccepted: expected.every((uuid) => receiver.perRequest.get(uuid) === 1),
      recordsReadable: unreadable === 0,
      poisonJobsFailedWithProcessingError: poisonRecords.every(
        (r) =>
          r.status === 200 &&
          r.body.status === 'failed' &&
          r.body.failure_reason === 'processing_error',
      ),
      nothingUnfinished: unfinished.jobs.length === 0 && unfinished.deliveries.length === 0,
      noFailures: observations.failures.length === 0,
    };
    const report = {
      benchmark: 'hostile',
      startedAt,
      finishedAt: new Date().toISOString(),
      command: `npm run bench:hostile -- --minutes ${MINUTES}${dialect === 'postgres' ? ' --postgres' : ''}${FIXTURES ? ' --fixtures' : ''}`,
      dialect,
      minutes: MINUTES,
      models,
      machine: { ...machineAtStart, loadavgAtEnd: machine().loadavg },
      server:
        'voxkey serve, NODE_ENV=development (for the loopback webhook receiver), defaults otherwise (JOB_MAX_QUEUE 500, JOB_MAX_QUEUE_PER_ORG 125, BODY_LIMIT_BYTES 15 MiB, ENGINE_THREADS = cores) but RATE_LIMIT_ENABLED=false',
      traffic: {
        flooderLoops: options.flooder.loops,
        steadyEveryMs: options.steady.everyMs,
        unauthenticated: options.unauthenticated,
        overLimitBodyBytes: options.overLimitBodyBytes,
      },
      checks,
      summary: {
        ...summary,
        webhooks: {
          expected: expected.length,
          received: expected.reduce((n, uuid) => n + (receiver.perRequest.get(uuid) ?? 0), 0),
          drainSeconds,
        },
      },
      rssTimeline,
      failures: observations.failures.map(String),
    };
    writeResult(
      `hostile-${today()}${dialect === 'postgres' ? '-postgres' : ''}${FIXTURES ? '-fixtures' : ''}${LABEL ? `-${LABEL}` : ''}`,
      report,
    );
    console.log(JSON.stringify({ checks, summary: report.summary }, null, 2));
    if (Object.values(checks).some((ok) => !ok)) process.exitCode = 1;
  } finally {
    await server.stop();
    await receiver.close();
    await environment.cleanup();
  }
}

runBench(main);
