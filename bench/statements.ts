/**
 * `npm run bench:statements` — the SQL statements one verification costs on PostgreSQL, as the
 * database server sees them (its `log_statement`), from the request to the webhook's delivery.
 *
 *   tsx bench/statements.ts [--verifications 5] [--log /var/log/postgresql/postgresql-15-main.log] [--server-bin other/bin/voxkey.js]
 *
 * Creates a fresh database with `log_statement = all`, starts `voxkey serve` on it, enrols one
 * speaker, and counts the lines the server logs for that database while verifications run one at a
 * time, each waited for until its webhook is delivered and recorded. The loops are woken by new work
 * (JOB_POLL_MS is set high); what they poll while idle is measured apart and subtracted.
 * Needs a local PostgreSQL whose log this process can read (Debian's layout by default).
 * Writes bench/results/statements-<date>[-label].json.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import {
  client,
  enrolFirstSpeaker,
  fiveSecondClips,
  inFormat,
  recordingPoster,
  startReceiver,
} from './lib/api.js';
import {
  argValue,
  chooseModels,
  createBenchOrganisation,
  createEnvironment,
  machine,
  POSTGRES_ADMIN_URL,
  runBench,
  startServer,
  summarise,
  today,
  writeResult,
} from './lib/server.js';

const VERIFICATIONS = Number(argValue('--verifications', '5'));
const SERVER_BIN = argValue('--server-bin') ? path.resolve(argValue('--server-bin')!) : undefined;
const IDLE_MS = 3000;
/** After a webhook arrives, for the dispatcher to record its delivery. */
const SETTLE_MS = 300;

/** Debian's log of the newest installed PostgreSQL's main cluster. */
function defaultLog(): string {
  const [version] = readdirSync('/etc/postgresql').sort((a, b) => Number(b) - Number(a));
  return `/var/log/postgresql/postgresql-${version}-main.log`;
}

/** The statements the server logged for `database` since byte `from` of the log, in order. */
function statementsSince(log: string, from: number, database: string): string[] {
  return readFileSync(log)
    .subarray(from)
    .toString('utf8')
    .split('\n')
    .filter((line) => new RegExp(`@${database} LOG:  (statement|execute [^:]*):`).test(line))
    .map((line) => line.replace(/^.*? LOG:  (statement|execute [^:]*): /, ''));
}

/** The statement's kind and table, e.g. "select organisation_settings", for the tally. */
function shape(statement: string): string {
  const words = statement.replace(/"/g, '').split(/\s+/);
  const verb = words[0]!.toLowerCase();
  const from = words.findIndex((w) => w.toLowerCase() === 'from');
  const table =
    verb === 'select'
      ? from < 0
        ? words[1]!.replace(/\(.*$/, '()')
        : words[from + 1]
      : verb === 'insert' || verb === 'delete'
        ? words[2]
        : verb === 'update'
          ? words[1]
          : '';
  return `${verb} ${table ?? ''}`.trim();
}

async function main() {
  const log = argValue('--log') ?? defaultLog();
  const models = chooseModels();
  const speakers = await inFormat(fiveSecondClips(4, 3), 'wav');
  const startedAt = new Date().toISOString();
  const machineAtStart = machine();
  const environment = await createEnvironment('postgres', { VOXKEY_MODELS_DIR: models.dir });
  const receiver = await startReceiver();
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    const database = new URL(environment.databaseUrl).pathname.slice(1);
    const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await admin.connect();
    try {
      await admin.query(`alter database ${database} set log_statement = 'all'`);
    } finally {
      await admin.end();
    }
    // The loops are woken when work arrives; their idle polls (the dispatcher's at most 1 s apart) are counted apart.
    server = await startServer(environment, { JOB_POLL_MS: '60000' }, 'statements', [], SERVER_BIN);
    const { orgId, bearer } = await createBenchOrganisation(
      environment,
      'Bench',
      receiver.url,
      SERVER_BIN,
    );
    const call = client(`${server.baseUrl}/v1`, bearer);
    const post = recordingPoster(`${server.baseUrl}/v1`, bearer);
    const enrolled = await enrolFirstSpeaker(call, receiver, orgId, speakers);
    const subject = { externalId: enrolled.externalId, probe: enrolled.probes[0]! };
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const requestToWebhookMs: number[] = [];
    const verify = async () => {
      const requestUuid = randomUUID();
      const t0 = performance.now();
      const res = await post(`/organisations/${orgId}/verifications`, subject.probe, {
        request_uuid: requestUuid,
        external_id: subject.externalId,
      });
      if (res.status !== 202) throw new Error(`verification: ${res.status}`);
      requestToWebhookMs.push((await receiver.waitFor(requestUuid)).at - t0);
    };
    await verify();
    await pause(SETTLE_MS);

    const idleFrom = statSync(log).size;
    await pause(IDLE_MS);
    const idleStatements = statementsSince(log, idleFrom, database).length;

    const tally = new Map<string, number>();
    let total = 0;
    const started = performance.now();
    for (let i = 0; i < VERIFICATIONS; i++) {
      const from = statSync(log).size;
      await verify();
      await pause(SETTLE_MS);
      const statements = statementsSince(log, from, database);
      total += statements.length;
      for (const statement of statements)
        tally.set(shape(statement), (tally.get(shape(statement)) ?? 0) + 1);
    }
    const idleExpected = (idleStatements * (performance.now() - started)) / IDLE_MS;
    const perVerification = Math.round(((total - idleExpected) / VERIFICATIONS) * 10) / 10;
    console.log(
      `${VERIFICATIONS} verifications: ${total} statements logged (idle polling: ${idleStatements} in ${IDLE_MS} ms); about ${perVerification} per verification`,
    );
    const byShape = Object.fromEntries(
      [...tally.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => [k, Math.round((n / VERIFICATIONS) * 10) / 10]),
    );
    console.log(byShape);
    const latency = summarise(requestToWebhookMs.slice(1));
    console.log(`request to webhook, one at a time: p50 ${latency.p50} ms (n=${latency.n})`);
    const label = argValue('--label');
    writeResult(`statements-${today()}${label ? `-${label}` : ''}`, {
      benchmark: 'statements',
      startedAt,
      machine: { ...machineAtStart, loadavgAtEnd: machine().loadavg },
      command: `npm run bench:statements -- ${process.argv.slice(2).join(' ')}`,
      serverBin: SERVER_BIN ?? 'this build',
      verifications: VERIFICATIONS,
      idleWindowMs: IDLE_MS,
      statementsLogged: total,
      idleStatementsPerWindow: idleStatements,
      statementsPerVerification: perVerification,
      perVerificationByShape: byShape,
      requestToWebhookMs: latency,
    });
  } finally {
    await server?.stop();
    await receiver.close();
    await environment.cleanup();
  }
}

runBench(main);
