import { describe, expect, it } from 'vitest';
import { VoxkeyError, type Challenge, type RequestRecord } from '../src/index.js';
import { client, json, mockFetch } from './helpers.js';

const challenge: Challenge = {
  challenge_id: '3f1e2d4c-5b6a-4798-8a1b-2c3d4e5f6a7b',
  text: 'four seven one nine zero two',
  language: 'en-UK',
  expires_at: '2026-11-30T12:02:00.000Z',
};

describe('challenges (prompted phrases)', () => {
  it('challenges.create posts external_id (and language) with an Idempotency-Key and returns the challenge', async () => {
    const { fetch, calls } = mockFetch(json(challenge, 201));
    const created = await client(fetch).challenges.create({ external_id: 'customer-42' });
    expect(created).toEqual(challenge);
    expect(calls[0]).toMatchObject({ method: 'POST', body: { external_id: 'customer-42' } });
    expect(calls[0]!.url.pathname).toBe('/v1/organisations/7/challenges');
    // No natural key: the SDK makes a retry safe with an Idempotency-Key.
    expect(calls[0]!.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);

    const english = mockFetch(json({ ...challenge, language: 'en-US' }, 201));
    await client(english.fetch).challenges.create({ external_id: 'c', language: 'en-US' });
    expect(english.calls[0]!.body).toEqual({ external_id: 'c', language: 'en-US' });
  });

  it('retries a gateway error with the same Idempotency-Key', async () => {
    const { fetch, calls } = mockFetch(
      json({ code: 503, error: 'unavailable', message: 'busy' }, 503, { 'Retry-After': '0' }),
      json(challenge, 201),
    );
    await client(fetch).challenges.create({ external_id: 'customer-42' });
    expect(calls).toHaveLength(2);
    expect(calls[1]!.headers.get('idempotency-key')).toBe(calls[0]!.headers.get('idempotency-key'));
  });

  it('surfaces unsupported_language on language as a VoxkeyError', async () => {
    const { fetch } = mockFetch(
      json(
        {
          code: 400,
          error: 'validation_failed',
          message: 'Request validation failed',
          errors: [{ field: 'language', code: 'unsupported_language', message: 'not English' }],
        },
        400,
      ),
    );
    const error = await client(fetch)
      .challenges.create({ external_id: 'c', language: 'fr-FR' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VoxkeyError);
    expect((error as VoxkeyError).errors?.[0]?.code).toBe('unsupported_language');
  });

  it('verifications.create sends challenge_id; a used challenge is a typed 409', async () => {
    const { fetch, calls } = mockFetch(
      json({ callback_url: 'https://example.com/hook', message: 'Request accepted' }, 202),
      json({ code: 409, error: 'challenge_used', message: 'This challenge was already used' }, 409),
    );
    const vk = client(fetch);
    await vk.verifications.create({
      external_id: 'customer-42',
      voice_data: 'UklGRg==',
      challenge_id: challenge.challenge_id,
    });
    expect(calls[0]!.body).toMatchObject({ challenge_id: challenge.challenge_id });
    const error = await vk.verifications
      .create({
        external_id: 'customer-42',
        voice_data: 'UklGRg==',
        challenge_id: challenge.challenge_id,
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 409, error: 'challenge_used' });
  });

  it('verifications.stream puts challenge_id in the start message', async () => {
    const sent: unknown[] = [];
    class FakeSocket {
      static last: FakeSocket;
      binaryType = 'arraybuffer';
      readyState = 0;
      bufferedAmount = 0;
      private listeners = new Map<string, Array<(event: any) => void>>();
      constructor() {
        FakeSocket.last = this;
        setTimeout(() => {
          this.readyState = 1;
          for (const listener of this.listeners.get('open') ?? []) listener({});
        }, 0);
      }
      send(data: unknown) {
        sent.push(typeof data === 'string' ? JSON.parse(data) : data);
      }
      close() {}
      addEventListener(type: string, listener: (event: any) => void) {
        this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
      }
    }
    const vk = client(mockFetch(json({})).fetch, { WebSocket: FakeSocket });
    const stream = vk.verifications.stream({
      external_id: 'customer-42',
      challenge_id: challenge.challenge_id,
    });
    stream.result.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sent[0]).toMatchObject({
      type: 'start',
      external_id: 'customer-42',
      challenge_id: challenge.challenge_id,
    });
  });

  it('the request record types phrase', () => {
    const phrase: NonNullable<RequestRecord['phrase']> = {
      expected: challenge.text,
      transcript: 'four seven one nine zero two',
      match_score: 1,
      matched: true,
    };
    expect(phrase.matched).toBe(true);
  });
});
