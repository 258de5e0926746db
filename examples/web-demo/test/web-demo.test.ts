/**
 * The web demo end to end in real headless Chromium: a real Voxkey server process, the demo
 * backend (`src/main.ts`) as a child process, and one browser per recording whose microphone is
 * Chromium's fake capture device playing a data set clip (converted to WAV). The page records with
 * the SDK's recordVoice (served by the backend from the installed @voxkey/sdk), pre-checks, enrols,
 * verifies, and shows the webhook's result over SSE; or streams the microphone with the SDK's
 * streamVoice through the backend to Voxkey's verification stream and shows its progress and result.
 *
 * Skipped with a notice when the data set (`../shared/datasets`) or Chromium is absent.
 * Screenshots: examples/web-demo/test-results/*.png.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decodeWav, encodeWav, parseWavHeader } from '@voxkey/engine/dsp';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import {
  chooseModels,
  chromiumPresentFor,
  datasetPresentFor,
  pickSpeakers,
  REPO_ROOT,
  startServer,
  toWav,
  type ServerHandle,
} from '../../test-support/example-server.js';
import { RECORDER_ROUTE } from '../src/app.js';
import {
  CHROMIUM,
  EXAMPLE_DIR,
  launchWithMicrophone,
  startDemo,
  type Demo,
} from './demo-harness.js';

const RESULTS_DIR = path.join(EXAMPLE_DIR, 'test-results');
/** The SDK's built recorder, which the backend serves to the page at RECORDER_ROUTE. */
const SDK_RECORDER = path.join(REPO_ROOT, 'packages/sdk/dist/recorder.js');
/**
 * The page enrols with three recordings of this length, each pre-checked; the fake microphone loops
 * two clips of speaker A (about 12 s), so each take is another stretch of them.
 */
const ENROL_SECONDS = 6;
const VERIFY_SECONDS = 7;

const END_TO_END = 'web-demo in headless Chromium';
const HAS_DATASET = datasetPresentFor(import.meta.url, END_TO_END);
const HAS_CHROMIUM = chromiumPresentFor(import.meta.url, END_TO_END, CHROMIUM);

interface PageOutcome {
  /** The WAV the page uploaded (16 kHz mono 16-bit, made in the browser). */
  uploaded: Uint8Array | null;
  /** Whether the page loaded the SDK's recorder from the backend (status 200). */
  loadedSdkRecorder: boolean;
  /** The node that captured each take, as the SDK's recordVoice reported it (the page logs it). */
  captures: string[];
  /** Content-Security-Policy violations the page reported. */
  cspViolations: string[];
  phase: string;
  /** The banner's verdict (data-verdict) after a verification: verified, rejected, deepfake or inconclusive. */
  verdict: string;
  status: string;
  result: string;
  score: string;
  deepfake: string;
  /** The phrase check as the page shows it, and whether it matched (data-matched; '' when none). */
  phrase: { text: string; matched: string };
  /** The one-time phrase the page showed to read (verifications), as the log recorded it. */
  prompted: string | null;
  samples: string;
  problems: string[];
  /** The page's log, oldest first. */
  log: string[];
  /** The page's WebSocket to /api/verify-stream: the binary frames it sent (PCM), its text frames, and the messages it received. */
  stream: { audio: Uint8Array; texts: string[]; received: any[] };
}

/** One browser whose microphone plays `wav`: record (or stream), submit as `externalId`, wait for the result. */
async function useDemo(
  demo: Demo,
  wav: string,
  action: 'enrol' | 'verify' | 'verify-stream',
  externalId: string,
  screenshot: string,
  seconds = action === 'enrol' ? ENROL_SECONDS : VERIFY_SECONDS,
): Promise<PageOutcome> {
  const browser = await launchWithMicrophone(wav);
  try {
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    const consoleLines: string[] = [];
    const captures: string[] = [];
    const cspViolations: string[] = [];
    let loadedSdkRecorder = false;
    page.on('console', (m) => {
      consoleLines.push(`${m.type()}: ${m.text()}`);
      const capture =
        /^(?:recorded|streamed) .* through the (audio-worklet|script-processor)$/.exec(m.text());
      if (capture) captures.push(capture[1]!);
      if (m.text().includes('Content Security Policy')) cspViolations.push(m.text());
    });
    page.on('pageerror', (e) => consoleLines.push(`pageerror: ${e.message}`));
    page.on('crash', () => consoleLines.push('the page crashed'));
    page.on('response', (response) => {
      if (new URL(response.url()).pathname === RECORDER_ROUTE && response.status() === 200)
        loadedSdkRecorder = true;
    });
    await page.goto(demo.url);
    await page.waitForSelector('body[data-ready="true"]');
    await page.fill('#external-id', externalId);
    await page.fill('#seconds', String(seconds));
    let uploaded: Uint8Array | null = null;
    const streamedAudio: Buffer[] = [];
    const stream: PageOutcome['stream'] = { audio: new Uint8Array(0), texts: [], received: [] };
    page.on('websocket', (socket) => {
      if (!socket.url().includes('/api/verify-stream')) return;
      socket.on('framesent', ({ payload }) =>
        typeof payload === 'string' ? stream.texts.push(payload) : streamedAudio.push(payload),
      );
      socket.on('framereceived', ({ payload }) =>
        stream.received.push(JSON.parse(payload.toString())),
      );
    });
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().includes(`/api/${action}`))
        uploaded = request.postDataBuffer();
    });
    await page.click(`#${action}`);
    try {
      await page.waitForFunction(
        () => ['done', 'error'].includes(document.getElementById('status')!.dataset.phase ?? ''),
        undefined,
        {
          timeout: 150_000,
          polling: 200,
        },
      );
    } finally {
      await page.screenshot({ path: path.join(RESULTS_DIR, screenshot), fullPage: true });
    }
    const text = (selector: string) => page.textContent(selector).then((t) => (t ?? '').trim());
    const outcome: PageOutcome = {
      uploaded,
      loadedSdkRecorder,
      captures,
      cspViolations,
      phase: (await page.getAttribute('#status', 'data-phase')) ?? '',
      verdict: (await page.getAttribute('#status', 'data-verdict')) ?? '',
      status: await text('#status'),
      result: await text('#result'),
      score: await text('#match-score'),
      deepfake: await text('#deepfake'),
      phrase: {
        text: await text('#phrase'),
        matched: (await page.getAttribute('#phrase', 'data-matched')) ?? '',
      },
      prompted: null,
      samples: await text('#samples'),
      problems: await page.$$eval('#problems li', (items) =>
        items.map((item) => (item as HTMLElement).dataset.code ?? ''),
      ),
      log: await page.$$eval('#log li', (items) => items.map((item) => item.textContent ?? '')),
      stream: { ...stream, audio: new Uint8Array(Buffer.concat(streamedAudio)) },
    };
    outcome.prompted =
      outcome.log
        .map((line) => /read “([a-z ]+)”/i.exec(line)?.[1])
        .find((phrase) => phrase !== undefined) ?? null;
    const summary = {
      ...outcome,
      uploaded: uploaded ? `${(uploaded as Uint8Array).length} bytes` : null,
      log: outcome.log.length,
      stream: { ...stream, audio: `${outcome.stream.audio.length} bytes` },
    };
    console.info(
      `web-demo ${action} as ${externalId} with ${path.basename(wav)}: ${JSON.stringify(summary)}`,
    );
    if (outcome.phase === 'error') console.info(`browser console:\n${consoleLines.join('\n')}`);
    return outcome;
  } finally {
    await browser.close();
  }
}

/** Log energy per 20 ms frame of 16 kHz audio. */
function envelope(samples: Float32Array): number[] {
  const frame = 320;
  const out: number[] = [];
  for (let start = 0; start + frame <= samples.length; start += frame) {
    let energy = 0;
    for (let i = start; i < start + frame; i++) energy += samples[i]! ** 2;
    out.push(Math.log10(energy / frame + 1e-8));
  }
  return out;
}

function pearson(x: number[], y: number[]): number {
  const n = Math.min(x.length, y.length);
  let mx = 0,
    my = 0;
  for (let i = 0; i < n; i++) ((mx += x[i]!), (my += y[i]!));
  mx /= n;
  my /= n;
  let sxy = 0,
    sxx = 0,
    syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i]! - mx) * (y[i]! - my);
    sxx += (x[i]! - mx) ** 2;
    syy += (y[i]! - my) ** 2;
  }
  return sxy / Math.sqrt(sxx * syy || 1);
}

/**
 * How well the page's upload matches the clip Chromium played as the microphone: the best
 * correlation of their energy envelopes over every offset (the fake device loops the clip and the
 * recording starts anywhere in it). Near 1 when capture, resampling and encoding kept the speech.
 */
function matchToSource(uploaded: Uint8Array, sourceWav: string): number {
  const recorded = envelope(decodeWav(uploaded).samples);
  const clip = envelope(decodeWav(new Uint8Array(readFileSync(sourceWav))).samples);
  const looped = [...clip, ...clip, ...clip, ...clip];
  let best = -1;
  for (let lag = 0; lag < clip.length; lag++)
    best = Math.max(best, pearson(recorded, looped.slice(lag, lag + recorded.length)));
  return best;
}

/** The page recorded at least `takes` takes with the SDK's recordVoice, loaded from the backend, within its CSP. */
function expectSdkRecorder(outcome: PageOutcome, takes: number): void {
  expect(outcome.loadedSdkRecorder, `the page loaded ${RECORDER_ROUTE}`).toBe(true);
  expect(outcome.captures.length, 'one recordVoice result per take').toBeGreaterThanOrEqual(takes);
  expect(outcome.cspViolations).toEqual([]);
}

/**
 * The banner's verdict as the page must derive it from the result, the deepfake flag and the phrase
 * check. The fake microphone plays a clip recorded long before the challenge, so it cannot say the
 * phrase the page showed: the phrase is reported not matched, and a verified voice is denied for it.
 */
function expectVerdictShown(outcome: PageOutcome): void {
  expect(outcome.prompted, 'the page showed a one-time phrase to read').toMatch(
    /^([a-z]+ ){5}[a-z]+$/,
  );
  expect(outcome.phrase.matched, outcome.phrase.text).toBe('false');
  const expected =
    outcome.deepfake === 'yes'
      ? 'deepfake'
      : outcome.result === 'verified'
        ? 'phrase'
        : outcome.result;
  expect(outcome.verdict, outcome.status).toBe(expected);
  expect(outcome.status).toMatch(
    {
      verified: /^Verified: /,
      rejected: /^Rejected: /,
      deepfake: /^Deepfake suspected: /,
      phrase: /^Phrase not matched: /,
      inconclusive: /^Inconclusive: /,
    }[expected]!,
  );
}

function expectUploadOf(outcome: PageOutcome, sourceWav: string, seconds: number): void {
  expect(outcome.uploaded, 'the page uploaded a recording').not.toBeNull();
  const header = parseWavHeader(outcome.uploaded!);
  expect({
    rate: header.sampleRate,
    channels: header.channels,
    bits: header.bitsPerSample,
  }).toEqual({ rate: 16000, channels: 1, bits: 16 });
  expect(header.durationSeconds).toBeCloseTo(seconds, 1);
  const match = matchToSource(outcome.uploaded!, sourceWav);
  console.info(
    `web-demo: the upload's energy envelope matches ${path.basename(sourceWav)} with r = ${match.toFixed(3)}`,
  );
  expect(
    match,
    'the browser recording carries the clip played by the fake microphone',
  ).toBeGreaterThan(0.8);
}

describe.skipIf(!HAS_DATASET || !HAS_CHROMIUM)('web-demo in headless Chromium', () => {
  const models = chooseModels();
  let server: ServerHandle;
  let demo: Demo;
  let audioDir: string;
  const wav = { enrolA: '', verifyA: '', verifyB: '', silence: '' };
  /** Speaker A's clips (MP3 files of the data set). */
  let clipsA: string[] = [];

  beforeAll(async () => {
    console.info(`web-demo.test.ts: models: ${models.names}; Chromium: ${CHROMIUM}`);
    const { a, b, speakers } = pickSpeakers(3);
    clipsA = a;
    console.info(
      `web-demo.test.ts: speaker A ${speakers[0]}: enrol ${path.basename(a[0]!)} + ${path.basename(a[1]!)}, verify ${path.basename(a[2]!)}; ` +
        `speaker B ${speakers[1]}: ${path.basename(b[0]!)} (Common Voice dev split)`,
    );
    audioDir = mkdtempSync(path.join(tmpdir(), 'voxkey-web-demo-audio-'));
    wav.enrolA = await toWav([a[0]!, a[1]!], path.join(audioDir, 'speaker-a-enrol.wav'));
    wav.verifyA = await toWav(a[2]!, path.join(audioDir, 'speaker-a-verify.wav'));
    wav.verifyB = await toWav(b[0]!, path.join(audioDir, 'speaker-b.wav'));
    wav.silence = path.join(audioDir, 'silence.wav');
    writeFileSync(wav.silence, encodeWav(new Float32Array(16000 * 4), 16000));
    mkdirSync(RESULTS_DIR, { recursive: true });
    server = await startServer(models.dir);
    demo = await startDemo(server);
  });

  afterAll(async () => {
    await demo?.stop();
    await server?.stop();
    if (audioDir) rmSync(audioDir, { recursive: true, force: true });
  });

  it('refuses webhook calls without a valid signature', async () => {
    const response = await fetch(`${demo.url}/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'msg_forged',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': 'v1,Zm9yZ2Vk',
      },
      body: JSON.stringify({
        event_type: 'verification.completed',
        request_uuid: 'x',
        result: 'verified',
      }),
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toBe('invalid_signature');
  });

  it('relays Voxkey errors to the page and keeps the token on the backend', async () => {
    const wavBytes = readFileSync(wav.verifyB);
    const missing = await fetch(`${demo.url}/api/verify`, {
      method: 'POST',
      headers: { 'content-type': 'audio/wav' },
      body: wavBytes,
    });
    expect(missing.status).toBe(400);
    const unknown = await fetch(`${demo.url}/api/verify?external_id=nobody`, {
      method: 'POST',
      headers: { 'content-type': 'audio/wav' },
      body: wavBytes,
    });
    expect(unknown.status).toBe(404); // Voxkey: verifying an external_id that is not enrolled
    expect((await unknown.json()).message).toMatch(/external_id "nobody"/);
    const page = await (await fetch(demo.url)).text();
    const script = await (await fetch(`${demo.url}/app.js`)).text();
    expect(page).toContain('Voxkey web demo');
    expect(page + script).not.toContain(server.token);
  });

  it("relays a verification stream's refusal to the page as a message", async () => {
    /** The messages the demo sends on /api/verify-stream before it closes. */
    const messagesOf = (query: string) =>
      new Promise<{ messages: any[]; code: number }>((resolve, reject) => {
        const socket = new WebSocket(
          `${demo.url.replace('http:', 'ws:')}/api/verify-stream${query}`,
        );
        const messages: any[] = [];
        socket.on('message', (data) => messages.push(JSON.parse(data.toString())));
        socket.on('close', (code) => resolve({ messages, code }));
        socket.on('error', reject);
      });
    expect(await messagesOf('')).toEqual({
      messages: [{ type: 'error', message: 'external_id is required' }],
      code: 1008,
    });
    const unknown = await messagesOf('?external_id=nobody');
    expect(unknown.code).toBe(1000);
    expect(unknown.messages).toEqual([
      { type: 'error', message: expect.stringMatching(/external_id "nobody"/) },
    ]);
  });

  it("serves the SDK's recorder to the page, which has no recorder or WAV encoder of its own", async () => {
    const page = await fetch(demo.url);
    expect(page.headers.get('content-security-policy')).toMatch(
      /default-src 'self'; script-src 'self' blob:/,
    );
    const script = await (await fetch(`${demo.url}/app.js`)).text();
    expect(script).toMatch(
      /import \{ recordVoice, streamVoice \} from '\.\/vendor\/voxkey-sdk-recorder\.js'/,
    );
    expect(script).not.toMatch(/getUserMedia|AudioContext|createScriptProcessor|setInt16|RIFF/);
    const recorder = await fetch(`${demo.url}${RECORDER_ROUTE}`);
    expect(recorder.status).toBe(200);
    expect(recorder.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await recorder.text()).toBe(readFileSync(SDK_RECORDER, 'utf8'));
  });

  it('the recorder the page loads resamples keeping speech frequencies and removing what would alias', async () => {
    const browser = await chromium.launch({
      executablePath: CHROMIUM!,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
    });
    try {
      const page = await browser.newPage();
      await page.goto(demo.url);
      // A string, not a function: vitest would rewrite a dynamic import() in this file's code.
      const gains = (await page.evaluate(`(async () => {
        const { resample } = await import('${RECORDER_ROUTE}');
        const rms = (x) => Math.sqrt(x.reduce((a, v) => a + v * v, 0) / x.length);
        const gain = (hz, from) => {
          const tone = Float32Array.from({ length: from }, (_, i) => Math.sin((2 * Math.PI * hz * i) / from));
          const out = resample(tone, from, 16000);
          return { hz, from, samples: out.length, gain: rms(out.subarray(200, -200)) / rms(tone) };
        };
        return [gain(1000, 48000), gain(3000, 44100), gain(10000, 48000), gain(12000, 44100)];
      })()`)) as { hz: number; from: number; samples: number; gain: number }[];
      console.info(`web-demo: resampler gains ${JSON.stringify(gains)}`);
      for (const g of gains) expect(g.samples).toBe(16000);
      expect(gains[0]!.gain).toBeCloseTo(1, 1); // 1 kHz passes
      expect(gains[1]!.gain).toBeCloseTo(1, 1); // 3 kHz passes
      expect(gains[2]!.gain).toBeLessThan(0.01); // 10 kHz (above 8 kHz) is filtered out: < -40 dB
      expect(gains[3]!.gain).toBeLessThan(0.01);
    } finally {
      await browser.close();
    }
  });

  it("shows the pre-check's problems and enrols nothing when the microphone is silent", async () => {
    const outcome = await useDemo(
      demo,
      wav.silence,
      'enrol',
      'silent-user',
      '0-enrol-silence.png',
      3,
    );
    expect(outcome.phase).toBe('error');
    expect(outcome.status).toMatch(/Sample 1 of 3 was not usable in 3 takes/);
    expect(outcome.problems).toContain('silent_audio');
    expectSdkRecorder(outcome, 3);
    expect(outcome.uploaded, 'nothing was sent for enrolment').toBeNull();
    const users = await fetch(
      `${server.baseUrl}/organisations/${server.orgId}/users?filter=external_id=silent-user`,
      { headers: { authorization: `Bearer ${server.token}` } },
    );
    expect((await users.json()).results).toEqual([]);
  });

  it('enrols speaker A, verifies A (same speaker) and rejects B claiming to be A', async () => {
    const context = () =>
      `\n--- demo ---\n${demo.output().slice(-3000)}\n--- server ---\n${server.output().slice(-3000)}`;
    // The bundled spoof model, at its default threshold, judges every take through Chromium's fake
    // capture device (a file played back, resampled twice) synthetic or replayed, so with the
    // enrolment deepfake gate on (the default) nothing would be enrolled. This test is about the
    // page's flow, so the organisation turns the gate off; the gate has its own route tests.
    const gateOff = await fetch(`${server.baseUrl}/organisations/${server.orgId}/settings`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        org_id: server.orgId,
        settings: { reject_deepfake_enrollments: false },
      }),
    });
    expect(gateOff.status).toBe(200);
    const enrol = await useDemo(demo, wav.enrolA, 'enrol', 'speaker-a', '1-enrol-speaker-a.png');
    expect(enrol.phase, `${enrol.status}${context()}`).toBe('done');
    expect(enrol.result).toBe('enrolled');
    // Three pre-checked takes, enrolled as one voiceprint (replace, add, add).
    expect(enrol.samples, enrol.status).toBe('3');
    expectSdkRecorder(enrol, 3);
    expectUploadOf(enrol, wav.enrolA, ENROL_SECONDS);
    const unrelated = matchToSource(enrol.uploaded!, wav.verifyB);
    console.info(
      `web-demo: (control) the same upload against speaker B's clip: r = ${unrelated.toFixed(3)}`,
    );
    expect(unrelated).toBeLessThan(0.8);

    const same = await useDemo(
      demo,
      wav.verifyA,
      'verify',
      'speaker-a',
      '2-verify-same-speaker.png',
    );
    expect(same.phase, `${same.status}${context()}`).toBe('done');
    expect(['verified', 'rejected', 'inconclusive']).toContain(same.result);
    expect(same.score).toMatch(/^[01]\.\d{3}$/);
    expect(['yes', 'no']).toContain(same.deepfake);
    expectVerdictShown(same);
    expectSdkRecorder(same, 1);
    expectUploadOf(same, wav.verifyA, VERIFY_SECONDS);

    const other = await useDemo(
      demo,
      wav.verifyB,
      'verify',
      'speaker-a',
      '3-verify-other-speaker.png',
    );
    expect(other.phase, `${other.status}${context()}`).toBe('done');
    expect(['verified', 'rejected', 'inconclusive']).toContain(other.result);
    expectVerdictShown(other);
    expectSdkRecorder(other, 1);
    expectUploadOf(other, wav.verifyB, VERIFY_SECONDS);

    if (models.real) {
      // The default decision (match_score >= 0.85) is set for FAR <= 2% in every dev block, so a genuine
      // attempt through the fake microphone may land just below it (docs/accuracy.md: FRR is the price).
      // What the page must show is the order: the same speaker scores above the impostor, who is never verified.
      console.info(
        `web-demo: same speaker -> ${same.result} (${same.score}), other speaker -> ${other.result} (${other.score})`,
      );
      expect(
        Number(same.score),
        `same speaker (score ${same.score}) above the other (score ${other.score}), models ${models.names}`,
      ).toBeGreaterThan(Number(other.score));
      expect(other.result, `other speaker (score ${other.score}), models ${models.names}`).not.toBe(
        'verified',
      );
    } else {
      console.warn(
        `web-demo.test.ts: ${models.names}; speaker expectations NOT checked: same speaker -> ${same.result} (${same.score}), other speaker -> ${other.result} (${other.score})`,
      );
    }
  });

  // Retried once: the stream is paced in real time by Chromium's fake microphone, which on a loaded
  // 2-core machine once dropped enough audio that the streamed envelope matched its clip at r = 0.77
  // instead of 0.99 (CI, 2026-11-30); a second failure is a real one.
  it(
    'verifies while speaking: streamVoice through the backend to Voxkey, progress on the page, then the result and its record',
    { retry: 1 },
    async () => {
      const api = (method: string, urlPath: string, body?: unknown) =>
        fetch(`${server.baseUrl}/organisations/${server.orgId}${urlPath}`, {
          method,
          headers: {
            authorization: `Bearer ${server.token}`,
            ...(body ? { 'content-type': 'application/json' } : {}),
          },
          body: body ? JSON.stringify(body) : undefined,
        }).then(async (response) => ({ status: response.status, body: await response.json() }));
      // Speaker A enrolled through the API (the page's enrolment has its own test), with the deepfake gate off as above.
      expect(
        (
          await api('PATCH', '/settings', {
            org_id: server.orgId,
            settings: { reject_deepfake_enrollments: false },
          })
        ).status,
      ).toBe(200);
      for (const [index, clip] of clipsA.slice(0, 2).entries()) {
        const requestUuid = randomUUID();
        const body = {
          external_id: 'stream-user',
          request_uuid: requestUuid,
          voice_data: readFileSync(clip).toString('base64'),
          mode: index === 0 ? 'replace' : 'add',
        };
        expect((await api('POST', '/enrollments', body)).status).toBe(202);
        const deadline = Date.now() + 60_000;
        let record = await api('GET', `/enrollments/${requestUuid}`);
        while (!['completed', 'failed'].includes(record.body.status) && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 200));
          record = await api('GET', `/enrollments/${requestUuid}`);
        }
        expect(record.body.status, JSON.stringify(record.body)).toBe('completed');
      }

      const outcome = await useDemo(
        demo,
        wav.verifyA,
        'verify-stream',
        'stream-user',
        '4-verify-while-speaking.png',
      );
      expect(outcome.phase, `${outcome.status}\n--- demo ---\n${demo.output().slice(-3000)}`).toBe(
        'done',
      );
      expect(['verified', 'rejected', 'inconclusive']).toContain(outcome.result);
      expect(outcome.score).toMatch(/^[01]\.\d{3}$/);
      expect(outcome.status).toMatch(/\(decided (early, )?after \d+\.\d s of audio\)$/);
      expectVerdictShown(outcome);
      expectSdkRecorder(outcome, 1);
      // Voxkey's progress messages reached the page and were shown, then its result.
      const progress = outcome.stream.received.filter((m) => m.type === 'progress');
      expect(progress.length).toBeGreaterThan(0);
      expect(
        outcome.log.some((line) => /Voxkey heard \d+\.\d s, \d+\.\d s of it speech/.test(line)),
      ).toBe(true);
      const result = outcome.stream.received.at(-1);
      expect(result).toMatchObject({
        type: 'result',
        final: true,
        event_type: 'verification.completed',
        external_id: 'stream-user',
        result: outcome.result,
      });
      expect(await recordOf(result.request_uuid)).toMatchObject({
        status: 'completed',
        result: outcome.result,
      });
      // The stream named the phrase the page showed; a stream with a phrase decides after `end`.
      expect(result.phrase).toMatchObject({ expected: outcome.prompted, matched: false });
      expect(outcome.stream.texts).toEqual([JSON.stringify({ type: 'end' })]);
      // What the page streamed: 16 kHz mono 16-bit PCM from the microphone, `end` after the seconds asked unless Voxkey decided before.
      const seconds = outcome.stream.audio.length / 32_000;
      expect(seconds).toBeGreaterThan(1);
      expect(seconds).toBeLessThanOrEqual(VERIFY_SECONDS + 0.01);
      if (seconds > VERIFY_SECONDS - 0.05)
        expect(outcome.stream.texts).toEqual([JSON.stringify({ type: 'end' })]);
      const pcm = new Int16Array(
        outcome.stream.audio.buffer,
        outcome.stream.audio.byteOffset,
        outcome.stream.audio.length / 2,
      );
      const match = matchToSource(
        encodeWav(
          Float32Array.from(pcm, (v) => v / 32768),
          16_000,
        ),
        wav.verifyA,
      );
      console.info(
        `web-demo: streamed ${seconds.toFixed(2)} s, ${progress.length} progress messages, result ${outcome.result} (${outcome.score}); envelope r = ${match.toFixed(3)}`,
      );
      expect(
        match,
        'the streamed audio carries the clip played by the fake microphone',
      ).toBeGreaterThan(0.8);

      async function recordOf(requestUuid: string) {
        const record = await api('GET', `/verifications/${requestUuid}`);
        expect(record.status).toBe(200);
        return record.body;
      }
    },
  );
});
