import { describe, expect, it } from 'vitest';
import { VoxkeyError } from '../src/index.js';
import { client, json, mockFetch } from './helpers.js';

const accepted = { callback_url: 'https://example.com/hook', message: 'Request accepted' };
const check = {
  usable: false,
  format: 'wav',
  sample_rate: 16000,
  duration_s: 1.5,
  net_speech_s: 1.2,
  snr_db: 21.3,
  clipping_ratio: 0,
  problems: [
    { code: 'audio_too_short', message: 'audio is 1.50 s long; at least 3 s is required' },
    { code: 'insufficient_speech', message: 'only 1.20 s of speech detected' },
  ],
};

describe('voiceprint lifecycle in the SDK', () => {
  it('audioChecks.create posts the recording (bytes are encoded) and returns the check', async () => {
    const { fetch, calls } = mockFetch(json(check));
    const result = await client(fetch).audioChecks.create({
      voice_data: new Uint8Array([82, 73, 70, 70]),
    });
    expect(result).toEqual(check);
    expect(calls[0]).toMatchObject({ method: 'POST', body: { voice_data: 'UklGRg==' } });
    expect(calls[0]!.url.pathname).toBe('/v1/organisations/7/audio-checks');
    // Stores nothing: no Idempotency-Key needed, and a gateway error is retried.
    expect(calls[0]!.headers.get('idempotency-key')).toBeNull();
  });

  it('audioChecks.create retries a 503 and surfaces a 400 on voice_data', async () => {
    const { fetch, calls } = mockFetch(
      json({ code: 503, error: 'unavailable', message: 'busy' }, 503, { 'Retry-After': '0' }),
      json(check),
    );
    await client(fetch).audioChecks.create({ voice_data: 'UklGRg==' });
    expect(calls).toHaveLength(2);
    const bad = mockFetch(
      json(
        {
          code: 400,
          error: 'validation_failed',
          message: 'Request validation failed',
          errors: [{ field: 'voice_data', code: 'invalid_base64', message: 'not base64' }],
        },
        400,
      ),
    );
    const error = await client(bad.fetch)
      .audioChecks.create({ voice_data: '%%%' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VoxkeyError);
    expect((error as VoxkeyError).errors).toEqual([
      { field: 'voice_data', code: 'invalid_base64', message: 'not base64' },
    ]);
  });

  it('enrollments.create sends mode; settings.update sends the decision settings', async () => {
    const { fetch, calls } = mockFetch(
      json(accepted, 202),
      json({ id: 1, org_id: 7, settings: {}, created_at: 'x', updated_at: 'x' }),
    );
    const vk = client(fetch);
    await vk.enrollments.create({ external_id: 'customer-1', voice_data: 'UklGRg==', mode: 'add' });
    await vk.settings.update({
      match_threshold: 0.9,
      deepfake_threshold: null,
      reject_deepfake_enrollments: false,
    });
    expect(calls[0]!.body).toMatchObject({ external_id: 'customer-1', mode: 'add' });
    expect(calls[1]!.body).toEqual({
      org_id: 7,
      settings: {
        match_threshold: 0.9,
        deepfake_threshold: null,
        reject_deepfake_enrollments: false,
      },
    });
  });
});
