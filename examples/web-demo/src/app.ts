/**
 * The web demo's backend, a Hono app:
 *
 *   GET  /                         the static page (public/)
 *   GET  /vendor/voxkey-sdk-recorder.js
 *                                  the SDK's microphone recorder (`@voxkey/sdk/recorder`), which the page imports
 *   POST /api/check                body: a WAV recording -> Voxkey audio pre-check -> { usable, problems, ... }
 *   POST /api/enrol?external_id=X&mode=replace|add
 *                                  body: a WAV recording -> Voxkey enrolment -> { request_uuid }
 *   POST /api/challenge?external_id=X
 *                                  a one-time phrase for X to read -> { challenge_id, text, expires_at }
 *   POST /api/verify?external_id=X&challenge_id=C
 *                                  body: a WAV recording -> Voxkey verification -> { request_uuid }
 *   GET  /api/verify-stream?external_id=X&challenge_id=C
 *                                  WebSocket: the page's microphone as 16 kHz PCM -> Voxkey's verification
 *                                  stream; Voxkey's `progress` and `result` messages come back
 *   GET  /api/events/:request_uuid server-sent events: `waiting`, then `result` with the webhook's event
 *   POST /webhooks                 Voxkey's signed webhooks (the organisation's callback URL)
 *
 * The browser never sees the API token: only this backend talks to Voxkey.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { upgradeWebSocket } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { secureHeaders } from 'hono/secure-headers';
import { streamSSE } from 'hono/streaming';
import {
  verifyWebhook,
  VoxkeyError,
  WebhookVerificationError,
  type EnrollmentMode,
  type VerificationStream,
  type VoxkeyClient,
  type VoxkeyEvent,
} from '@voxkey/sdk';

const MODES: readonly string[] = ['new', 'add', 'replace'] satisfies EnrollmentMode[];

/** What the page sends on its verification stream when the caller has finished. */
const END_MESSAGE = JSON.stringify({ type: 'end' });

export const PUBLIC_DIR = fileURLToPath(new URL('../public', import.meta.url));

/** Where the page loads the SDK's recorder from (public/app.js imports it; public/vendor/ holds its types). */
export const RECORDER_ROUTE = '/vendor/voxkey-sdk-recorder.js';

/**
 * The SDK's recorder as the installed package exports it: one self-contained ES module, so the
 * page needs no bundler. Read once; a missing file means the SDK is not built (`npm run build`).
 */
function readRecorderModule(): string {
  const file = fileURLToPath(import.meta.resolve('@voxkey/sdk/recorder'));
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(
      `the SDK's recorder module ${file} is missing: build the SDK first (npm run build in the repository root)`,
      { cause: error },
    );
  }
}

/** Results by request_uuid, for the requests this backend started; SSE subscribers wait here. */
class ResultHub {
  private readonly results = new Map<string, VoxkeyEvent>();
  private readonly pending = new Set<string>();
  private readonly listeners = new Map<string, Set<(event: VoxkeyEvent) => void>>();

  expect(requestUuid: string): void {
    this.pending.add(requestUuid);
  }

  knows(requestUuid: string): boolean {
    return this.pending.has(requestUuid) || this.results.has(requestUuid);
  }

  publish(event: VoxkeyEvent): void {
    if (!this.pending.has(event.request_uuid)) return; // not ours (another app on the same organisation)
    this.pending.delete(event.request_uuid);
    this.results.set(event.request_uuid, event);
    // A demo keeps the last results in memory only; forget old ones.
    if (this.results.size > 1000) this.results.delete(this.results.keys().next().value!);
    for (const listener of this.listeners.get(event.request_uuid) ?? []) listener(event);
    this.listeners.delete(event.request_uuid);
  }

  /** Resolves with the result, at once when it is already here (the webhook may beat the page). */
  next(requestUuid: string, signal: AbortSignal): Promise<VoxkeyEvent | null> {
    const done = this.results.get(requestUuid);
    if (done) return Promise.resolve(done);
    return new Promise((resolve) => {
      const listener = (event: VoxkeyEvent) => resolve(event);
      const set = this.listeners.get(requestUuid) ?? new Set();
      set.add(listener);
      this.listeners.set(requestUuid, set);
      signal.addEventListener('abort', () => {
        set.delete(listener);
        resolve(null);
      });
    });
  }
}

export interface DemoOptions {
  voxkey: VoxkeyClient;
  webhookSecret: string;
  /** Largest recording accepted from the page (default 10 MB, Voxkey's limit). */
  maxRecordingBytes?: number;
}

export function createDemoApp(options: DemoOptions): Hono {
  const { voxkey, webhookSecret } = options;
  const maxBytes = options.maxRecordingBytes ?? 10 * 1024 * 1024;
  const hub = new ResultHub();
  const seenWebhookIds = new Set<string>();
  const recorderModule = readRecorderModule();
  const app = new Hono();

  // Scripts, styles and connections from this origin only. `blob:` scripts: recordVoice loads its
  // AudioWorklet module from a blob URL (without it, it falls back to a ScriptProcessorNode).
  app.use(
    '*',
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'", 'blob:'],
        connectSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
        frameAncestors: ["'none'"],
      },
    }),
  );

  /** Voxkey's refusal as the page shows it, or null for anything that is not a client error. */
  function refusalOf(error: unknown): { message: string; status: number } | null {
    if (error instanceof VoxkeyError && error.kind === 'http' && error.status < 500) {
      // Show the page what Voxkey said (bad audio, unknown user, already enrolled, ...).
      const detail = error.errors.map((e) => `${e.field}: ${e.message}`).join('; ');
      return {
        message: detail ? `${error.message} (${detail})` : error.message,
        status: error.status,
      };
    }
    return null;
  }

  function relayed(c: Context, error: unknown) {
    const refusal = refusalOf(error);
    return refusal ? c.json({ message: refusal.message }, refusal.status as 400) : null;
  }

  /** The recording in the request body, or an answer refusing it. */
  async function recordingOf(c: Context): Promise<Uint8Array | Response> {
    const recording = new Uint8Array(await c.req.arrayBuffer()); // read it all before answering
    if (recording.byteLength === 0) return c.json({ message: 'the recording is empty' }, 400);
    if (recording.byteLength > maxBytes)
      return c.json({ message: 'the recording is too large' }, 413);
    return recording;
  }

  /** Forwards a recording from the page to Voxkey; answers { request_uuid } or the API's error. */
  async function submit(c: Context, kind: 'enrol' | 'verify') {
    const recording = await recordingOf(c);
    if (recording instanceof Response) return recording;
    const externalId = c.req.query('external_id')?.trim();
    if (!externalId) return c.json({ message: 'external_id is required' }, 400);
    const mode = c.req.query('mode') as EnrollmentMode | undefined;
    if (mode !== undefined && !MODES.includes(mode))
      return c.json({ message: 'mode must be new, add or replace' }, 400);
    // The one-time phrase the page showed before recording; Voxkey checks the recording says it.
    const challengeId = c.req.query('challenge_id')?.trim() || undefined;
    try {
      const input = {
        external_id: externalId,
        voice_data: recording,
        ...(challengeId ? { challenge_id: challengeId } : {}),
      };
      const accepted =
        kind === 'enrol'
          ? await voxkey.enrollments.create({ ...input, ...(mode ? { mode } : {}) })
          : await voxkey.verifications.create(input);
      hub.expect(accepted.request_uuid);
      return c.json({ request_uuid: accepted.request_uuid }, 202);
    } catch (error) {
      const answer = relayed(c, error);
      if (answer) return answer;
      console.error(`${kind} failed:`, error);
      return c.json({ message: 'Voxkey is unavailable, try again' }, 502);
    }
  }

  /** The audio pre-check: synchronous, so the page can ask for another take before enrolling. */
  async function check(c: Context) {
    const recording = await recordingOf(c);
    if (recording instanceof Response) return recording;
    try {
      return c.json(await voxkey.audioChecks.create({ voice_data: recording }), 200);
    } catch (error) {
      const answer = relayed(c, error);
      if (answer) return answer;
      console.error('check failed:', error);
      return c.json({ message: 'Voxkey is unavailable, try again' }, 502);
    }
  }

  // Refuse oversized uploads while they stream in, before buffering them.
  app.use(
    '/api/*',
    bodyLimit({
      maxSize: maxBytes,
      onError: (c) => c.json({ message: 'the recording is too large' }, 413),
    }),
  );
  // A one-time phrase (six random digits as words) for the person to read while recording: a
  // replayed or pre-made recording cannot say it, which the result's `phrase` reports.
  app.post('/api/challenge', async (c) => {
    const externalId = c.req.query('external_id')?.trim();
    if (!externalId) return c.json({ message: 'external_id is required' }, 400);
    try {
      const challenge = await voxkey.challenges.create({ external_id: externalId });
      return c.json(
        {
          challenge_id: challenge.challenge_id,
          text: challenge.text,
          expires_at: challenge.expires_at,
        },
        201,
      );
    } catch (error) {
      const answer = relayed(c, error);
      if (answer) return answer;
      console.error('challenge failed:', error);
      return c.json({ message: 'Voxkey is unavailable, try again' }, 502);
    }
  });
  app.post('/api/check', (c) => check(c));
  app.post('/api/enrol', (c) => submit(c, 'enrol'));
  app.post('/api/verify', (c) => submit(c, 'verify'));

  // Verify while the person speaks: the page streams its microphone here (the SDK's streamVoice:
  // 16 kHz mono 16-bit PCM, `{"type":"end"}` when time is up), and this backend relays it to
  // Voxkey's verification stream with its own token (the SDK's verifications.stream). Voxkey's
  // `progress` messages and its `result` (the webhook's fields) go back to the page as they are;
  // a refusal as `{"type":"error","message"}`. The page closing first abandons the verification.
  app.get(
    '/api/verify-stream',
    upgradeWebSocket((c) => {
      const externalId = c.req.query('external_id')?.trim();
      const challengeId = c.req.query('challenge_id')?.trim() || undefined;
      let stream: VerificationStream | undefined;
      let over = false;
      return {
        onOpen(_event, ws) {
          const reply = (message: object) => {
            if (ws.readyState === 1) ws.send(JSON.stringify(message));
          };
          if (!externalId) {
            reply({ type: 'error', message: 'external_id is required' });
            ws.close(1008);
            return;
          }
          const live = voxkey.verifications.stream({
            external_id: externalId,
            ...(challengeId ? { challenge_id: challengeId } : {}),
          });
          stream = live;
          void (async () => {
            try {
              // progress..., then the result; an error message is followed by the error thrown, answered below.
              for await (const message of live) if (message.type !== 'error') reply(message);
            } catch (error) {
              const refusal = refusalOf(error);
              if (!refusal) console.error('verification stream failed:', error);
              reply({
                type: 'error',
                message: refusal?.message ?? 'Voxkey is unavailable, try again',
              });
            } finally {
              over = true;
              ws.close(1000);
            }
          })();
        },
        onMessage(event) {
          if (typeof event.data !== 'string')
            stream?.send(new Uint8Array(event.data as ArrayBuffer));
          else if (event.data === END_MESSAGE) stream?.end();
        },
        onClose() {
          if (!over) stream?.close();
        },
      };
    }),
  );

  app.get('/api/events/:request_uuid', (c) => {
    const requestUuid = c.req.param('request_uuid');
    if (!hub.knows(requestUuid)) return c.json({ message: 'unknown request' }, 404);
    return streamSSE(c, async (stream) => {
      const aborted = new AbortController();
      stream.onAbort(() => aborted.abort());
      await stream.writeSSE({
        event: 'waiting',
        data: JSON.stringify({ request_uuid: requestUuid }),
      });
      const heartbeat = setInterval(() => void stream.write(': keep-alive\n\n'), 15_000);
      try {
        const event = await hub.next(requestUuid, aborted.signal);
        if (event) await stream.writeSSE({ event: 'result', data: JSON.stringify(event) });
      } finally {
        clearInterval(heartbeat);
      }
    });
  });

  // Voxkey's webhooks. Verify the signature over the RAW body, answer 2xx quickly, and use
  // `webhook-id` to ignore retries of an event already handled.
  app.post('/webhooks', async (c) => {
    const body = await c.req.arrayBuffer();
    let event: VoxkeyEvent;
    try {
      event = verifyWebhook({ secret: webhookSecret, headers: c.req.raw.headers, body });
    } catch (error) {
      if (error instanceof WebhookVerificationError) return c.text(error.reason, 400);
      throw error;
    }
    const webhookId = c.req.header('webhook-id')!;
    if (!seenWebhookIds.has(webhookId)) {
      seenWebhookIds.add(webhookId);
      hub.publish(event);
    }
    return c.body(null, 204);
  });

  app.get(RECORDER_ROUTE, (c) =>
    c.body(recorderModule, 200, {
      'Content-Type': 'text/javascript; charset=utf-8',
      'Cache-Control': 'no-cache',
    }),
  );
  app.use('/*', serveStatic({ root: PUBLIC_DIR }));
  return app;
}
