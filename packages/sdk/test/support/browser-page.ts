/**
 * What the SDK's browser tests share: Chromium found on this machine, the SDK's browser build
 * bundled for a page, a page server on its own origin, and headless Chromium whose microphone is
 * the fake capture device playing a WAV file.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import { prerequisite } from '../../../../scripts/test-prerequisites.mjs';

export const CHROMIUM = [
  process.env.CHROMIUM_PATH,
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
].find((p): p is string => !!p && existsSync(p));

/** Whether `tests` in `testFile` can run here; a skip is recorded (scripts/test-prerequisites.mjs). */
export function chromiumOrNotice(testFile: string, tests: string): boolean {
  return prerequisite({
    testFile,
    tests,
    missing: 'Chromium (Debian: `apt-get install -y chromium`; or set CHROMIUM_PATH)',
    present: !!CHROMIUM,
  });
}

const SDK_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The SDK's browser entry bundled as one ES module. */
export async function bundleBrowserSdk(): Promise<string> {
  const bundle = await build({
    entryPoints: ['src/browser.ts'],
    absWorkingDir: SDK_ROOT,
    bundle: true,
    write: false,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    logLevel: 'silent',
  });
  return bundle.outputFiles[0]!.text;
}

/** A page that imports `moduleUrl`, exposes it as `window.sdk` and sets its title to "ready". */
export function sdkPageHtml(title: string, moduleUrl = '/sdk.js'): string {
  return `<!doctype html><title>${title}</title><script type="module">import * as sdk from "${moduleUrl}"; window.sdk = sdk; document.title = "ready";</script>`;
}

export interface PageServer {
  /** http://127.0.0.1:<port>/ : a secure context, as getUserMedia needs */
  url: string;
  close(): Promise<void>;
}

/** Serves fixed files (path -> [content type, body]) on 127.0.0.1, on a port of its own. */
export async function servePages(
  files: Record<string, [string, string | Buffer]>,
): Promise<PageServer> {
  const server: Server = createServer((request, response) => {
    const file = files[request.url ?? ''];
    response
      .writeHead(file ? 200 : 404, { 'Content-Type': file?.[0] ?? 'text/plain' })
      .end(file?.[1] ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Headless Chromium whose microphone plays `microphoneWav` (looped), granted without a prompt. */
export function launchWithFakeMicrophone(microphoneWav: string): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM!,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-audio-capture=${microphoneWav}`,
      '--autoplay-policy=no-user-gesture-required',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}
