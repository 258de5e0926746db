/**
 * Start-up shared by the web-demo test and scripts/readme-screenshot.ts: the demo backend
 * (`src/main.ts`) as a child process against a Voxkey server, and headless Chromium whose
 * microphone is Chromium's fake capture device playing a WAV file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import type { ServerHandle } from '../../test-support/example-server.js';

export const EXAMPLE_DIR = fileURLToPath(new URL('..', import.meta.url));

/** The Chromium binary: CHROMIUM_PATH, else Debian's; undefined when there is none. */
export const CHROMIUM = [
  process.env.CHROMIUM_PATH,
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
].find((p): p is string => !!p && existsSync(p));

export interface Demo {
  url: string;
  child: ChildProcess;
  /** Everything the demo printed so far. */
  output(): string;
  stop(): Promise<void>;
}

/** Starts the demo on a free port, talking to `server`; resolves once it listens. */
export function startDemo(server: ServerHandle): Promise<Demo> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
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
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null) return;
    child.kill('SIGTERM');
    await exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`the demo did not start within 30 s:\n${output}`));
    }, 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Web demo listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ url: match[1]!, child, output: () => output, stop });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the demo exited with ${code}:\n${output}`));
    });
  });
}

/** Headless Chromium whose microphone plays `wav` (looped), with microphone access granted. */
export function launchWithMicrophone(wav: string): Promise<Browser> {
  if (!CHROMIUM)
    throw new Error(
      'Chromium is not installed (Debian: apt-get install -y chromium; or set CHROMIUM_PATH)',
    );
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-audio-capture=${wav}`,
      '--autoplay-policy=no-user-gesture-required',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
