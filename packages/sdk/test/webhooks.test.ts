import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError, type VoxkeyEvent } from '../src/index.js';

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const otherSecret = 'whsec_' + Buffer.from('another secret of 24 byt').toString('base64');

const verification: VoxkeyEvent = {
  event_type: 'verification.completed',
  request_uuid: '9b2f6d3e-8c1a-4f5b-9d7e-2a4c6e8f0b1d',
  external_id: 'customer-42',
  result: 'verified',
  match_score: 0.93,
  deepfake_detected: false,
  latency_ms: 812,
  created_at: '2026-11-21T12:00:00.000Z',
  deepfake_score: 0.03,
  match_threshold: 0.85,
  deepfake_threshold: 0.5,
  failure_reason: null,
  models: { speaker: 'voxkey-speaker-v2', spoof: 'voxkey-spoof-v2' },
  voiceprint_upgraded: false,
  recording_quality: {
    net_speech_s: 4.1,
    snr_db: 24.5,
    bandwidth_hz: 3875,
    spectral_hole_ratio: 0.04,
    decay_rate_db_per_s: 512,
  },
  phrase: {
    expected: 'four seven one nine zero two',
    transcript: 'four seven one nine zero two',
    match_score: 1,
    matched: true,
  },
};
const enrollment: VoxkeyEvent = {
  event_type: 'enrollment.completed',
  request_uuid: '1b2f6d3e-8c1a-4f5b-9d7e-2a4c6e8f0b1d',
  external_id: 'customer-42',
  user_id: 12,
  status: 'enrolled',
  quality_score: 0.81,
  failure_reason: null,
  latency_ms: 1400,
  created_at: '2026-11-21T12:00:00.000Z',
  mode: 'new',
  samples: 1,
  deepfake_score: 0.03,
  models: { speaker: 'voxkey-speaker-v2', spoof: 'voxkey-spoof-v2' },
  recording_quality: null,
  phrase: null,
};

function signed(payload: unknown, options: { secrets?: string[]; at?: Date; id?: string } = {}) {
  const body = JSON.stringify(payload);
  const at = options.at ?? new Date();
  const id = options.id ?? 'msg_2b0mU4xC1wqS2z';
  const signature = (options.secrets ?? [secret])
    .map((s) => new Webhook(s).sign(id, at, body))
    .join(' ');
  return {
    body,
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signature,
    },
  };
}

function reason(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return (error as WebhookVerificationError).reason;
  }
  throw new Error('expected verification to fail');
}

describe('verifyWebhook', () => {
  it('returns the typed event for a valid signature', () => {
    const { body, headers } = signed(verification);
    const event = verifyWebhook({ secret, headers, body });
    expect(event).toEqual(verification);
    if (event.event_type === 'verification.completed') expect(event.match_score).toBe(0.93);
    else throw new Error('wrong type');
  });

  it('accepts the webhook.test event (sent by webhooks.sendTest) and types it', () => {
    const testEvent: VoxkeyEvent = {
      event_type: 'webhook.test',
      request_uuid: '3b2f6d3e-8c1a-4f5b-9d7e-2a4c6e8f0b1d',
      organisation_id: 7,
      message: 'Test event from Voxkey: your receiver and signature check work.',
      created_at: '2026-11-21T12:00:00.000Z',
    };
    const event = verifyWebhook({ secret, ...signed(testEvent) });
    expect(event).toEqual(testEvent);
    if (event.event_type === 'webhook.test') expect(event.organisation_id).toBe(7);
    else throw new Error('wrong type');
  });

  it('accepts Headers objects, mixed-case names, Buffer/Uint8Array/ArrayBuffer bodies', () => {
    const { body, headers } = signed(enrollment);
    const h = new Headers(headers);
    expect(verifyWebhook({ secret, headers: h, body }).event_type).toBe('enrollment.completed');
    const upper = {
      'Webhook-Id': headers['webhook-id'],
      'Webhook-Timestamp': headers['webhook-timestamp'],
      'Webhook-Signature': headers['webhook-signature'],
    };
    expect(verifyWebhook({ secret, headers: upper, body: Buffer.from(body) })).toEqual(enrollment);
    const bytes = new TextEncoder().encode(body);
    expect(verifyWebhook({ secret, headers, body: bytes })).toEqual(enrollment);
    expect(verifyWebhook({ secret, headers, body: bytes.slice().buffer })).toEqual(enrollment);
  });

  it('also agrees with standardwebhooks.verify on the same input', () => {
    const { body, headers } = signed(verification);
    expect(new Webhook(secret).verify(body, headers)).toEqual(
      verifyWebhook({ secret, headers, body }),
    );
  });

  it('rejects a wrong secret', () => {
    const { body, headers } = signed(verification, { secrets: [otherSecret] });
    expect(reason(() => verifyWebhook({ secret, headers, body }))).toBe('invalid_signature');
  });

  it('rejects a tampered body', () => {
    const { body, headers } = signed(verification);
    const tampered = body.replace('"verified"', '"rejected"');
    expect(reason(() => verifyWebhook({ secret, headers, body: tampered }))).toBe(
      'invalid_signature',
    );
    // Re-serialised JSON (different whitespace) is not the signed body either.
    expect(
      reason(() =>
        verifyWebhook({ secret, headers, body: JSON.stringify(JSON.parse(body), null, 2) }),
      ),
    ).toBe('invalid_signature');
  });

  it('rejects a tampered id or timestamp', () => {
    const { body, headers } = signed(verification);
    expect(
      reason(() =>
        verifyWebhook({ secret, headers: { ...headers, 'webhook-id': 'msg_other' }, body }),
      ),
    ).toBe('invalid_signature');
    const ts = String(Number(headers['webhook-timestamp']) - 1);
    expect(
      reason(() =>
        verifyWebhook({ secret, headers: { ...headers, 'webhook-timestamp': ts }, body }),
      ),
    ).toBe('invalid_signature');
  });

  it('rejects timestamps outside the tolerance (default 5 minutes), both ways', () => {
    const now = new Date('2026-11-21T12:00:00Z');
    const old = signed(verification, { at: new Date(now.getTime() - 301_000) });
    expect(reason(() => verifyWebhook({ secret, ...old, now }))).toBe('timestamp_too_old');
    const future = signed(verification, { at: new Date(now.getTime() + 301_000) });
    expect(reason(() => verifyWebhook({ secret, ...future, now }))).toBe('timestamp_too_new');
    const edge = signed(verification, { at: new Date(now.getTime() - 299_000) });
    expect(verifyWebhook({ secret, ...edge, now })).toEqual(verification);
  });

  it('a custom tolerance applies', () => {
    const now = new Date('2026-11-21T12:00:00Z');
    const tenMinutes = signed(verification, { at: new Date(now.getTime() - 600_000) });
    expect(verifyWebhook({ secret, ...tenMinutes, now, toleranceSeconds: 900 })).toEqual(
      verification,
    );
    const oneMinute = signed(verification, { at: new Date(now.getTime() - 60_000) });
    expect(reason(() => verifyWebhook({ secret, ...oneMinute, now, toleranceSeconds: 30 }))).toBe(
      'timestamp_too_old',
    );
  });

  it('during a secret rotation either of two signatures matches', () => {
    const { body, headers } = signed(verification, { secrets: [otherSecret, secret] });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifyWebhook({ secret, headers, body })).toEqual(verification);
    expect(verifyWebhook({ secret: otherSecret, headers, body })).toEqual(verification);
    const third = 'whsec_' + Buffer.from('a third secret, not used').toString('base64');
    expect(reason(() => verifyWebhook({ secret: third, headers, body }))).toBe('invalid_signature');
  });

  it('ignores signatures of other versions', () => {
    const { body, headers } = signed(verification);
    const v2 = headers['webhook-signature'].replace('v1,', 'v2,');
    expect(
      reason(() =>
        verifyWebhook({ secret, headers: { ...headers, 'webhook-signature': v2 }, body }),
      ),
    ).toBe('invalid_signature');
  });

  it('rejects missing headers and malformed timestamps', () => {
    const { body, headers } = signed(verification);
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const) {
      const partial: Record<string, string> = { ...headers };
      delete partial[name];
      expect(reason(() => verifyWebhook({ secret, headers: partial, body }))).toBe(
        'missing_headers',
      );
    }
    expect(
      reason(() =>
        verifyWebhook({ secret, headers: { ...headers, 'webhook-timestamp': '12abc' }, body }),
      ),
    ).toBe('invalid_timestamp');
  });

  it('rejects signed bodies that are not a known event', () => {
    expect(reason(() => verifyWebhook({ secret, ...signed({ event_type: 'user.deleted' }) }))).toBe(
      'unknown_event',
    );
    expect(reason(() => verifyWebhook({ secret, ...signed([1, 2]) }))).toBe('invalid_payload');
    const notJson = 'not json';
    const at = new Date();
    const headers = {
      'webhook-id': 'm',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign('m', at, notJson),
    };
    expect(reason(() => verifyWebhook({ secret, headers, body: notJson }))).toBe('invalid_payload');
  });

  it('a bad secret is a programming error (TypeError), not a verification failure', () => {
    const { body, headers } = signed(verification);
    expect(() => verifyWebhook({ secret: '', headers, body })).toThrow(TypeError);
  });
});
