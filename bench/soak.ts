/**
 * `npm run bench:soak` — mixed traffic against one `voxkey serve` for a fixed time, watching for leaks.
 *
 *   tsx bench/soak.ts [--minutes 10] [--postgres] [--workers 4] [--verifications-per-second 2] [--label x]
 *
 * Not part of CI. Reads (users list, one text), writes (create/patch/delete a text, patch the
 * organisation), and paced verifications with webhooks to a local receiver, while sampling the
 * server's RSS and open file descriptors (/proc/<pid>/fd) every 10 s. Stops by itself and reports
 * the growth from the first sample after warm-up to the end (and the least-squares slope per
 * minute). Writes bench/results/load-soak-<date>[-postgres][-<label>].json.
 */
import { randomUUID } from 'node:crypto';
import { client, fiveSecondClips, startReceiver } from './lib/api.js';
import { seedUsers } from './lib/load.js';
import {
  argValue,
  chooseModels,
  createBenchOrganisation,
  createEnvironment,
  type Dialect,
  hasFlag,
  machine,
  openFds,
  rssMiB,
  startServer,
  summarise,
  today,
  writeResult,
  runBench,
} from './lib/server.js';

const MINUTES = Number(argValue('--minutes', '10'));
const WORKERS = Number(argValue('--workers', '4'));
const VERIFY_RATE = Number(argValue('--verifications-per-second', '2'));
const SAMPLE_MS = 10_000;
const dialect: Dialect = hasFlag('--postgres') ? 'postgres' : 'sqlite';
/** Appended to the result file name, to keep several runs of one day apart. */
const LABEL = argValue('--label');

function slopePerMinute(samples: Array<{ t: number; v: number | null }>): number | null {
  const pts = samples.filter((s) => s.v !== null) as Array<{ t: number; v: number }>;
  if (pts.length < 3) return null;
  const n = pts.length;
  const mt = pts.reduce((a, p) => a + p.t, 0) / n;
  const mv = pts.reduce((a, p) => a + p.v, 0) / n;
  const num = pts.reduce((a, p) => a + (p.t - mt) * (p.v - mv), 0);
  const den = pts.reduce((a, p) => a + (p.t - mt) ** 2, 0);
  return den ? Math.round((num / den) * 60 * 100) / 100 : null;
}

async function main() {
  const models = chooseModels();
  const startedAt = new Date().toISOString();
  const machineAtStart = machine();
  console.log(
    `bench:soak ${MINUTES} min on ${dialect}; ${WORKERS} CRUD workers, ${VERIFY_RATE} verifications/s; models: ${models.which}`,
  );
  const clips = fiveSecondClips(8, 2);
  const environment = await createEnvironment(dialect, { VOXKEY_MODELS_DIR: models.dir });
  const receiver = await startReceiver();
  const server = await startServer(environment, {}, 'soak');
  const statuses: Record<string, number> = {};
  const latencies: Record<string, number[]> = {};
  let networkErrors = 0;
  try {
    const { orgId, bearer } = await createBenchOrganisation(environment, 'Soak', receiver.url);
    const call = client(`${server.baseUrl}/v1`, bearer);
    await seedUsers(environment, orgId, 100);
    const text = await call('POST', `/organisations/${orgId}/predefined-texts`, {
      org_id: orgId,
      language: 'en-UK',
      text_code: 1,
      text: 'My voice is my password.',
    });

    // One enrolled speaker for the verifications.
    let speaker: { externalId: string; probe: string } | undefined;
    for (const [i, s] of clips.entries()) {
      const uuid = randomUUID();
      await call('POST', `/organisations/${orgId}/enrollments`, {
        voice_data: s.clips[0]!.base64,
        request_uuid: uuid,
        external_id: `soak-${i}`,
      });
      const hook = await receiver.waitFor(uuid);
      if (hook.body.status === 'enrolled') {
        speaker = { externalId: `soak-${i}`, probe: s.clips[1]!.base64 };
        break;
      }
    }
    if (!speaker) throw new Error('no clip could be enrolled');

    const timed = async (name: string, method: string, pathname: string, body?: unknown) => {
      const t0 = performance.now();
      try {
        const res = await call(method, pathname, body);
        (latencies[name] ??= []).push(performance.now() - t0);
        statuses[`${name} ${res.status}`] = (statuses[`${name} ${res.status}`] ?? 0) + 1;
        return res;
      } catch {
        networkErrors++;
        return undefined;
      }
    };

    const started = performance.now();
    const end = started + MINUTES * 60_000;
    const samples: Array<{
      seconds: number;
      rssMiB: number | null;
      openFds: number | null;
      webhooks: number;
    }> = [];
    const sample = () =>
      samples.push({
        seconds: Math.round((performance.now() - started) / 1000),
        rssMiB: rssMiB(server.pid),
        openFds: openFds(server.pid),
        webhooks: receiver.count,
      });
    sample();
    const sampler = setInterval(() => {
      sample();
      const s = samples[samples.length - 1]!;
      console.log(`t=${s.seconds}s RSS ${s.rssMiB} MiB, fds ${s.openFds}, webhooks ${s.webhooks}`);
    }, SAMPLE_MS);

    let code = 10;
    const crud = async () => {
      while (performance.now() < end) {
        const r = Math.random();
        if (r < 0.4) await timed('users-list', 'GET', `/organisations/${orgId}/users`);
        else if (r < 0.7)
          await timed(
            'text-get',
            'GET',
            `/organisations/${orgId}/predefined-texts/${text.body.id}`,
          );
        else if (r < 0.95) {
          const created = await timed(
            'text-create',
            'POST',
            `/organisations/${orgId}/predefined-texts`,
            { org_id: orgId, language: 'fr-FR', text_code: ++code, text: `Dites ${code}` },
          );
          if (created?.status === 201) {
            await timed(
              'text-patch',
              'PATCH',
              `/organisations/${orgId}/predefined-texts/${created.body.id}`,
              { text: 'Changed' },
            );
            await timed(
              'text-delete',
              'DELETE',
              `/organisations/${orgId}/predefined-texts/${created.body.id}`,
            );
          }
        } else
          await timed('org-patch', 'PATCH', `/organisations/${orgId}`, {
            address: `Street ${code}`,
          });
      }
    };
    const verifications = async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await timed('verification', 'POST', `/organisations/${orgId}/verifications`, {
          voice_data: speaker!.probe,
          request_uuid: randomUUID(),
          external_id: speaker!.externalId,
        });
        await new Promise((r) =>
          setTimeout(r, Math.max(0, 1000 / VERIFY_RATE - (performance.now() - t0))),
        );
      }
    };
    await Promise.all([...Array.from({ length: WORKERS }, crud), verifications()]);
    clearInterval(sampler);
    // Let the queue drain, then a last sample.
    await new Promise((r) => setTimeout(r, 5000));
    sample();

    const afterWarmup = samples.filter((s) => s.seconds >= 30);
    const first = afterWarmup[0] ?? samples[0]!;
    const last = samples[samples.length - 1]!;
    const report = {
      benchmark: 'soak',
      startedAt,
      finishedAt: new Date().toISOString(),
      command: `npm run bench:soak -- --minutes ${MINUTES}${dialect === 'postgres' ? ' --postgres' : ''}`,
      dialect,
      minutes: MINUTES,
      models,
      machine: { ...machineAtStart, loadavgAtEnd: machine().loadavg },
      traffic: {
        crudWorkers: WORKERS,
        verificationsPerSecond: VERIFY_RATE,
        statuses,
        networkErrors,
        latencyMs: Object.fromEntries(Object.entries(latencies).map(([k, v]) => [k, summarise(v)])),
      },
      webhooksReceived: receiver.count,
      growth: {
        from: first,
        to: last,
        rssMiB:
          last.rssMiB !== null && first.rssMiB !== null
            ? Math.round((last.rssMiB - first.rssMiB) * 10) / 10
            : null,
        openFds:
          last.openFds !== null && first.openFds !== null ? last.openFds - first.openFds : null,
        rssSlopeMiBPerMinute: slopePerMinute(
          afterWarmup.map((s) => ({ t: s.seconds, v: s.rssMiB })),
        ),
        fdSlopePerMinute: slopePerMinute(afterWarmup.map((s) => ({ t: s.seconds, v: s.openFds }))),
      },
      samples,
    };
    writeResult(
      `load-soak-${today()}${dialect === 'postgres' ? '-postgres' : ''}${LABEL ? `-${LABEL}` : ''}`,
      report,
    );
    console.log(
      `RSS ${first.rssMiB} -> ${last.rssMiB} MiB (slope ${report.growth.rssSlopeMiBPerMinute} MiB/min), fds ${first.openFds} -> ${last.openFds}; ${Object.values(statuses).reduce((a, b) => a + b, 0)} requests, ${receiver.count} webhooks`,
    );
  } finally {
    await server.stop();
    await receiver.close();
    await environment.cleanup();
  }
}

runBench(main);
