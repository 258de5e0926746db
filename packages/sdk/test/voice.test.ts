import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newRequestUuid, toVoiceData } from '../src/index.js';
import { readAudioFile } from '../src/node.js';
import { client, json, mockFetch } from './helpers.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const accepted = { callback_url: 'https://example.com/hook', message: 'Request accepted' };

describe('voice helpers', () => {
  it('newRequestUuid gives distinct UUID v4s, also without crypto.randomUUID', () => {
    const a = newRequestUuid();
    expect(a).toMatch(UUID_V4);
    expect(newRequestUuid()).not.toBe(a);
    const original = crypto.randomUUID;
    Object.defineProperty(crypto, 'randomUUID', { value: undefined, configurable: true });
    try {
      for (let i = 0; i < 50; i++) expect(newRequestUuid()).toMatch(UUID_V4);
    } finally {
      Object.defineProperty(crypto, 'randomUUID', { value: original, configurable: true });
    }
  });

  it('toVoiceData base64-encodes bytes, with and without Buffer', () => {
    const bytes = new Uint8Array(100_000).map((_, i) => (i * 31) & 0xff);
    const expected = Buffer.from(bytes).toString('base64');
    expect(toVoiceData(bytes)).toBe(expected);
    expect(toVoiceData(bytes.buffer)).toBe(expected);
    expect(toVoiceData(new DataView(bytes.buffer, 10, 20))).toBe(
      Buffer.from(bytes.subarray(10, 30)).toString('base64'),
    );
    const NodeBuffer = globalThis.Buffer;
    (globalThis as { Buffer?: unknown }).Buffer = undefined;
    try {
      expect(toVoiceData(bytes)).toBe(expected);
      expect(toVoiceData(bytes.subarray(1, 4))).toBe(
        NodeBuffer.from(bytes.subarray(1, 4)).toString('base64'),
      );
    } finally {
      globalThis.Buffer = NodeBuffer;
    }
    expect(() => toVoiceData(new Uint8Array(0))).toThrow(/empty/);
  });

  it('readAudioFile reads a file as voice_data', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'voxkey-sdk-'));
    try {
      const wav = Buffer.concat([
        Buffer.from('RIFF'),
        Buffer.alloc(4),
        Buffer.from('WAVEfmt '),
        Buffer.alloc(64, 7),
      ]);
      await writeFile(join(dir, 'a.wav'), wav);
      expect(await readAudioFile(join(dir, 'a.wav'))).toBe(wav.toString('base64'));
      await writeFile(join(dir, 'empty.wav'), '');
      await expect(readAudioFile(join(dir, 'empty.wav'))).rejects.toThrow(/empty/);
      await expect(readAudioFile(join(dir, 'missing.wav'))).rejects.toMatchObject({
        code: 'ENOENT',
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('enrolment and verification', () => {
  it('generates request_uuid when omitted and returns it', async () => {
    const { fetch, calls } = mockFetch(json(accepted, 202));
    const result = await client(fetch).enrollments.create({
      external_id: 'customer-42',
      voice_data: 'UklGRg==',
      language: 'en-UK',
    });
    expect(result.request_uuid).toMatch(UUID_V4);
    expect(result).toEqual({ ...accepted, request_uuid: result.request_uuid });
    expect(calls[0]!.url.pathname).toBe('/v1/organisations/7/enrollments');
    expect(calls[0]!.body).toEqual({
      external_id: 'customer-42',
      voice_data: 'UklGRg==',
      language: 'en-UK',
      request_uuid: result.request_uuid,
    });
  });

  it('keeps a given request_uuid and encodes raw bytes', async () => {
    const { fetch, calls } = mockFetch(json(accepted, 202));
    const request_uuid = '9b2f6d3e-8c1a-4f5b-9d7e-2a4c6e8f0b1d';
    const bytes = new TextEncoder().encode('RIFF....WAVE');
    const result = await client(fetch).verifications.create({
      external_id: 'customer-42',
      voice_data: bytes,
      request_uuid,
      device_type: 1,
    });
    expect(result.request_uuid).toBe(request_uuid);
    expect(calls[0]!.url.pathname).toBe('/v1/organisations/7/verifications');
    expect(calls[0]!.body).toEqual({
      external_id: 'customer-42',
      voice_data: Buffer.from(bytes).toString('base64'),
      request_uuid,
      device_type: 1,
    });
  });

  it('two creates get two different request_uuids', async () => {
    const { fetch, calls } = mockFetch(json(accepted, 202));
    const vk = client(fetch);
    await vk.enrollments.create({ external_id: 'a', voice_data: 'AAAA' });
    await vk.enrollments.create({ external_id: 'a', voice_data: 'AAAA' });
    const [a, b] = calls.map((c) => (c.body as { request_uuid: string }).request_uuid);
    expect(a).not.toBe(b);
  });

  it('gets request records and talks to the webhook routes', async () => {
    const record = {
      request_uuid: 'u',
      kind: 'verification',
      external_id: 'e',
      status: 'completed',
      result: 'verified',
    };
    const delivery = {
      id: 4,
      webhook_id: 'msg_1',
      event_type: 'verification.completed',
      request_uuid: 'u',
      status: 'pending',
    };
    const { fetch, calls } = mockFetch(
      json(record),
      json(record),
      json({ secret: 'whsec_x', previous_secret_expires_at: null }, 201),
      json(delivery, 202),
    );
    const vk = client(fetch);
    await vk.enrollments.get('u');
    await vk.verifications.get('u');
    expect((await vk.webhooks.rotateSecret()).secret).toBe('whsec_x');
    expect((await vk.webhooks.redeliver(4)).status).toBe('pending');
    expect(calls.map((c) => `${c.method} ${c.url.pathname}`)).toEqual([
      'GET /v1/organisations/7/enrollments/u',
      'GET /v1/organisations/7/verifications/u',
      'POST /v1/organisations/7/webhook-secret',
      'POST /v1/organisations/7/webhook-deliveries/4/redeliver',
    ]);
  });

  it('webhooks.sendTest posts to webhook-test with an Idempotency-Key and returns the queued delivery', async () => {
    const delivery = {
      id: 5,
      webhook_id: 'msg_2',
      event_type: 'webhook.test',
      request_uuid: 'u',
      status: 'pending',
    };
    const { fetch, calls } = mockFetch(json(delivery, 202));
    const result = await client(fetch).webhooks.sendTest();
    expect(result.event_type).toBe('webhook.test');
    expect(`${calls[0]!.method} ${calls[0]!.url.pathname}`).toBe(
      'POST /v1/organisations/7/webhook-test',
    );
    expect(calls[0]!.headers.get('idempotency-key')).toMatch(UUID_V4);
  });
});
