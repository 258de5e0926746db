/**
 * `recordVoice` (the `@voxkey/sdk/browser` entry) in real headless Chromium whose microphone is
 * Chromium's fake capture device playing a known WAV: a 440 Hz tone plus a 12 kHz tone at 48 kHz,
 * in stereo with the 440 Hz tone in one channel only. The recording must come back as a 16 kHz
 * mono 16-bit WAV of the asked length, with the 440 Hz tone and without the 12 kHz one (which
 * would alias to 4 kHz without the low-pass filter). Once per capture path.
 *
 * Skipped with a notice when Chromium is absent (Debian: `apt-get install -y chromium`, or set CHROMIUM_PATH).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeWav, resample } from '../src/wav.js';
import { prerequisite } from '../../../scripts/test-prerequisites.mjs';
import {
  bundleBrowserSdk,
  chromiumOrNotice,
  launchWithFakeMicrophone,
  sdkPageHtml,
  servePages,
  type PageServer,
} from './support/browser-page.js';

const HAS_CHROMIUM = chromiumOrNotice(import.meta.url, 'recordVoice in headless Chromium');

const root = fileURLToPath(new URL('..', import.meta.url));
/** dist/recorder.js when built (`npm test` builds before vitest). */
const BUILT_RECORDER = prerequisite({
  testFile: import.meta.url,
  tests: 'records with the built dist/recorder.js',
  missing: "the SDK's build, packages/sdk/dist (`npm run build` in the repository root)",
  present: existsSync(join(root, 'dist/recorder.js')),
})
  ? join(root, 'dist/recorder.js')
  : undefined;

/** A 48 kHz stereo 16-bit WAV: left 440 Hz + 12 kHz, right 12 kHz only. */
function fakeMicrophoneWav(seconds: number): Uint8Array {
  const rate = 48_000;
  const frames = rate * seconds;
  const bytes = new Uint8Array(44 + frames * 4);
  const view = new DataView(bytes.buffer);
  const ascii = (offset: number, text: string) => bytes.set(new TextEncoder().encode(text), offset);
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + frames * 4, true);
  ascii(8, 'WAVEfmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, 2, true);
  view.setUint32(24, rate, true);
  view.setUint32(28, rate * 4, true);
  view.setUint16(32, 4, true);
  view.setUint16(34, 16, true);
  ascii(36, 'data');
  view.setUint32(40, frames * 4, true);
  for (let i = 0; i < frames; i++) {
    const t = i / rate;
    const high = 0.3 * Math.sin(2 * Math.PI * 12_000 * t);
    view.setInt16(
      44 + i * 4,
      Math.round((0.5 * Math.sin(2 * Math.PI * 440 * t) + high) * 32767),
      true,
    );
    view.setInt16(46 + i * 4, Math.round(high * 32767), true);
  }
  return bytes;
}

/** Amplitude of `frequency` in `samples` (Goertzel), relative to a full-scale sine. */
function toneAmplitude(samples: Float32Array, rate: number, frequency: number): number {
  const w = (2 * Math.PI * frequency) / rate;
  let s1 = 0;
  let s2 = 0;
  for (const x of samples) {
    const s0 = x + 2 * Math.cos(w) * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const power = s1 * s1 + s2 * s2 - 2 * Math.cos(w) * s1 * s2;
  return (2 * Math.sqrt(power)) / samples.length;
}

function parseWav(wav: Uint8Array) {
  const view = new DataView(wav.buffer, wav.byteOffset, wav.byteLength);
  const text = (offset: number, length: number) =>
    new TextDecoder().decode(wav.subarray(offset, offset + length));
  const samples = new Float32Array(view.getUint32(40, true) / 2);
  for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(44 + i * 2, true) / 32768;
  return {
    riff: text(0, 4),
    wave: text(8, 4),
    format: view.getUint16(20, true),
    channels: view.getUint16(22, true),
    sampleRate: view.getUint32(24, true),
    bitsPerSample: view.getUint16(34, true),
    dataSize: view.getUint32(40, true),
    samples,
  };
}

describe('encodeWav and resample (no browser)', () => {
  it('writes a 16 kHz mono 16-bit PCM WAV, clipping beyond [-1, 1]', () => {
    const wav = parseWav(encodeWav(new Float32Array([0, 0.5, -0.5, 1.5, -2]), 16_000));
    expect(wav).toMatchObject({
      riff: 'RIFF',
      wave: 'WAVE',
      format: 1,
      channels: 1,
      sampleRate: 16_000,
      bitsPerSample: 16,
      dataSize: 10,
    });
    expect(Array.from(wav.samples, (v) => Math.round(v * 100) / 100)).toEqual([
      0, 0.5, -0.5, 1, -1,
    ]);
  });

  it('resamples 48 kHz to 16 kHz keeping 440 Hz and removing 12 kHz', () => {
    const input = new Float32Array(48_000);
    for (let i = 0; i < input.length; i++)
      input[i] =
        0.5 * Math.sin((2 * Math.PI * 440 * i) / 48_000) +
        0.3 * Math.sin((2 * Math.PI * 12_000 * i) / 48_000);
    const output = resample(input, 48_000, 16_000);
    expect(output.length).toBe(16_000);
    expect(toneAmplitude(output, 16_000, 440)).toBeCloseTo(0.5, 1);
    expect(toneAmplitude(output, 16_000, 4_000)).toBeLessThan(0.01);
    expect(resample(input, 16_000, 16_000)).toEqual(input);
  });
});

describe.skipIf(!HAS_CHROMIUM)('recordVoice in headless Chromium with a fake microphone', () => {
  let dir: string;
  let pages: PageServer;
  let browser: Browser;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'voxkey-sdk-browser-'));
    const microphone = join(dir, 'microphone.wav');
    writeFileSync(microphone, fakeMicrophoneWav(4));
    const files: Record<string, [string, string]> = {
      '/': ['text/html', sdkPageHtml('recordVoice')],
      '/sdk.js': ['text/javascript', await bundleBrowserSdk()],
    };
    if (BUILT_RECORDER) {
      // The built ./recorder entry as a page without a bundler loads it: the file as it is.
      files['/recorder.html'] = ['text/html', sdkPageHtml('recorder', '/recorder.js')];
      files['/recorder.js'] = ['text/javascript', readFileSync(BUILT_RECORDER, 'utf8')];
    }
    pages = await servePages(files);
    browser = await launchWithFakeMicrophone(microphone);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await pages?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each(['audio-worklet', 'script-processor'] as const)(
    'records a 16 kHz mono WAV through %s',
    async (capture) => {
      const page = await browser.newPage();
      const consoleLines: string[] = [];
      page.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
      page.on('pageerror', (e) => consoleLines.push(`pageerror: ${e.message}`));
      try {
        await page.goto(pages.url);
        await page.waitForFunction(() => document.title === 'ready');
        const result = await page.evaluate(async (capture) => {
          const sdk = (window as unknown as { sdk: typeof import('../src/browser.js') }).sdk;
          let progress = 0;
          const recording = await sdk.recordVoice({
            seconds: 2,
            capture,
            onProgress: () => progress++,
          });
          return {
            voiceData: recording.toVoiceData(),
            length: recording.wav.length,
            sampleRate: recording.sampleRate,
            durationSeconds: recording.durationSeconds,
            captureSampleRate: recording.captureSampleRate,
            capture: recording.capture,
            progress,
          };
        }, capture);
        const wav = parseWav(new Uint8Array(Buffer.from(result.voiceData, 'base64')));
        expect(wav).toMatchObject({
          riff: 'RIFF',
          wave: 'WAVE',
          format: 1,
          channels: 1,
          sampleRate: 16_000,
          bitsPerSample: 16,
          dataSize: 64_000,
        });
        expect(result).toMatchObject({
          length: 64_044,
          sampleRate: 16_000,
          durationSeconds: 2,
          capture,
        });
        expect(result.captureSampleRate).toBeGreaterThanOrEqual(16_000);
        expect(result.progress).toBeGreaterThan(0);
        // Skip the first 100 ms (the device starting); the 440 Hz tone is there, downmixed (0.5 -> about 0.25).
        const steady = wav.samples.subarray(1_600);
        const tone = toneAmplitude(steady, 16_000, 440);
        expect(tone).toBeGreaterThan(0.1);
        expect(toneAmplitude(steady, 16_000, 4_000)).toBeLessThan(tone / 20);
        console.info(
          `recordVoice via ${capture}: captured at ${result.captureSampleRate} Hz, 440 Hz amplitude ${tone.toFixed(3)}`,
        );
      } catch (error) {
        console.info(`browser console:\n${consoleLines.join('\n')}`);
        throw error;
      } finally {
        await page.close();
      }
    },
  );

  it.skipIf(!BUILT_RECORDER)(
    'records with the built dist/recorder.js loaded as it is, without a bundler',
    async () => {
      const page = await browser.newPage();
      try {
        await page.goto(`${pages.url}recorder.html`);
        await page.waitForFunction(() => document.title === 'ready');
        const outcome = await page.evaluate(async () => {
          const sdk = (window as unknown as { sdk: typeof import('../src/recorder.js') }).sdk;
          const recording = await sdk.recordVoice({ seconds: 1 });
          return {
            length: recording.wav.length,
            sampleRate: recording.sampleRate,
            voiceData: recording.toVoiceData().length,
          };
        });
        expect(outcome).toEqual({
          length: 32_044,
          sampleRate: 16_000,
          voiceData: Math.ceil(32_044 / 3) * 4,
        });
      } finally {
        await page.close();
      }
    },
  );

  it('falls back to the ScriptProcessor when the worklet loads but delivers nothing', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(pages.url);
      await page.waitForFunction(() => document.title === 'ready');
      const outcome = await page.evaluate(async () => {
        // A worklet whose messages never arrive, as when its rendering stalls.
        const Original = AudioWorkletNode;
        window.AudioWorkletNode = class extends Original {
          constructor(...args: ConstructorParameters<typeof AudioWorkletNode>) {
            super(...args);
            Object.defineProperty(this.port, 'onmessage', { set() {}, get: () => null });
          }
        };
        const sdk = (window as unknown as { sdk: typeof import('../src/browser.js') }).sdk;
        const recording = await sdk.recordVoice({ seconds: 1 });
        return { capture: recording.capture, length: recording.wav.length };
      });
      expect(outcome).toEqual({ capture: 'script-processor', length: 32_044 });
    } finally {
      await page.close();
    }
  });

  it('rejects with the signal reason when aborted, and validates seconds', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(pages.url);
      await page.waitForFunction(() => document.title === 'ready');
      const outcome = await page.evaluate(async () => {
        const sdk = (window as unknown as { sdk: typeof import('../src/browser.js') }).sdk;
        const controller = new AbortController();
        setTimeout(() => controller.abort(new Error('stopped by the user')), 300);
        const aborted = await sdk.recordVoice({ seconds: 10, signal: controller.signal }).then(
          () => 'resolved',
          (e: Error) => e.message,
        );
        const invalid = await sdk.recordVoice({ seconds: 0 }).then(
          () => 'resolved',
          (e: Error) => e.name,
        );
        return { aborted, invalid };
      });
      expect(outcome).toEqual({ aborted: 'stopped by the user', invalid: 'RangeError' });
    } finally {
      await page.close();
    }
  });
});
