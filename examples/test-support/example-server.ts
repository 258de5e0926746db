/**
 * Test support: a real Voxkey server process on a fresh SQLite database, and real recordings
 * from the development data set (`../shared/datasets` beside the repository), converted to WAV.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { decodeAudio, encodeWav } from '@voxkey/engine/dsp';
import { prerequisite } from '../../scripts/test-prerequisites.mjs';

const require = createRequire(import.meta.url);

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const DATASET_DIR =
  process.env.VOXKEY_DATASET_DIR ?? path.resolve(REPO_ROOT, '..', 'shared', 'datasets');
export const HAS_DATASET = existsSync(path.join(DATASET_DIR, 'manifest.csv'));

/** Whether `tests` in `testFile` can run: the data set is here; otherwise the skip is recorded (scripts/test-prerequisites.mjs). */
export const datasetPresentFor = (testFile: string, tests: string) =>
  prerequisite({
    testFile,
    tests,
    missing: `the development data set (${path.resolve(DATASET_DIR)})`,
    present: HAS_DATASET,
  });

/** Whether `tests` in `testFile` can run: Chromium is here; otherwise the skip is recorded (scripts/test-prerequisites.mjs). */
export const chromiumPresentFor = (testFile: string, tests: string, chromium: string | undefined) =>
  prerequisite({
    testFile,
    tests,
    missing: 'Chromium (Debian: `apt-get install -y chromium`; or set CHROMIUM_PATH)',
    present: !!chromium,
  });

const SERVER_DIR = path.dirname(require.resolve('@voxkey/server/package.json'));
const SERVER_BIN = path.join(SERVER_DIR, 'bin', 'voxkey.js');
const FIXTURE_MODELS = path.join(REPO_ROOT, 'packages', 'engine', 'test', 'fixtures', 'models');

interface ManifestEntry {
  name: string;
  file: string;
  kind: string;
  default?: boolean;
}

/**
 * The models the server will use: the repository's `models/` when its manifest has a default
 * speaker and spoof model whose files are present (the trained models), else the engine's tiny
 * fixture models (the pipeline runs for real, but the scores mean nothing).
 */
export function chooseModels(): { dir: string; real: boolean; names: string } {
  if (process.env.VOXKEY_MODELS_DIR)
    return {
      dir: process.env.VOXKEY_MODELS_DIR,
      real: true,
      names: `from VOXKEY_MODELS_DIR=${process.env.VOXKEY_MODELS_DIR}`,
    };
  const dir = path.join(REPO_ROOT, 'models');
  try {
    const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as {
      models: ManifestEntry[];
    };
    const pick = (kind: string) =>
      manifest.models.find(
        (m) => m.kind === kind && m.default && existsSync(path.join(dir, m.file)),
      );
    const speaker = pick('speaker');
    const spoof = pick('spoof');
    if (speaker && spoof)
      return { dir, real: true, names: `${speaker.name} + ${spoof.name} (models/)` };
  } catch {
    // no usable manifest: fall through to the fixtures
  }
  return {
    dir: FIXTURE_MODELS,
    real: false,
    names: 'tiny fixture models (packages/engine/test/fixtures/models): scores are meaningless',
  };
}

interface Clip {
  path: string;
  corpus: string;
  speaker: string;
  kind: string;
  duration: number;
  split: string;
}

function manifest(): Clip[] {
  const [, ...rows] = readFileSync(path.join(DATASET_DIR, 'manifest.csv'), 'utf8')
    .trim()
    .split('\n');
  return rows.map((row) => {
    const c = row.split(',');
    return {
      path: c[0]!,
      corpus: c[1]!,
      speaker: c[2]!,
      kind: c[3]!,
      duration: Number(c[5]),
      split: c[10]!,
    };
  });
}

/**
 * Two speakers of the Common Voice dev split (speakers the bundled models were not trained on),
 * with `perSpeaker` bona fide clips of at least `minDuration` seconds each: the speakers with the
 * most such clips, ties by id, so the choice is stable.
 */
export function pickSpeakers(
  perSpeaker: number,
  minDuration = 5.5,
): { a: string[]; b: string[]; speakers: [string, string] } {
  const bySpeaker = new Map<string, Clip[]>();
  for (const clip of manifest()) {
    if (
      clip.corpus !== 'commonvoice' ||
      clip.kind !== 'bonafide' ||
      clip.split !== 'dev' ||
      clip.duration < minDuration
    )
      continue;
    bySpeaker.set(clip.speaker, [...(bySpeaker.get(clip.speaker) ?? []), clip]);
  }
  const ranked = [...bySpeaker.entries()]
    .filter(([, clips]) => clips.length >= perSpeaker)
    .sort(([s1, c1], [s2, c2]) => c2.length - c1.length || s1.localeCompare(s2));
  if (ranked.length < 2)
    throw new Error('not enough Common Voice dev speakers with long clips in the data set');
  const clips = (i: number) =>
    ranked[i]![1].sort((x, y) => y.duration - x.duration || x.path.localeCompare(y.path))
      .slice(0, perSpeaker)
      .map((c) => path.join(DATASET_DIR, c.path));
  return { a: clips(0), b: clips(1), speakers: [ranked[0]![0], ranked[1]![0]] };
}

/**
 * Decodes data set clips (MP3) with the engine and writes them, one after the other with 0.3 s of
 * silence between, as one 16 kHz mono 16-bit WAV (cut to `maxSeconds` when given).
 */
export async function toWav(
  sources: string | string[],
  target: string,
  maxSeconds?: number,
): Promise<string> {
  const parts: Float32Array[] = [];
  for (const source of [sources].flat()) {
    if (parts.length) parts.push(new Float32Array(4800));
    parts.push((await decodeAudio(new Uint8Array(readFileSync(source)))).samples);
  }
  const joined = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  writeFileSync(
    target,
    encodeWav(
      maxSeconds === undefined ? joined : joined.subarray(0, Math.round(maxSeconds * 16000)),
      16000,
    ),
  );
  return target;
}

export interface ServerHandle {
  baseUrl: string;
  orgId: number;
  token: string;
  webhookSecret: string;
  output(): string;
  stop(): Promise<void>;
}

/** The JSON document printed by `voxkey org create --json` (log lines may surround it). */
function parseCliJson(stdout: string): any {
  const lines = stdout.split('\n');
  const start = lines.indexOf('{');
  const end = lines.lastIndexOf('}');
  if (start < 0 || end < start) throw new Error(`no JSON document in the CLI output:\n${stdout}`);
  return JSON.parse(lines.slice(start, end + 1).join('\n'));
}

/** `voxkey org create`, then `voxkey serve` on a free port; resolves once it listens. */
export async function startServer(modelsDir: string): Promise<ServerHandle> {
  if (!existsSync(path.join(SERVER_DIR, 'dist'))) {
    throw new Error('apps/server is not built: run `npm run build` in the repository root first');
  }
  const dataDir = mkdtempSync(path.join(tmpdir(), 'voxkey-example-'));
  const env = {
    ...process.env,
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: `sqlite:${path.join(dataDir, 'db.sqlite')}`,
    DATA_DIR: dataDir,
    BOOTSTRAP_DEMO_ORG: 'false',
    VOXKEY_ENCRYPTION_KEY: 'a'.repeat(64),
    VOXKEY_MODELS_DIR: modelsDir,
    RATE_LIMIT_ENABLED: 'false',
    JOB_POLL_MS: '100',
    LOG_LEVEL: 'warn',
  };
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      SERVER_BIN,
      'org',
      'create',
      '--name',
      'Example Org',
      '--email',
      'examples@example.com',
      '--json',
    ],
    { env },
  );
  const created = parseCliJson(stdout) as {
    organisation: { id: number };
    token: { bearer: string };
    webhook_secret: string;
  };

  const child: ChildProcess = spawn(process.execPath, [SERVER_BIN, 'serve'], {
    env: { ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server did not start within 60 s:\n${output}`)),
      60_000,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/[^\s"]+:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(`${match[1]!.replace('localhost', '127.0.0.1')}/v1`);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    });
  });
  return {
    baseUrl,
    orgId: created.organisation.id,
    token: created.token.bearer,
    webhookSecret: created.webhook_secret,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
