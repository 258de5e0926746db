/**
 * The README's web-demo screenshot (docs/web-demo.png): a Voxkey server and this demo, then headless
 * Chromium enrols "alice" from two Common Voice clips of one speaker of the development data set and
 * verifies her with a third (Chromium's fake microphone plays them; the same choice as the web-demo
 * test), and the page is captured once the verification's webhook arrived.
 *
 *   npm run build && VOXKEY_DATASET_DIR=/path/to/shared/datasets npx tsx examples/web-demo/scripts/readme-screenshot.ts
 *
 * Needs Chromium (Debian: apt-get install chromium, or CHROMIUM_PATH) and ../shared/datasets.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { chooseModels, pickSpeakers, REPO_ROOT, startServer, toWav } from '../../test-support/example-server.js';

const EXAMPLE_DIR = fileURLToPath(new URL('..', import.meta.url));
const OUT = path.join(REPO_ROOT, 'docs/web-demo.png');
const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p): p is string => !!p && existsSync(p));
if (!CHROMIUM) throw new Error('Chromium is not installed (apt-get install chromium, or set CHROMIUM_PATH)');

const { a } = pickSpeakers(3);
const audioDir = mkdtempSync(path.join(tmpdir(), 'voxkey-readme-screenshot-'));
const enrolWav = await toWav([a[0]!, a[1]!], path.join(audioDir, 'enrol.wav'));
const verifyWav = await toWav(a[2]!, path.join(audioDir, 'verify.wav'));
const server = await startServer(chooseModels().dir);
const demo = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
  cwd: EXAMPLE_DIR,
  env: {
    ...process.env,
    VOXKEY_URL: server.baseUrl,
    VOXKEY_TOKEN: server.token,
    VOXKEY_ORG_ID: String(server.orgId),
    VOXKEY_WEBHOOK_SECRET: server.webhookSecret,
    PORT: '0',
    HOST: '127.0.0.1',
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
try {
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Web demo listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    demo.stdout!.on('data', onData);
    demo.stderr!.on('data', onData);
    demo.once('exit', (code) => reject(new Error(`the demo exited with ${code}:\n${output}`)));
  });

  async function act(action: 'enrol' | 'verify', wav: string, screenshot?: string): Promise<string> {
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${wav}`, '--autoplay-policy=no-user-gesture-required'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 900, height: 760 } });
      await page.goto(url);
      await page.waitForSelector('body[data-ready="true"]');
      await page.fill('#external-id', 'alice');
      await page.fill('#seconds', action === 'enrol' ? '12' : '7');
      await page.click(`#${action}`);
      await page.waitForFunction(() => ['done', 'error'].includes(document.getElementById('status')!.dataset.phase ?? ''), undefined, { timeout: 120_000, polling: 200 });
      if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });
      return (await page.textContent('#status'))?.trim() ?? '';
    } finally {
      await browser.close();
    }
  }

  console.log(`enrol: ${await act('enrol', enrolWav)}`);
  console.log(`verify: ${await act('verify', verifyWav, OUT)}`);
  console.log(`wrote ${OUT}`);
} finally {
  demo.kill('SIGTERM');
  await server.stop();
}
