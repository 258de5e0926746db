/**
 * `npm run bench:profile` — CPU profile of the authenticated read path of a real `voxkey serve`.
 *
 *   tsx bench/profile.ts [--duration 5] [--connections 10] [--postgres] [--voice [--in-flight 16] [--format wav|mp3]]
 *
 * Starts the server under `node --cpu-prof` (SQLite file by default), seeds 100 users and one
 * predefined text, drives GET one text and the users page with autocannon, stops the server and
 * prints where its CPU time went (the engine's summariser, packages/engine/src/tools/profile.ts):
 * self time by package (hono, zod, kysely, better-sqlite3/pg, pino, prom-client, node internals,
 * the server's own code) and the heaviest functions. The .cpuprofile stays in
 * bench/results/profiles/ for a closer look (Chrome DevTools, speedscope).
 *
 * --voice: instead of reads, the acceptance path and the worker loop: one speaker enrolled, then
 * verifications (~5 s recordings, MP3 as stored or --format wav) kept 16 (--in-flight) in flight for the duration with webhooks to a local
 * receiver, workers in process. The main thread's profile is summarised (the engine's worker
 * threads write their own files).
 */
import { mkdirSync, readdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { summariseProfile } from '../packages/engine/src/tools/profile.js';
import {
  type ClipFormat,
  client,
  enrolFirstSpeaker,
  fiveSecondClips,
  inFormat,
  startReceiver,
} from './lib/api.js';
import { runLoad, seedUsers } from './lib/load.js';
import {
  argValue,
  chooseModels,
  createBenchOrganisation,
  createEnvironment,
  hasFlag,
  machine,
  ROOT,
  startServer,
  today,
  runBench,
} from './lib/server.js';

const DURATION = Number(argValue('--duration', '5'));
const CONNECTIONS = Number(argValue('--connections', '10'));
const dialect = hasFlag('--postgres') ? 'postgres' : 'sqlite';
const VOICE = hasFlag('--voice');
const IN_FLIGHT = Number(argValue('--in-flight', '16'));

async function driveVoice(
  baseUrl: string,
  environment: Awaited<ReturnType<typeof createEnvironment>>,
) {
  const receiver = await startReceiver();
  try {
    const { orgId, bearer } = await createBenchOrganisation(environment, 'Profile', receiver.url);
    const call = client(`${baseUrl}/v1`, bearer);
    const enrolled = await enrolFirstSpeaker(
      call,
      receiver,
      orgId,
      await inFormat(fiveSecondClips(8, 3), argValue('--format', 'mp3') as ClipFormat),
    );
    const end = performance.now() + DURATION * 1000;
    let done = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (performance.now() < end) {
          const requestUuid = randomUUID();
          const res = await call('POST', `/organisations/${orgId}/verifications`, {
            voice_data: enrolled.probes[done % 2]!,
            request_uuid: requestUuid,
            external_id: enrolled.externalId,
          });
          if (res.status !== 202) throw new Error(`verification: ${res.status}`);
          await receiver.waitFor(requestUuid);
          done++;
        }
      }),
    );
    console.log(`verifications: ${Math.round((done / DURATION) * 100) / 100}/s`);
  } finally {
    await receiver.close();
  }
}

async function main() {
  const profileDir = path.join(ROOT, 'bench/results/profiles');
  mkdirSync(profileDir, { recursive: true });
  const environment = await createEnvironment(
    dialect,
    VOICE ? { VOXKEY_MODELS_DIR: chooseModels().dir } : { RUN_WORKERS: 'false' },
  );
  const cpuProfDir = path.join(environment.dataDir, 'prof');
  const server = await startServer(environment, {}, 'profile', [
    '--cpu-prof',
    `--cpu-prof-dir=${cpuProfDir}`,
  ]);
  try {
    if (VOICE) await driveVoice(server.baseUrl, environment);
    else await driveReads(server.baseUrl, environment);
  } finally {
    await server.stop();
  }
  writeSummary(cpuProfDir, profileDir);
  await environment.cleanup();
}

async function driveReads(
  baseUrl: string,
  environment: Awaited<ReturnType<typeof createEnvironment>>,
) {
  {
    const { orgId, bearer } = await createBenchOrganisation(environment, 'Profile');
    const headers = { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' };
    await seedUsers(environment, orgId, 100);
    const api = `${baseUrl}/v1/organisations/${orgId}`;
    const created = await fetch(`${api}/predefined-texts`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        org_id: orgId,
        language: 'en-UK',
        text_code: 1,
        text: 'My voice is my password.',
      }),
    });
    if (created.status !== 201) throw new Error(`text: ${created.status}`);
    const text = (await created.json()) as { id: number };
    const results = [];
    for (const [scenario, url] of [
      ['text-get', `${api}/predefined-texts/${text.id}`],
      ['users-list', `${api}/users`],
    ] as const) {
      if (argValue('--scenario') && argValue('--scenario') !== scenario) continue;
      const r = await runLoad({
        scenario,
        url,
        durationSeconds: DURATION,
        connections: CONNECTIONS,
        headers,
      });
      console.log(
        `${scenario}: ${r.requestsPerSecond} req/s, statuses ${JSON.stringify(r.statusCounts)}`,
      );
      results.push(r);
    }
  }
}

function writeSummary(cpuProfDir: string, profileDir: string) {
  // The main thread's file: CPU.<date>.<time>.<pid>.<thread id 0>.<seq>.cpuprofile
  const file =
    readdirSync(cpuProfDir).find((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f)) ??
    readdirSync(cpuProfDir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('no profile written');
  const target = path.join(
    profileDir,
    `${VOICE ? 'voice' : 'reads'}-${dialect}-${today()}.cpuprofile`,
  );
  renameSync(path.join(cpuProfDir, file), target);
  const summary = summariseProfile(target, 25);
  const percent = (share: number) => `${(share * 100).toFixed(1).padStart(5)} %`;
  console.log(`machine: ${JSON.stringify(machine())}`);
  console.log(`busy ${summary.sampledMs - summary.idleMs} ms of ${summary.wallMs} ms`);
  for (const row of summary.byPackage) console.log(`${percent(row.share)}  ${row.pkg}`);
  console.log('--- functions (self time) ---');
  for (const row of summary.topSelf) console.log(`${percent(row.share)}  ${row.fn}`);
  console.log(`profile: ${path.relative(ROOT, target)}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runBench(main);
}
