/** HTTP helpers for the benchmarks: an authenticated client, a webhook receiver, dataset recordings. */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ROOT } from './server.js';

export const DATASET_DIR = process.env.VOXKEY_DATASET_DIR ?? path.join(ROOT, '../shared/datasets');

export function client(baseUrl: string, bearer: string) {
  return async function call<T = any>(
    method: string,
    pathname: string,
    body?: unknown,
  ): Promise<{ status: number; body: T; headers: Headers }> {
    const res = await fetch(`${baseUrl}${pathname}`, {
      method,
      headers: {
        authorization: `Bearer ${bearer}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return {
      status: res.status,
      body: (text ? JSON.parse(text) : undefined) as T,
      headers: res.headers,
    };
  };
}

/**
 * A lean poster for the recordings: the JSON body's large part (the base64 recording) is encoded to
 * bytes once per clip, and requests go over kept-alive connections. The load generator shares the
 * cores with the server, so its own cost per request is kept small and reported apart.
 */
export function recordingPoster(baseUrl: string, bearer: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const prefixes = new Map<string, Buffer>();
  return async function post(
    pathname: string,
    voiceData: string,
    fields: Record<string, string>,
  ): Promise<{ status: number; body: any }> {
    let prefix = prefixes.get(voiceData);
    if (!prefix) {
      prefix = Buffer.from(`{"voice_data":${JSON.stringify(voiceData)}`);
      prefixes.set(voiceData, prefix);
    }
    const rest = Object.entries(fields)
      .map(([k, v]) => `,${JSON.stringify(k)}:${JSON.stringify(v)}`)
      .join('');
    const body = Buffer.concat([prefix, Buffer.from(`${rest}}`)]);
    return new Promise((resolve, reject) => {
      const req = http.request(
        `${baseUrl}${pathname}`,
        {
          method: 'POST',
          agent,
          headers: {
            authorization: `Bearer ${bearer}`,
            'content-type': 'application/json',
            'content-length': body.length,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  };
}

export interface Arrival {
  at: number;
  body: any;
}

/** Records the arrival time (performance.now()) of every webhook by request_uuid, and how many came for each; answers 200 at once. */
export async function startReceiver() {
  const arrivals = new Map<string, Arrival>();
  const perRequest = new Map<string, number>();
  const waiters = new Map<string, (a: Arrival) => void>();
  let count = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      res.statusCode = 200;
      res.end();
      count++;
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const arrival = { at, body };
        perRequest.set(body.request_uuid, (perRequest.get(body.request_uuid) ?? 0) + 1);
        if (!arrivals.has(body.request_uuid)) arrivals.set(body.request_uuid, arrival);
        waiters.get(body.request_uuid)?.(arrival);
        waiters.delete(body.request_uuid);
      } catch {
        // not ours
      }
    });
  });
  // Node's default: long enough for the server's kept-alive webhook connections to be reused.
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    arrivals,
    /** Webhooks received per request_uuid: more than 1 is a duplicate. */
    perRequest,
    get count() {
      return count;
    },
    waitFor(requestUuid: string, timeoutMs = 120_000): Promise<Arrival> {
      const existing = arrivals.get(requestUuid);
      if (existing) return Promise.resolve(existing);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(requestUuid);
          reject(new Error(`no webhook for ${requestUuid} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.set(requestUuid, (a) => {
          clearTimeout(timer);
          resolve(a);
        });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Enrols the speakers of `speakers` in turn until one is enrolled (a clip with too little speech fails
 * enrolment: Common Voice has long silences); returns its external id and the base64 of its other clips.
 */
export async function enrolFirstSpeaker(
  call: ReturnType<typeof client>,
  receiver: Awaited<ReturnType<typeof startReceiver>>,
  orgId: number,
  speakers: Array<{ clips: Array<{ base64: string }> }>,
): Promise<{ externalId: string; probes: string[] }> {
  for (const [i, speaker] of speakers.entries()) {
    const requestUuid = randomUUID();
    const externalId = `speaker-${i}`;
    const res = await call('POST', `/organisations/${orgId}/enrollments`, {
      voice_data: speaker.clips[0]!.base64,
      request_uuid: requestUuid,
      external_id: externalId,
    });
    if (res.status !== 202) throw new Error(`enrolment: ${res.status} ${JSON.stringify(res.body)}`);
    if ((await receiver.waitFor(requestUuid)).body.status === 'enrolled')
      return { externalId, probes: speaker.clips.slice(1).map((c) => c.base64) };
  }
  throw new Error('no speaker could be enrolled');
}

export interface Clip {
  path: string;
  speaker: string;
  duration: number;
}

/**
 * Common Voice MP3 clips of about 5 s (4.5 to 5.5 s), grouped by speaker: `speakers` speakers with
 * at least `perSpeaker` clips each. Returns base64 recordings.
 */
export function fiveSecondClips(
  speakers: number,
  perSpeaker: number,
): Array<{ speaker: string; clips: Array<{ path: string; duration: number; base64: string }> }> {
  const manifest = path.join(DATASET_DIR, 'manifest.csv');
  if (!existsSync(manifest))
    throw new Error(`The dataset is not at ${DATASET_DIR} (set VOXKEY_DATASET_DIR)`);
  const [, ...rows] = readFileSync(manifest, 'utf8').trim().split('\n');
  const bySpeaker = new Map<string, Clip[]>();
  for (const row of rows) {
    const cols = row.split(',');
    const clip = { path: cols[0]!, speaker: cols[2]!, duration: Number(cols[5]) };
    if (
      cols[1] !== 'commonvoice' ||
      cols[3] !== 'bonafide' ||
      clip.duration < 4.5 ||
      clip.duration > 5.5
    )
      continue;
    bySpeaker.set(clip.speaker, [...(bySpeaker.get(clip.speaker) ?? []), clip]);
  }
  const chosen = [...bySpeaker.entries()]
    .filter(([, clips]) => clips.length >= perSpeaker)
    .slice(0, speakers);
  if (chosen.length < speakers)
    throw new Error(`only ${chosen.length} speakers have ${perSpeaker} clips of about 5 s`);
  return chosen.map(([speaker, clips]) => ({
    speaker,
    clips: clips.slice(0, perSpeaker).map((c) => ({
      path: c.path,
      duration: c.duration,
      base64: readFileSync(path.join(DATASET_DIR, c.path)).toString('base64'),
    })),
  }));
}

export type ClipFormat = 'wav' | 'mp3';

/**
 * The clips of `fiveSecondClips` in the form a request carries: as stored (`mp3`, 24 kbit/s) or as
 * 16 kHz mono 16-bit WAV (`wav`, about 160 kB for 5 s: the form most apps send, and issue 33's
 * workload), decoded from the MP3 by the engine's own decoder.
 */
export async function inFormat(
  speakers: ReturnType<typeof fiveSecondClips>,
  format: ClipFormat,
): Promise<ReturnType<typeof fiveSecondClips>> {
  if (format !== 'wav' && format !== 'mp3')
    throw new Error(`--format must be wav or mp3, not ${format}`);
  if (format === 'mp3') return speakers;
  const { decodeAudio, encodeWav } = await import('@voxkey/engine/dsp');
  const toWav = async (base64: string) => {
    const { samples } = await decodeAudio(new Uint8Array(Buffer.from(base64, 'base64')));
    return Buffer.from(encodeWav(samples, 16_000)).toString('base64');
  };
  return Promise.all(
    speakers.map(async (s) => ({
      speaker: s.speaker,
      clips: await Promise.all(s.clips.map(async (c) => ({ ...c, base64: await toWav(c.base64) }))),
    })),
  );
}

/**
 * The synchronous audio pre-check (`POST /audio-checks`, target under 100 ms for a 5 s clip): the
 * time from the POST to the 200, one at a time, after `warmup` unmeasured calls. Returns the raw
 * durations and how many clips were found usable.
 */
export async function measureAudioChecks(
  call: ReturnType<typeof client>,
  orgId: number,
  clips: string[],
  samples: number,
  warmup = 3,
): Promise<{ durationsMs: number[]; usable: number }> {
  const durationsMs: number[] = [];
  let usable = 0;
  for (let i = 0; i < warmup + samples; i++) {
    const t0 = performance.now();
    const res = await call('POST', `/organisations/${orgId}/audio-checks`, {
      voice_data: clips[i % clips.length]!,
    });
    const elapsed = performance.now() - t0;
    if (res.status !== 200)
      throw new Error(`audio check: ${res.status} ${JSON.stringify(res.body)}`);
    if (i < warmup) continue;
    durationsMs.push(elapsed);
    if (res.body.usable) usable++;
  }
  return { durationsMs, usable };
}
