/**
 * `npm run bench:reads` — authenticated reads against a bare Hono route, side by side (issue 17 item 3).
 *
 *   tsx bench/reads.ts [--postgres] [--rounds 3] [--duration 5] [--connections 10] [--vs other/apps/server/bin/voxkey.js] [--label x]
 *
 * One database (100 users, one predefined text, one live token), one `voxkey serve` of this build
 * (workers off, rate limits off) and the bare route of bench:load, driven in turn by autocannon:
 * each round runs the bare route, GET one predefined text and GET the users page (100 users).
 * Ratios to the bare route are taken round by round, so they hold when the machine's speed drifts;
 * the median over rounds is reported. Every scenario also records the server's own CPU time per
 * request (/proc), which other load on the machine moves far less than requests per second.
 *
 * --vs: a second server from another build (its bin/voxkey.js, e.g. a copy of an older
 * apps/server/{bin,dist}) on the same database, run in the same rounds in alternating order; the
 * report adds its ratios and this build's CPU per request over the other's.
 */
import path from 'node:path';
import { type LoadResult, runLoad, seedUsers, startBareServer } from './lib/load.js';
import {
  argValue,
  createBenchOrganisation,
  createEnvironment,
  type Dialect,
  hasFlag,
  machine,
  type ServerProcess,
  startServer,
  today,
  writeResult,
  runBench,
} from './lib/server.js';

const dialect: Dialect = hasFlag('--postgres') ? 'postgres' : 'sqlite';
const ROUNDS = Number(argValue('--rounds', '3'));
const DURATION = Number(argValue('--duration', '5'));
const CONNECTIONS = Number(argValue('--connections', '10'));
const OTHER_BIN = argValue('--vs');
const LABEL = argValue('--label');

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const round3 = (x: number) => Math.round(x * 1000) / 1000;
const round1 = (x: number) => Math.round(x * 10) / 10;

interface Target {
  name: string;
  server: ServerProcess;
  text: string;
  users: string;
}

async function main() {
  const startedAt = new Date().toISOString();
  const machineAtStart = machine();
  console.log(
    `bench:reads (${dialect}) ${ROUNDS} rounds x ${DURATION} s, ${CONNECTIONS} connections; load average ${machineAtStart.loadavg.join(' ')}`,
  );
  const environment = await createEnvironment(dialect, { RUN_WORKERS: 'false' });
  const bare = await startBareServer();
  const servers: ServerProcess[] = [];
  try {
    const { orgId, bearer } = await createBenchOrganisation(environment, 'Reads');
    const headers = { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' };
    await seedUsers(environment, orgId, 100);

    const targets: Target[] = [];
    for (const [name, bin] of [
      ['this build', undefined],
      ...(OTHER_BIN ? [['other build', path.resolve(OTHER_BIN)]] : []),
    ] as const) {
      const server = await startServer(environment, {}, `reads-${targets.length}`, [], bin);
      servers.push(server);
      const api = `${server.baseUrl}/v1/organisations/${orgId}`;
      targets.push({ name, server, text: '', users: `${api}/users` });
    }
    const created = await fetch(
      `${targets[0]!.server.baseUrl}/v1/organisations/${orgId}/predefined-texts`,
      {
        method: 'POST',
        headers,
        body: JSON.stringify({
          org_id: orgId,
          language: 'en-UK',
          text_code: 1,
          text: 'My voice is my password.',
        }),
      },
    );
    if (created.status !== 201) throw new Error(`text: ${created.status}`);
    const textId = ((await created.json()) as { id: number }).id;
    for (const t of targets)
      t.text = `${t.server.baseUrl}/v1/organisations/${orgId}/predefined-texts/${textId}`;

    // Warm-up (JIT) of every server and scenario.
    await runLoad({
      scenario: 'warm-up',
      url: `${bare.url}/bare`,
      durationSeconds: 2,
      connections: CONNECTIONS,
    });
    for (const t of targets) {
      for (const url of [t.text, t.users])
        await runLoad({
          scenario: 'warm-up',
          url,
          durationSeconds: 2,
          connections: CONNECTIONS,
          headers,
        });
    }

    const rounds: Array<Record<string, LoadResult>> = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const results: Record<string, LoadResult> = {};
      const run = async (key: string, url: string, pid: number, withHeaders: boolean) => {
        const r = await runLoad({
          scenario: key,
          url,
          durationSeconds: DURATION,
          connections: CONNECTIONS,
          serverPid: pid,
          ...(withHeaders ? { headers } : {}),
        });
        const bad = Object.keys(r.statusCounts).filter((s) => s !== '200');
        if (bad.length || r.errors)
          throw new Error(`${key}: statuses ${JSON.stringify(r.statusCounts)}, errors ${r.errors}`);
        results[key] = r;
        console.log(
          `round ${round} ${key.padEnd(24)} ${String(r.requestsPerSecond).padStart(8)} req/s  server CPU ${r.serverCpuUsPerRequest} us/request`,
        );
      };
      await run('bare', `${bare.url}/bare`, bare.pid, false);
      // Alternate which build goes first, so neither always runs right after the bare route.
      const order = round % 2 ? targets : [...targets].reverse();
      for (const t of order) {
        await run(`${t.name}: text`, t.text, t.server.pid, true);
        await run(`${t.name}: users page`, t.users, t.server.pid, true);
      }
      rounds.push(results);
    }

    const summary: Record<string, unknown> = {};
    for (const t of targets) {
      const ratios = (scenario: string) =>
        rounds.map((r) =>
          round3(r[`${t.name}: ${scenario}`]!.requestsPerSecond / r.bare!.requestsPerSecond),
        );
      summary[t.name] = {
        textVsBare: { perRound: ratios('text'), median: round3(median(ratios('text'))) },
        usersPageVsBare: {
          perRound: ratios('users page'),
          median: round3(median(ratios('users page'))),
        },
        serverCpuUsPerRequest: {
          text: round1(
            median(rounds.map((r) => r[`${t.name}: text`]!.serverCpuUsPerRequest ?? NaN)),
          ),
          usersPage: round1(
            median(rounds.map((r) => r[`${t.name}: users page`]!.serverCpuUsPerRequest ?? NaN)),
          ),
          bare: round1(median(rounds.map((r) => r.bare!.serverCpuUsPerRequest ?? NaN))),
        },
      };
    }
    if (OTHER_BIN) {
      const cpuRatio = (scenario: string) =>
        round3(
          median(
            rounds.map(
              (r) =>
                r[`this build: ${scenario}`]!.serverCpuUsPerRequest! /
                r[`other build: ${scenario}`]!.serverCpuUsPerRequest!,
            ),
          ),
        );
      summary.thisOverOtherCpuPerRequest = {
        text: cpuRatio('text'),
        usersPage: cpuRatio('users page'),
      };
    }
    console.log(JSON.stringify(summary, null, 2));
    writeResult(
      `reads-${today()}${dialect === 'postgres' ? '-postgres' : ''}${LABEL ? `-${LABEL}` : ''}`,
      {
        benchmark: 'reads',
        startedAt,
        finishedAt: new Date().toISOString(),
        command: `npm run bench:reads -- --rounds ${ROUNDS} --duration ${DURATION} --connections ${CONNECTIONS}${dialect === 'postgres' ? ' --postgres' : ''}${OTHER_BIN ? ` --vs ${OTHER_BIN}` : ''}`,
        machine: { ...machineAtStart, loadavgAtEnd: machine().loadavg },
        notes: [
          'autocannon runs in the benchmark process on the same machine as the servers; all share the cores.',
          "voxkey serve: RUN_WORKERS=false, RATE_LIMIT_ENABLED=false, LOG_LEVEL=info (one JSON line per request, to a file). On PostgreSQL the server CPU excludes the database server's.",
          'Ratios are taken round by round (the bare route of the same round); medians over rounds.',
        ],
        summary,
        rounds,
      },
    );
  } finally {
    for (const s of servers) await s.stop();
    bare.stop();
    await environment.cleanup();
  }
}

runBench(main);
