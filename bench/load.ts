/**
 * `npm run bench:load` — HTTP load with autocannon against real `voxkey serve` processes.
 *
 *   tsx bench/load.ts [--duration 10] [--connections 10] [--sqlite-only | --postgres-only]
 *
 * For each dialect (SQLite file, then a fresh PostgreSQL database on 127.0.0.1:5432), with
 * RATE_LIMIT_ENABLED=false unless said otherwise:
 * - a bare Hono route (`GET /bare` on @hono/node-server, its own `node` process) and the
 *   authenticated users list (100 users, one page) in alternation, twice, for the ratio
 *   users-list / bare measured side by side;
 * - GET one predefined text; writes (POST, PATCH, DELETE of a predefined text, in sequence);
 * - POST verifications with a ~5 s recording (each a new request_uuid): accepted (202) and
 *   refused (429 queue full; JOB_MAX_QUEUE=100 here, --job-max-queue) counts, while the in-process
 *   workers run the engine;
 * - the users list again on a server with the default rate limits (RATE_LIMIT_ENABLED=true) to
 *   show the 429s of one token.
 * Throughput, latency p50/p95/p99 (every response, all statuses), status counts, errors, and the
 * server's RSS before and after each scenario. Writes bench/results/load-<date>.json.
 */
import { randomUUID } from 'node:crypto';
import { client, fiveSecondClips, startReceiver } from './lib/api.js';
import { type LoadResult, runLoad, seedUsers, startBareServer } from './lib/load.js';
import {
  argValue,
  chooseModels,
  createBenchOrganisation,
  createEnvironment,
  type Dialect,
  hasFlag,
  machine,
  rssMiB,
  startServer,
  today,
  writeResult,
  runBench,
} from './lib/server.js';

const DURATION = Number(argValue('--duration', '10'));
const CONNECTIONS = Number(argValue('--connections', '10'));
/** Lower than the default 500 so that a 10 s window of verification traffic reaches the queue limit (429). */
const JOB_MAX_QUEUE = argValue('--job-max-queue', '100')!;
const dialects: Dialect[] = hasFlag('--sqlite-only')
  ? ['sqlite']
  : hasFlag('--postgres-only')
    ? ['postgres']
    : ['sqlite', 'postgres'];

function line(r: LoadResult): string {
  const rss = r.rssMiB ? `, RSS ${r.rssMiB.before} -> ${r.rssMiB.after} MiB` : '';
  return `${r.scenario.padEnd(28)} ${String(r.requestsPerSecond).padStart(8)} req/s  p50 ${r.latencyMs.p50} p95 ${r.latencyMs.p95} p99 ${r.latencyMs.p99} ms  statuses ${JSON.stringify(r.statusCounts)} errors ${r.errors}${rss}`;
}

async function runDialect(
  dialect: Dialect,
  models: ReturnType<typeof chooseModels>,
  bare: { url: string; pid: number },
  clips: string[],
) {
  const environment = await createEnvironment(dialect, {
    VOXKEY_MODELS_DIR: models.dir,
    JOB_MAX_QUEUE,
  });
  const receiver = await startReceiver();
  let server = await startServer(environment, {}, 'load');
  const results: LoadResult[] = [];
  const record = (r: LoadResult) => {
    results.push(r);
    console.log(`[${dialect}] ${line(r)}`);
  };
  try {
    const { orgId, bearer } = await createBenchOrganisation(environment, 'Load', receiver.url);
    const headers = { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' };
    const api = `${server.baseUrl}/v1/organisations/${orgId}`;
    const call = client(`${server.baseUrl}/v1`, bearer);
    await seedUsers(environment, orgId, 100);
    const text = await call('POST', `/organisations/${orgId}/predefined-texts`, {
      org_id: orgId,
      language: 'en-UK',
      text_code: 1,
      text: 'My voice is my password.',
    });
    if (text.status !== 201) throw new Error(`text: ${text.status}`);
    const rssIdle = rssMiB(server.pid);

    // Warm-up (JIT, connection pools).
    await runLoad({
      scenario: 'warm-up',
      url: `${api}/users`,
      durationSeconds: 2,
      connections: CONNECTIONS,
      headers,
    });

    // Bare route and users list side by side, twice.
    const pairs: Array<{ bare: number; users: number }> = [];
    for (let round = 1; round <= 2; round++) {
      const b = await runLoad({
        scenario: `bare-route (round ${round})`,
        url: `${bare.url}/bare`,
        durationSeconds: DURATION,
        connections: CONNECTIONS,
      });
      record(b);
      const u = await runLoad({
        scenario: `users-list (round ${round})`,
        url: `${api}/users`,
        durationSeconds: DURATION,
        connections: CONNECTIONS,
        headers,
        serverPid: server.pid,
      });
      record(u);
      pairs.push({ bare: b.requestsPerSecond, users: u.requestsPerSecond });
    }

    record(
      await runLoad({
        scenario: 'text-get',
        url: `${api}/predefined-texts/${text.body.id}`,
        durationSeconds: DURATION,
        connections: CONNECTIONS,
        headers,
        serverPid: server.pid,
      }),
    );

    let code = 1000;
    record(
      await runLoad({
        scenario: 'text-writes (POST/PATCH/DELETE)',
        url: `${api}/predefined-texts`,
        durationSeconds: DURATION,
        connections: CONNECTIONS,
        headers,
        serverPid: server.pid,
        requests: [
          {
            method: 'POST',
            path: `/v1/organisations/${orgId}/predefined-texts`,
            setupRequest: (req: any) => ({
              ...req,
              body: JSON.stringify({
                org_id: orgId,
                language: 'fr-FR',
                text_code: ++code,
                text: `Dites ${code}`,
              }),
            }),
            onResponse: (status: number, body: string, context: any) => {
              context.id = status === 201 ? JSON.parse(body).id : undefined;
            },
          },
          {
            method: 'PATCH',
            setupRequest: (req: any, context: any) => ({
              ...req,
              path: `/v1/organisations/${orgId}/predefined-texts/${context.id ?? 0}`,
              body: JSON.stringify({ text: 'Changed' }),
            }),
          },
          {
            method: 'DELETE',
            setupRequest: (req: any, context: any) => ({
              ...req,
              path: `/v1/organisations/${orgId}/predefined-texts/${context.id ?? 0}`,
              body: undefined,
            }),
          },
        ],
      }),
    );

    // Verification traffic: enrol one speaker, then POST verifications as fast as they are accepted.
    // (Common Voice clips can have too little speech to enrol: take the first that enrols.)
    let clip = '';
    let enrolled: { body: any } | undefined;
    for (const [i, candidate] of clips.entries()) {
      const enrolUuid = randomUUID();
      const enrol = await call('POST', `/organisations/${orgId}/enrollments`, {
        voice_data: candidate,
        request_uuid: enrolUuid,
        external_id: `load-speaker-${i}`,
      });
      if (enrol.status !== 202)
        throw new Error(`enrolment: ${enrol.status} ${JSON.stringify(enrol.body)}`);
      const hook = await receiver.waitFor(enrolUuid);
      if (hook.body.status === 'enrolled') {
        clip = candidate;
        enrolled = { body: { ...hook.body } };
        break;
      }
    }
    if (!enrolled) throw new Error('no clip could be enrolled');
    const speaker = enrolled.body.external_id as string;
    const webhooksBefore = receiver.count;
    const voice = await runLoad({
      scenario: 'verifications (POST, 4 conn)',
      url: `${api}/verifications`,
      durationSeconds: DURATION,
      connections: 4,
      headers,
      serverPid: server.pid,
      requests: [
        {
          method: 'POST',
          path: `/v1/organisations/${orgId}/verifications`,
          setupRequest: (req: any) => ({
            ...req,
            body: JSON.stringify({
              voice_data: clip,
              request_uuid: randomUUID(),
              external_id: speaker,
            }),
          }),
        },
      ],
    });
    record(voice);
    const voiceSummary = {
      enrolment: enrolled.body.status,
      accepted202: voice.statusCounts['202'] ?? 0,
      refused429: voice.statusCounts['429'] ?? 0,
      other: Object.fromEntries(
        Object.entries(voice.statusCounts).filter(([k]) => k !== '202' && k !== '429'),
      ),
      webhooksDuringWindow: receiver.count - webhooksBefore,
      note: `JOB_MAX_QUEUE=${JOB_MAX_QUEUE} (default 500): once that many jobs are queued or processing, new requests get 429 with Retry-After: 5; the workers keep draining the queue after the window.`,
    };

    // Rate limits on: restart the same database with the default limits (20 rps, burst 50 per live token; 50/100 per organisation).
    await server.stop();
    server = await startServer(
      environment,
      { RATE_LIMIT_ENABLED: 'true', RUN_WORKERS: 'false' },
      'load-rl',
    );
    const apiRl = `${server.baseUrl}/v1/organisations/${orgId}`;
    record(
      await runLoad({
        scenario: 'users-list (rate limits on)',
        url: `${apiRl}/users`,
        durationSeconds: DURATION,
        connections: CONNECTIONS,
        headers,
        serverPid: server.pid,
      }),
    );

    const ratios = pairs.map((p) => Math.round((p.users / p.bare) * 1000) / 1000);
    return {
      dialect,
      rssIdleMiB: rssIdle,
      scenarios: results,
      usersListVsBare: {
        rounds: pairs,
        ratios,
        ratioOfMeans:
          Math.round(
            (pairs.reduce((a, p) => a + p.users, 0) / pairs.reduce((a, p) => a + p.bare, 0)) * 1000,
          ) / 1000,
      },
      verifications: voiceSummary,
    };
  } finally {
    await server.stop();
    await receiver.close();
    await environment.cleanup();
  }
}

async function main() {
  const models = chooseModels();
  const startedAt = new Date().toISOString();
  const machineAtStart = machine();
  console.log(
    `bench:load ${DURATION} s per scenario, ${CONNECTIONS} connections; models: ${models.which}; load average ${machineAtStart.loadavg.join(' ')}`,
  );
  const clips = fiveSecondClips(8, 1).map((s) => s.clips[0]!.base64);
  const bare = await startBareServer();
  const perDialect = [];
  try {
    for (const dialect of dialects) perDialect.push(await runDialect(dialect, models, bare, clips));
  } finally {
    bare.stop();
  }
  const report = {
    benchmark: 'load',
    startedAt,
    finishedAt: new Date().toISOString(),
    command: `npm run bench:load -- --duration ${DURATION} --connections ${CONNECTIONS} --job-max-queue ${JOB_MAX_QUEUE}${hasFlag('--sqlite-only') ? ' --sqlite-only' : ''}${hasFlag('--postgres-only') ? ' --postgres-only' : ''}`,
    models,
    machine: { ...machineAtStart, loadavgAtEnd: machine().loadavg },
    notes: [
      'autocannon runs in the benchmark process on the same machine as the servers; all share the cores (and with other jobs running on this machine).',
      'Latency percentiles are over every response of the window (all statuses).',
      `voxkey serve: NODE_ENV=development (production refuses the loopback webhook receiver; nothing measured depends on it), LOG_LEVEL=info (one JSON line per request, to a file), RATE_LIMIT_ENABLED=false except in the "rate limits on" scenario (which also runs RUN_WORKERS=false), JOB_MAX_QUEUE=${JOB_MAX_QUEUE}, workers in process.`,
    ],
    results: perDialect,
  };
  writeResult(`load-${today()}`, report);
  for (const d of perDialect)
    console.log(
      `${d.dialect}: users-list / bare = ${d.usersListVsBare.ratios.join(', ')} (ratio of means ${d.usersListVsBare.ratioOfMeans})`,
    );
}

runBench(main);
