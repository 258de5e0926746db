#!/usr/bin/env node
// Packs @voxkey/sdk, checks what the tarball holds, installs it into a fresh project outside the
// monorepo, type-checks an ESM and a CJS consumer with the monorepo's TypeScript, and runs them.
// When apps/server is built, the ESM consumer runs the README quickstart against a real server.
//   node scripts/check-tarball.mjs [--keep]
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const pkgDir = fileURLToPath(new URL('..', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');
const serverCli = join(repoRoot, 'apps/server/bin/voxkey.js');
const keep = process.argv.includes('--keep');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const started = Date.now();

function fail(message) {
  console.error(`check-tarball: ${message}`);
  process.exitCode = 1;
  throw new Error(message);
}

const work = await mkdtemp(join(tmpdir(), 'voxkey-sdk-tarball-'));
let server;
try {
  // 1. Pack and check the contents.
  const { stdout: packJson } = await run(npm, ['pack', '--json', '--pack-destination', work], {
    cwd: pkgDir,
  });
  const [packed] = JSON.parse(packJson);
  const files = packed.files.map((f) => f.path).sort();
  const allowed = [
    /^package\.json$/,
    /^README\.md$/,
    /^CHANGELOG\.md$/,
    /^LICENSE$/,
    /^dist\/[\w-]+\.(js|cjs|d\.ts|d\.cts)$/,
  ];
  const unexpected = files.filter((f) => !allowed.some((re) => re.test(f)));
  if (unexpected.length) fail(`unexpected files in the tarball: ${unexpected.join(', ')}`);
  const required = [
    'package.json',
    'README.md',
    'LICENSE',
    ...['index', 'node', 'browser', 'recorder'].flatMap((e) => [
      `dist/${e}.js`,
      `dist/${e}.cjs`,
      `dist/${e}.d.ts`,
      `dist/${e}.d.cts`,
    ]),
  ];
  const missing = required.filter((f) => !files.includes(f));
  if (missing.length) fail(`missing from the tarball: ${missing.join(', ')}`);
  console.log(
    `packed ${packed.filename}: ${files.length} files, ${(packed.size / 1024).toFixed(1)} KiB (unpacked ${(packed.unpackedSize / 1024).toFixed(1)} KiB)`,
  );

  // 2. A fresh project outside the monorepo.
  const project = join(work, 'consumer');
  await mkdir(join(project, 'src'), { recursive: true });
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({ name: 'voxkey-sdk-consumer', private: true, type: 'module' }, null, 2),
  );
  await run(
    npm,
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--loglevel=error',
      join(work, packed.filename),
    ],
    {
      cwd: project,
      env: { ...process.env, npm_config_workspaces: 'false' },
    },
  );
  const installed = JSON.parse(
    await readFile(join(project, 'node_modules/@voxkey/sdk/package.json'), 'utf8'),
  );
  if (installed.version !== packed.version)
    fail(`installed ${installed.version}, packed ${packed.version}`);

  await writeFile(
    join(project, 'tsconfig.json'),
    JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          outDir: 'out',
          rootDir: 'src',
          skipLibCheck: false,
          lib: ['ES2023', 'DOM'],
          types: ['node'],
          typeRoots: [join(repoRoot, 'node_modules/@types')],
        },
        include: ['src'],
      },
      null,
      2,
    ),
  );

  // ESM consumer: the quickstart.
  await writeFile(
    join(project, 'src/quickstart.ts'),
    `import { createVoxkeyClient, verifyWebhook, VoxkeyError, newRequestUuid, type User, type VoxkeyEvent } from '@voxkey/sdk';
import { readAudioFile, toVoiceData } from '@voxkey/sdk/node';
import { Webhook } from 'standardwebhooks';
import { writeFile } from 'node:fs/promises';

const baseUrl = process.env.VOXKEY_BASE_URL;
const token = process.env.VOXKEY_TOKEN ?? 'vk_none';
const orgId = Number(process.env.VOXKEY_ORG_ID ?? 1);

// Webhook receiving works without a server.
const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const body = JSON.stringify({ event_type: 'enrollment.completed', request_uuid: newRequestUuid(), external_id: 'customer-42', user_id: 1, status: 'enrolled', quality_score: 0.8, failure_reason: null, latency_ms: 900, created_at: new Date().toISOString() });
const at = new Date();
const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign('msg_1', at, body) };
const event: VoxkeyEvent = verifyWebhook({ secret, headers, body });
if (event.event_type !== 'enrollment.completed' || event.status !== 'enrolled') throw new Error('webhook not verified');
console.log('webhook verified:', event.event_type);

// A 5-second 16 kHz mono WAV of a voiced, syllable-like tone, to exercise readAudioFile.
const rate = 16000;
const samples = rate * 5;
const wav = new Uint8Array(44 + samples * 2);
const view = new DataView(wav.buffer);
const ascii = (offset: number, text: string) => wav.set(new TextEncoder().encode(text), offset);
ascii(0, 'RIFF'); view.setUint32(4, 36 + samples * 2, true); ascii(8, 'WAVEfmt ');
view.setUint32(16, 16, true); view.setUint16(20, 1, true); view.setUint16(22, 1, true); view.setUint32(24, rate, true);
view.setUint32(28, rate * 2, true); view.setUint16(32, 2, true); view.setUint16(34, 16, true);
ascii(36, 'data'); view.setUint32(40, samples * 2, true);
for (let i = 0; i < samples; i++) {
  const t = i / rate;
  const f0 = 120 + 20 * Math.sin(2 * Math.PI * 0.5 * t);
  const envelope = 0.5 + 0.5 * Math.sin(2 * Math.PI * 4 * t);
  let s = 0;
  for (let h = 1; h <= 10; h++) s += Math.sin(2 * Math.PI * f0 * h * t) / h;
  view.setInt16(44 + i * 2, Math.round(Math.max(-1, Math.min(1, 0.3 * envelope * s)) * 32767), true);
}
await writeFile('hello.wav', wav);
const voice_data = await readAudioFile('hello.wav');
if (voice_data !== toVoiceData(wav)) throw new Error('readAudioFile and toVoiceData disagree');

if (!baseUrl) {
  console.log('no VOXKEY_BASE_URL: skipped the server part');
} else {
  const voxkey = createVoxkeyClient({ baseUrl, token, orgId });
  const org = await voxkey.organisation.get();
  console.log('organisation:', org.id, org.name);
  const text = await voxkey.predefinedTexts.create({ language: 'en-UK', text_code: 7, text: 'My voice is my password' });
  try {
    await voxkey.predefinedTexts.create({ language: 'en-UK', text_code: 7, text: 'again' });
    throw new Error('expected a 409');
  } catch (error) {
    if (!(error instanceof VoxkeyError) || error.status !== 409) throw error;
    console.log('conflict as expected:', error.status, error.message);
  }
  await voxkey.predefinedTexts.delete(text.id);
  const users: User[] = [];
  for await (const user of voxkey.users.iterate({ perPage: 50 })) users.push(user);
  console.log('users:', users.length);
  // Results are delivered to the callback URL; this check runs the server without workers, so
  // the request stays queued and nothing is delivered to it.
  await voxkey.settings.update({ callback_url: 'http://127.0.0.1:9/voxkey-webhook' });
  try {
    const accepted = await voxkey.enrollments.create({ external_id: 'customer-42', voice_data });
    console.log('enrolment accepted:', accepted.request_uuid);
    const record = await voxkey.enrollments.get(accepted.request_uuid);
    if (record.request_uuid !== accepted.request_uuid || record.kind !== 'enrollment') throw new Error('enrolment record mismatch');
    console.log('enrolment status:', record.status);
  } catch (error) {
    // A server built before the voice routes existed answers 404 for the route itself.
    if (!(error instanceof VoxkeyError) || error.status !== 404) throw error;
    console.log('this server build has no enrolment route: skipped enrolment');
  }
}
console.log('quickstart ok');
`,
  );

  // CJS consumer: require() resolves the CJS build and its .d.cts types.
  await writeFile(
    join(project, 'src/require-check.cts'),
    `import sdk = require('@voxkey/sdk');
import sdkNode = require('@voxkey/sdk/node');
import sdkBrowser = require('@voxkey/sdk/browser');
import sdkRecorder = require('@voxkey/sdk/recorder');
const client: sdk.VoxkeyClient = sdk.createVoxkeyClient({ baseUrl: 'http://localhost:8080/v1', token: 'vk_x', orgId: 1 });
if (typeof client.users.list !== 'function') throw new Error('no users.list');
if (typeof sdkNode.readAudioFile !== 'function') throw new Error('no readAudioFile');
if (sdkNode.VoxkeyError !== sdk.VoxkeyError) throw new Error('two VoxkeyError classes');
if (typeof sdkBrowser.recordVoice !== 'function' || sdkBrowser.VoxkeyError !== sdk.VoxkeyError) throw new Error('the browser entry is broken');
if (sdkBrowser.encodeWav(new Float32Array(16000), sdkBrowser.VOICE_SAMPLE_RATE).length !== 32044) throw new Error('encodeWav');
if (typeof sdkRecorder.recordVoice !== 'function' || sdkRecorder.encodeWav(new Float32Array(16000), sdkRecorder.VOICE_SAMPLE_RATE).length !== 32044) throw new Error('the recorder entry is broken');
const e = new sdk.VoxkeyError({ kind: 'http', status: 404, code: 404, message: 'x' });
if (!(e instanceof Error) || !sdk.isVoxkeyError(e)) throw new Error('VoxkeyError is broken');
if (!/^[0-9a-f-]{36}$/.test(sdk.newRequestUuid())) throw new Error('newRequestUuid');
console.log('require ok');
`,
  );

  // 3. Type-check and compile with the monorepo's TypeScript.
  try {
    await run(process.execPath, [tsc, '-p', project], { cwd: project });
  } catch (error) {
    fail(`type-check failed:\n${error.stdout}${error.stderr}`);
  }
  const { version: tsVersion } = JSON.parse(
    await readFile(join(repoRoot, 'node_modules/typescript/package.json'), 'utf8'),
  );
  console.log(`type-checked an ESM and a CJS consumer with TypeScript ${tsVersion}`);

  // 4. Run them, against a real server when one is built.
  const env = { ...process.env };
  if (existsSync(join(repoRoot, 'apps/server/dist/main.js'))) {
    server = await startServer(work);
    Object.assign(env, {
      VOXKEY_BASE_URL: server.baseUrl,
      VOXKEY_TOKEN: server.token,
      VOXKEY_ORG_ID: String(server.orgId),
    });
  } else {
    console.log('apps/server is not built: the quickstart runs without a server');
  }
  for (const file of ['out/quickstart.js', 'out/require-check.cjs']) {
    try {
      const { stdout } = await run(process.execPath, [file], { cwd: project, env });
      console.log(stdout.trimEnd().replace(/^/gm, `  ${file}: `));
    } catch (error) {
      fail(`${file} failed:\n${error.stdout}${error.stderr}`);
    }
  }
  console.log(`check-tarball: ok in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} finally {
  if (server) await server.stop();
  if (keep) console.log(`kept ${work}`);
  else await rm(work, { recursive: true, force: true });
}

async function startServer(dir) {
  const port = await new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
  const env = {
    ...process.env,
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`,
    DATA_DIR: join(dir, 'data'),
    BOOTSTRAP_DEMO_ORG: 'false',
    RUN_WORKERS: 'false',
    RATE_LIMIT_ENABLED: 'false',
  };
  const { stdout } = await run(
    process.execPath,
    [
      serverCli,
      'org',
      'create',
      '--name',
      'Tarball Check',
      '--email',
      'tarball@example.com',
      '--json',
    ],
    { env },
  );
  const created = parseCliJson(stdout);
  const child = spawn(process.execPath, [serverCli, 'serve'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) fail(`the server exited with ${child.exitCode}:\n${output}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break;
    } catch {}
    if (Date.now() > deadline) {
      await stop();
      fail(`the server did not start within 30 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  console.log(`started the server on port ${port}`);
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    token: created.token.bearer,
    orgId: created.organisation.id,
    stop,
  };
}

/** The JSON document printed by `voxkey org create --json` (log lines may surround it). */
function parseCliJson(stdout) {
  const lines = stdout.split('\n');
  const start = lines.indexOf('{');
  const end = lines.lastIndexOf('}');
  if (start < 0 || end < start) throw new Error(`no JSON document in the CLI output:\n${stdout}`);
  return JSON.parse(lines.slice(start, end + 1).join('\n'));
}
