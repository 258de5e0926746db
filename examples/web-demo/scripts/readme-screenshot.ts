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
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  chooseModels,
  pickSpeakers,
  REPO_ROOT,
  startServer,
  toWav,
} from '../../test-support/example-server.js';
import { CHROMIUM, launchWithMicrophone, startDemo } from '../test/demo-harness.js';

const OUT = path.join(REPO_ROOT, 'docs/web-demo.png');
if (!CHROMIUM)
  throw new Error('Chromium is not installed (apt-get install chromium, or set CHROMIUM_PATH)');

const { a } = pickSpeakers(3);
const audioDir = mkdtempSync(path.join(tmpdir(), 'voxkey-readme-screenshot-'));
const enrolWav = await toWav([a[0]!, a[1]!], path.join(audioDir, 'enrol.wav'));
const verifyWav = await toWav(a[2]!, path.join(audioDir, 'verify.wav'));
const server = await startServer(chooseModels().dir);
try {
  const demo = await startDemo(server);
  try {
    async function act(
      action: 'enrol' | 'verify',
      wav: string,
      screenshot?: string,
    ): Promise<string> {
      const browser = await launchWithMicrophone(wav);
      try {
        const page = await browser.newPage({ viewport: { width: 900, height: 760 } });
        await page.goto(demo.url);
        await page.waitForSelector('body[data-ready="true"]');
        await page.fill('#external-id', 'alice');
        await page.fill('#seconds', action === 'enrol' ? '12' : '7');
        await page.click(`#${action}`);
        await page.waitForFunction(
          () => ['done', 'error'].includes(document.getElementById('status')!.dataset.phase ?? ''),
          undefined,
          { timeout: 120_000, polling: 200 },
        );
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
    await demo.stop();
  }
} finally {
  await server.stop();
  rmSync(audioDir, { recursive: true, force: true });
}
