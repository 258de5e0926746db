/**
 * `npm run bench:profile` — CPU profile of the authenticated read path of a real `voxkey serve`.
 *
 *   tsx bench/profile.ts [--duration 5] [--connections 10] [--postgres]
 *
 * Starts the server under `node --cpu-prof` (SQLite file by default), seeds 100 users and one
 * predefined text, drives GET one text and the users page with autocannon, stops the server and
 * prints where its CPU time went: self time by package (hono, zod, kysely, better-sqlite3/pg, pino,
 * prom-client, node internals, the server's own code) and the heaviest functions. The .cpuprofile
 * stays in bench/results/profiles/ for a closer look (Chrome DevTools, speedscope).
 *
 * --voice: instead of reads, the acceptance path and the worker loop: one speaker enrolled, then
 * verifications (~5 s recordings) kept 16 in flight for the duration with webhooks to a local
 * receiver, workers in process. The main thread's profile is summarised (the engine's worker
 * threads write their own files).
 */
import { mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { client, fiveSecondClips, startReceiver } from './lib/api.js';
import { runLoad, seedUsers } from './lib/load.js';
import { argValue, chooseModels, cli, createEnvironment, hasFlag, machine, ROOT, startServer, today } from './lib/server.js';

const DURATION = Number(argValue('--duration', '5'));
const CONNECTIONS = Number(argValue('--connections', '10'));
const dialect = hasFlag('--postgres') ? 'postgres' : 'sqlite';
const VOICE = hasFlag('--voice');

async function driveVoice(baseUrl: string, environment: Awaited<ReturnType<typeof createEnvironment>>) {
  const receiver = await startReceiver();
  try {
    const org = await cli(environment, ['org', 'create', '--name', 'Profile', '--email', 'profile@example.com', '--plan', '4', '--callback-url', receiver.url]);
    const orgId: number = org.organisation.id;
    const live = await cli(environment, ['token', 'create', '--org', String(orgId), '--name', 'profile']);
    const call = client(`${baseUrl}/v1`, live.bearer);
    let enrolled: { externalId: string; probes: string[] } | null = null;
    for (const [i, s] of fiveSecondClips(8, 3).entries()) {
      const requestUuid = randomUUID();
      const externalId = `speaker-${i}`;
      await call('POST', `/organisations/${orgId}/enrollments`, { voice_data: s.clips[0]!.base64, request_uuid: requestUuid, external_id: externalId });
      if ((await receiver.waitFor(requestUuid)).body.status === 'enrolled') {
        enrolled = { externalId, probes: s.clips.slice(1).map((c) => c.base64) };
        break;
      }
    }
    if (!enrolled) throw new Error('no speaker could be enrolled');
    const end = performance.now() + DURATION * 1000;
    let done = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (performance.now() < end) {
          const requestUuid = randomUUID();
          const res = await call('POST', `/organisations/${orgId}/verifications`, { voice_data: enrolled!.probes[done % 2]!, request_uuid: requestUuid, external_id: enrolled!.externalId });
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

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function packageOf(url: string): string {
  if (!url) return '(native / gc / idle)';
  if (url.startsWith('node:')) return 'node internals';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.includes('/apps/server/')) return 'voxkey server';
  if (url.includes('/packages/contract/')) return '@voxkey/contract';
  if (url.includes('/packages/engine/')) return '@voxkey/engine';
  return url;
}

export function summariseProfile(profile: CpuProfile, top = 25) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  let total = 0;
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const name = node.callFrame.functionName || '(anonymous)';
    if (name === '(idle)' || name === '(program)') continue;
    total += us;
    const pkg = name === '(garbage collector)' ? 'garbage collector' : packageOf(node.callFrame.url);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
    const where = node.callFrame.url ? `${path.basename(node.callFrame.url)}:${node.callFrame.lineNumber + 1}` : '';
    const key = `${name} ${where} [${pkg}]`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  }
  const share = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => ({ what: k, ms: Math.round(us / 1000), percent: Math.round((us / total) * 1000) / 10 }));
  return { busyMs: Math.round(total / 1000), byPackage: share(byPackage), byFunction: share(byFunction) };
}

async function main() {
  const profileDir = path.join(ROOT, 'bench/results/profiles');
  mkdirSync(profileDir, { recursive: true });
  const environment = await createEnvironment(dialect, VOICE ? { VOXKEY_MODELS_DIR: chooseModels().dir } : { RUN_WORKERS: 'false' });
  const cpuProfDir = path.join(environment.dataDir, 'prof');
  const server = await startServer(environment, {}, 'profile', ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`]);
  try {
    if (VOICE) await driveVoice(server.baseUrl, environment);
    else await driveReads(server.baseUrl, environment);
  } finally {
    await server.stop();
  }
  writeSummary(cpuProfDir, profileDir);
  await environment.cleanup();
}

async function driveReads(baseUrl: string, environment: Awaited<ReturnType<typeof createEnvironment>>) {
  {
    const org = await cli(environment, ['org', 'create', '--name', 'Profile', '--email', 'profile@example.com', '--plan', '4']);
    const orgId: number = org.organisation.id;
    const live = await cli(environment, ['token', 'create', '--org', String(orgId), '--name', 'profile']);
    const headers = { authorization: `Bearer ${live.bearer}`, 'content-type': 'application/json' };
    await seedUsers(environment, orgId, 100);
    const api = `${baseUrl}/v1/organisations/${orgId}`;
    const created = await fetch(`${api}/predefined-texts`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ org_id: orgId, language: 'en-UK', text_code: 1, text: 'My voice is my password.' }),
    });
    if (created.status !== 201) throw new Error(`text: ${created.status}`);
    const text = (await created.json()) as { id: number };
    const results = [];
    for (const [scenario, url] of [
      ['text-get', `${api}/predefined-texts/${text.id}`],
      ['users-list', `${api}/users`],
    ] as const) {
      if (argValue('--scenario') && argValue('--scenario') !== scenario) continue;
      const r = await runLoad({ scenario, url, durationSeconds: DURATION, connections: CONNECTIONS, headers });
      console.log(`${scenario}: ${r.requestsPerSecond} req/s, statuses ${JSON.stringify(r.statusCounts)}`);
      results.push(r);
    }
  }
}

function writeSummary(cpuProfDir: string, profileDir: string) {
  // The main thread's file: CPU.<date>.<time>.<pid>.<thread id 0>.<seq>.cpuprofile
  const file = readdirSync(cpuProfDir).find((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f)) ?? readdirSync(cpuProfDir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('no profile written');
  const target = path.join(profileDir, `${VOICE ? 'voice' : 'reads'}-${dialect}-${today()}.cpuprofile`);
  renameSync(path.join(cpuProfDir, file), target);
  const summary = summariseProfile(JSON.parse(readFileSync(target, 'utf8')) as CpuProfile);
  console.log(`machine: ${JSON.stringify(machine())}`);
  console.log(`busy ${summary.busyMs} ms`);
  for (const row of summary.byPackage) console.log(`${String(row.percent).padStart(5)} %  ${row.what}`);
  console.log('--- functions (self time) ---');
  for (const row of summary.byFunction) console.log(`${String(row.percent).padStart(5)} %  ${row.what}`);
  console.log(`profile: ${path.relative(ROOT, target)}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
