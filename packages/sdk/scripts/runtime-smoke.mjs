// Smoke test of the built SDK in another runtime: verify a webhook, map a network error. Used by check-runtimes.sh.
import { createVoxkeyClient, verifyWebhook, newRequestUuid, toVoiceData } from '@voxkey/sdk';
import { Webhook } from 'standardwebhooks';
const secret = 'whsec_' + btoa('0123456789abcdef0123456789abcdef');
const body = JSON.stringify({
  event_type: 'verification.completed',
  request_uuid: newRequestUuid(),
  external_id: 'x',
  result: 'verified',
  match_score: 0.9,
  deepfake_detected: false,
  latency_ms: 5,
  created_at: new Date().toISOString(),
});
const id = 'msg_1';
const ts = new Date();
const sig = new Webhook(secret).sign(id, ts, body);
const ev = await verifyWebhook({
  secret,
  headers: {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(ts / 1000)),
    'webhook-signature': sig,
  },
  body,
});
const client = createVoxkeyClient({
  baseUrl: 'http://127.0.0.1:9/v1',
  token: 'vk_live_x',
  orgId: 1,
  retries: 0,
});
let err;
try {
  await client.users.list();
} catch (e) {
  err = e;
}
console.log(
  `${globalThis.Bun ? 'bun' : globalThis.Deno ? 'deno' : 'node'} ok`,
  ev.event_type,
  toVoiceData(new Uint8Array([1, 2, 3])),
  err?.name,
  err?.kind,
);
