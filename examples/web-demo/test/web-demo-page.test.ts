/**
 * The web demo's page in headless Chromium with Voxkey's answers stubbed in the browser (no Voxkey
 * server, no data set): each verification outcome gets its own banner colour and wording, posted
 * and streamed, each verification shows a one-time phrase to read and sends its challenge_id, and
 * the page loads everything it asks for (its favicon included).
 * Skipped with a notice when Chromium is absent. Screenshots: examples/web-demo/test-results/page-*.png.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { encodeWav } from '@voxkey/engine/dsp';
import { createVoxkeyClient } from '@voxkey/sdk';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPresentFor } from '../../test-support/example-server.js';
import { createDemoApp } from '../src/app.js';
import { CHROMIUM, EXAMPLE_DIR, launchWithMicrophone } from './demo-harness.js';

const RESULTS_DIR = path.join(EXAMPLE_DIR, 'test-results');

const PAGE_TESTS = 'web-demo page: verdicts and assets (Voxkey stubbed)';
const HAS_CHROMIUM = chromiumPresentFor(import.meta.url, PAGE_TESTS, CHROMIUM);

const CHALLENGE = {
  challenge_id: '3f1e2d4c-5b6a-4798-8a1b-2c3d4e5f6a7b',
  text: 'four seven one nine zero two',
  expires_at: '2099-01-01T00:00:00.000Z',
};

/** The five outcomes a verification can show, as the webhook (or the stream's result) carries them. */
const OUTCOMES = [
  {
    verdict: 'verified',
    result: 'verified',
    deepfake_detected: false,
    heard: CHALLENGE.text,
    wording: /^Verified: this is “someone”\./,
  },
  {
    verdict: 'rejected',
    result: 'rejected',
    deepfake_detected: false,
    heard: CHALLENGE.text,
    wording: /^Rejected: the voice does not match “someone”\./,
  },
  {
    verdict: 'deepfake',
    result: 'verified',
    deepfake_detected: true,
    heard: CHALLENGE.text,
    wording: /^Deepfake suspected: access denied/,
  },
  {
    verdict: 'phrase',
    result: 'verified',
    deepfake_detected: false,
    heard: 'my voice is my password',
    wording:
      /^Phrase not matched: access denied, the recording does not say “four seven one nine zero two” \(heard “my voice is my password”\)/,
  },
  {
    verdict: 'inconclusive',
    result: 'inconclusive',
    deepfake_detected: false,
    heard: CHALLENGE.text,
    wording: /^Inconclusive: /,
  },
] as const;

type Outcome = (typeof OUTCOMES)[number];

const eventOf = (outcome: Outcome, requestUuid: string) => ({
  event_type: 'verification.completed',
  request_uuid: requestUuid,
  external_id: 'someone',
  result: outcome.result,
  match_score: outcome.result === 'verified' ? 0.93 : 0.2,
  deepfake_detected: outcome.deepfake_detected,
  phrase: {
    expected: CHALLENGE.text,
    transcript: outcome.heard,
    match_score: outcome.heard === CHALLENGE.text ? 1 : 0,
    matched: outcome.heard === CHALLENGE.text,
  },
});

describe.skipIf(!HAS_CHROMIUM)(PAGE_TESTS, () => {
  let server: ServerType;
  let url: string;
  let audioDir: string;
  let browser: Browser;

  beforeAll(async () => {
    // The backend only serves the page here: every call it would make to Voxkey is answered in the browser.
    const voxkey = createVoxkeyClient({
      baseUrl: 'http://127.0.0.1:9/v1',
      token: 'vk_live_unused',
      orgId: 1,
    });
    const app = createDemoApp({
      voxkey,
      webhookSecret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
    });
    await new Promise<void>((resolve) => {
      server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve());
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    audioDir = mkdtempSync(path.join(tmpdir(), 'voxkey-web-demo-page-'));
    const tone = Float32Array.from(
      { length: 16000 * 4 },
      (_, i) => 0.3 * Math.sin((2 * Math.PI * 220 * i) / 16000),
    );
    const wav = path.join(audioDir, 'tone.wav');
    writeFileSync(wav, encodeWav(tone, 16000));
    mkdirSync(RESULTS_DIR, { recursive: true });
    browser = await launchWithMicrophone(wav);
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    if (audioDir) rmSync(audioDir, { recursive: true, force: true });
  });

  /** A page on the demo whose backend calls are answered with `outcome`, posted (SSE) and streamed (WebSocket). */
  async function stubbedPage(
    outcome: () => Outcome,
  ): Promise<{ page: Page; failed: string[]; verifyUrls: string[] }> {
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    const failed: string[] = [];
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    });
    page.on('console', (message) => {
      if (message.type() === 'error') failed.push(`console: ${message.text()}`);
    });
    let requests = 0;
    /** The URLs the page verified with (posted and streamed): each must name the challenge shown. */
    const verifyUrls: string[] = [];
    await page.route('**/api/challenge?*', (route) =>
      route.fulfill({ status: 201, json: CHALLENGE }),
    );
    await page.route('**/api/verify?*', (route) => {
      verifyUrls.push(route.request().url());
      return route.fulfill({ status: 202, json: { request_uuid: `posted-${++requests}` } });
    });
    await page.route('**/api/events/*', (route) => {
      const requestUuid = decodeURIComponent(
        new URL(route.request().url()).pathname.split('/').pop()!,
      );
      return route.fulfill({
        status: 200,
        contentType: 'text/event-stream',
        body: `event: result\ndata: ${JSON.stringify(eventOf(outcome(), requestUuid))}\n\n`,
      });
    });
    await page.routeWebSocket('**/api/verify-stream*', (socket) => {
      verifyUrls.push(socket.url());
      let answered = false;
      socket.onMessage(() => {
        if (answered) return;
        answered = true;
        socket.send(JSON.stringify({ type: 'progress', received_s: 0.25, net_speech_s: 0.25 }));
        socket.send(
          JSON.stringify({
            type: 'result',
            final: true,
            ...eventOf(outcome(), `streamed-${++requests}`),
          }),
        );
      });
    });
    await page.goto(url);
    await page.waitForSelector('body[data-ready="true"]');
    await page.fill('#external-id', 'someone');
    await page.fill('#seconds', '3');
    return { page, failed, verifyUrls };
  }

  /** Runs one verification on the page and reads the banner: verdict, text and colours, and the phrase shown while recording. */
  async function verifyOn(page: Page, button: 'verify' | 'verify-stream') {
    await page.click(`#${button}`);
    await page.waitForFunction(
      () => document.getElementById('prompt')!.dataset.kind === 'challenge',
      undefined,
      { timeout: 10_000, polling: 20 },
    );
    const prompted = (await page.textContent('#prompt-text'))?.trim();
    await page.waitForFunction(
      () =>
        ['done', 'error'].includes(document.getElementById('status')!.dataset.phase ?? '') &&
        !(document.getElementById('verify') as HTMLButtonElement).disabled,
      undefined,
      { timeout: 30_000, polling: 100 },
    );
    const banner = await page.$eval('#status', (el) => ({
      phase: (el as HTMLElement).dataset.phase,
      verdict: (el as HTMLElement).dataset.verdict,
      text: el.textContent ?? '',
      background: getComputedStyle(el).backgroundColor,
      border: getComputedStyle(el).borderLeftColor,
    }));
    const phrase = await page.$eval('#phrase', (el) => ({
      text: el.textContent ?? '',
      matched: (el as HTMLElement).dataset.matched,
    }));
    return { ...banner, prompted, phrase };
  }

  for (const button of ['verify', 'verify-stream'] as const) {
    it(
      `${button === 'verify' ? 'posted' : 'live-stream'} mode: a one-time phrase to read; verified, rejected, deepfake, phrase not matched and inconclusive each have their own colour and wording`,
      { timeout: 120_000 },
      async () => {
        let current: Outcome = OUTCOMES[0];
        const { page, failed, verifyUrls } = await stubbedPage(() => current);
        try {
          const banners = [];
          for (const outcome of OUTCOMES) {
            current = outcome;
            const banner = await verifyOn(page, button);
            await page.screenshot({
              path: path.join(RESULTS_DIR, `page-${button}-${outcome.verdict}.png`),
            });
            expect(banner.phase, banner.text).toBe('done');
            expect(banner.verdict).toBe(outcome.verdict);
            expect(banner.text).toMatch(outcome.wording);
            // The phrase was shown to read while recording, and its check is in the outcome.
            expect(banner.prompted).toBe(CHALLENGE.text);
            const matched = outcome.heard === CHALLENGE.text;
            expect(banner.phrase).toEqual({
              text: `${matched ? 'matched' : 'not matched'}: heard “${outcome.heard}” (match ${matched ? '1.00' : '0.00'})`,
              matched: String(matched),
            });
            banners.push(banner);
          }
          expect(verifyUrls).toHaveLength(OUTCOMES.length);
          for (const verifyUrl of verifyUrls)
            expect(new URL(verifyUrl).searchParams.get('challenge_id')).toBe(
              CHALLENGE.challenge_id,
            );
          expect(new Set(banners.map((b) => b.background)).size, JSON.stringify(banners)).toBe(
            OUTCOMES.length,
          );
          expect(new Set(banners.map((b) => b.border)).size, JSON.stringify(banners)).toBe(
            OUTCOMES.length,
          );
          expect(failed).toEqual([]);
        } finally {
          await page.close();
        }
      },
    );
  }

  it('serves an SVG favicon, which the page links, so the browser asks for nothing that is missing', async () => {
    const favicon = await fetch(`${url}/favicon.svg`);
    expect(favicon.status).toBe(200);
    expect(favicon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await favicon.text()).toMatch(/^<svg /);
    const { page, failed } = await stubbedPage(() => OUTCOMES[0]);
    try {
      expect(await page.getAttribute('link[rel="icon"]', 'href')).toBe('/favicon.svg');
      // Headless Chromium does not fetch favicons itself; a windowed one would, and logged a 404 before.
      expect(
        await page.evaluate(() =>
          fetch((document.querySelector('link[rel="icon"]') as HTMLLinkElement).href).then(
            (r) => r.status,
          ),
        ),
      ).toBe(200);
      expect(failed).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
