/**
 * The SDK against the real server (apps/server), started as a child process on a free port with
 * a fresh SQLite database (test/support/voxkey-server.ts), without engine workers. Needs the server
 * built (`npm run build` in the root; the root `npm test` builds first). Skipped with a notice when
 * apps/server/dist is missing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVoxkeyClient, toVoiceData, VoxkeyError, type VoxkeyClient } from '../src/index.js';
import { encodeWav } from '../src/wav.js';
import {
  freePort,
  serverBuiltFor,
  startVoxkeyServer,
  type VoxkeyServer,
} from './support/voxkey-server.js';

/** A 16 kHz mono 16-bit WAV of a voiced, syllable-like harmonic tone. */
function syntheticVoiceWav(seconds: number): Uint8Array {
  const rate = 16000;
  const samples = new Float32Array(rate * seconds).map((_, i) => {
    const t = i / rate;
    const f0 = 120 + 20 * Math.sin(2 * Math.PI * 0.5 * t);
    const envelope = 0.5 + 0.5 * Math.sin(2 * Math.PI * 4 * t);
    let s = 0;
    for (let h = 1; h <= 10; h++) s += Math.sin(2 * Math.PI * f0 * h * t) / h;
    return 0.3 * envelope * s;
  });
  return encodeWav(samples, rate);
}

/** The server's token is a trial token: what it creates must expire no later than itself. */
const inADay = () => new Date(Date.now() + 86_400_000).toISOString();

const SERVER_BUILT = serverBuiltFor(import.meta.url, 'against the real server');

describe.skipIf(!SERVER_BUILT)('against the real server', () => {
  let server: VoxkeyServer;
  let baseUrl: string;
  let token: string;
  let orgId: number;
  let vk: VoxkeyClient;

  beforeAll(async () => {
    // Only non-voice routes here: no engine workers, no rate limiter.
    server = await startVoxkeyServer(
      'SDK Test',
      { RUN_WORKERS: 'false' },
      { email: 'sdk@example.com' },
    );
    ({ baseUrl, token, orgId } = server);
    vk = createVoxkeyClient({ baseUrl, token, orgId });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('reads the organisation, its settings and plans', async () => {
    const org = await vk.organisation.get();
    expect(org).toMatchObject({ id: orgId, name: 'SDK Test', email: 'sdk@example.com' });
    const settings = await vk.settings.update({ alert_on_failure: true });
    expect(settings.settings.alert_on_failure).toBe(true);
    expect((await vk.settings.get()).settings.alert_on_failure).toBe(true);
    const plans = await vk.plans.list({ perPage: 2 });
    expect(plans.results.length).toBeGreaterThan(0);
    expect(plans.totalPages).toBeGreaterThanOrEqual(1);
    const all = [];
    for await (const plan of vk.plans.iterate({ perPage: 1 })) all.push(plan);
    expect(all).toHaveLength(plans.totalCount!);
    expect((await vk.plans.get(all[0]!.id)).details.name).toBe(all[0]!.details.name);
  });

  it('predefined texts: create, conflict (409), list, iterate, get, update, delete, 404', async () => {
    const created = [];
    for (let code = 1; code <= 5; code++) {
      created.push(
        await vk.predefinedTexts.create({
          language: 'en-UK',
          text_code: code,
          text: `Prompt ${code}`,
        }),
      );
    }
    expect(created[0]).toMatchObject({
      org_id: orgId,
      language: 'en-UK',
      text_code: 1,
      text: 'Prompt 1',
    });

    const conflict = await vk.predefinedTexts
      .create({ language: 'en-UK', text_code: 1, text: 'again' })
      .catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(VoxkeyError);
    expect(conflict).toMatchObject({ status: 409, code: 409 });

    const page = await vk.predefinedTexts.list({ perPage: 2, sort: 'id:asc' });
    expect(page).toMatchObject({ page: 1, totalPages: 3, totalCount: 5 });
    expect(page.results.map((t) => t.text_code)).toEqual([1, 2]);
    const codes = [];
    for await (const t of vk.predefinedTexts.iterate({ perPage: 2, sort: 'id:asc' }))
      codes.push(t.text_code);
    expect(codes).toEqual([1, 2, 3, 4, 5]);

    const first = created[0]!;
    expect(await vk.predefinedTexts.get(first.id)).toEqual(first);
    const updated = await vk.predefinedTexts.update(first.id, { text: 'Say your name' });
    expect(updated.text).toBe('Say your name');
    expect((await vk.predefinedTexts.delete(first.id)).id).toBe(first.id);
    await expect(vk.predefinedTexts.get(first.id)).rejects.toMatchObject({
      kind: 'http',
      status: 404,
    });
  });

  it('users list is paginated (empty organisation) and users.get answers 404', async () => {
    const page = await vk.users.list({ filter: 'is_active=true', perPage: 10 });
    expect(page).toMatchObject({ results: [], page: 1, totalPages: 0, totalCount: 0 });
    const seen = [];
    for await (const u of vk.users.iterate()) seen.push(u);
    expect(seen).toEqual([]);
    await expect(vk.users.get(999)).rejects.toMatchObject({ status: 404 });
  });

  it('subscriptions and invoices: listed (the sign-up subscription, no invoices yet), then read by id', async () => {
    const subs = await vk.subscriptions.list();
    expect(subs).toMatchObject({ page: 1, totalPages: 1, totalCount: 1 });
    expect(subs.results[0]).toMatchObject({ org_id: orgId, end_date: null });
    expect(await vk.subscriptions.get(subs.results[0]!.id)).toEqual(subs.results[0]);
    const iterated = [];
    for await (const s of vk.subscriptions.iterate({ sort: 'id:desc' })) iterated.push(s);
    expect(iterated).toEqual(subs.results);
    const invoices = await vk.invoices.list({ filter: `sub_id=${subs.results[0]!.id}` });
    expect(invoices).toMatchObject({ results: [], page: 1, totalPages: 0, totalCount: 0 });
    const seen = [];
    for await (const i of vk.invoices.iterate()) seen.push(i);
    expect(seen).toEqual([]);
    const elsewhere = createVoxkeyClient({ baseUrl, token, orgId: orgId + 1000 });
    await expect(elsewhere.invoices.list()).rejects.toMatchObject({ status: 403 });
  });

  it('tokens: create, list, disable (then 401), delete', async () => {
    const created = await vk.tokens.create({ friendly_name: 'sdk-it', expires_at: inADay() });
    expect(created.bearer).toMatch(/^vk_/);
    const ids = [];
    for await (const t of vk.tokens.iterate()) ids.push(t.id);
    expect(ids).toContain(created.token.id);
    const second = createVoxkeyClient({ baseUrl, token: created.bearer, orgId });
    expect((await second.organisation.get()).id).toBe(orgId);
    expect((await vk.tokens.update(created.token.id, { enabled: false })).enabled).toBe(false);
    const unauthorised = (await second.organisation.get().catch((e: unknown) => e)) as VoxkeyError;
    expect(unauthorised).toMatchObject({ kind: 'http', status: 401, code: 401 });
    expect(unauthorised.message).toMatch(/credentials|token/i);
    expect((await vk.tokens.delete(created.token.id)).id).toBe(created.token.id);
  });

  it('maps 400 validation errors and 403 for another organisation', async () => {
    const invalid = (await vk.predefinedTexts
      .list({ perPage: 1000 })
      .catch((e: unknown) => e)) as VoxkeyError;
    expect(invalid).toBeInstanceOf(VoxkeyError);
    expect(invalid.status).toBe(400);
    expect(invalid.errors.length).toBeGreaterThan(0);
    expect(invalid.errors[0]).toHaveProperty('field');
    const other = createVoxkeyClient({ baseUrl, token, orgId: orgId + 1000 });
    await expect(other.organisation.get()).rejects.toMatchObject({ status: 403 });
  });

  it('enrolment is idempotent by request_uuid: a retry with the same body is accepted again', async (ctx) => {
    await vk.settings.update({ callback_url: 'http://127.0.0.1:9/voxkey-webhook' });
    const voice_data = toVoiceData(syntheticVoiceWav(5));
    const first = await vk.enrollments
      .create({ external_id: 'customer-42', voice_data })
      .catch((error: unknown) => {
        // A server built before the voice routes existed answers 404 for the route itself.
        if (VoxkeyError.is(error) && error.status === 404)
          ctx.skip('this server build has no enrolment route');
        throw error;
      });
    const again = await vk.enrollments.create({
      external_id: 'customer-42',
      voice_data,
      request_uuid: first.request_uuid,
    });
    expect(again.request_uuid).toBe(first.request_uuid);
    const record = await vk.enrollments.get(first.request_uuid);
    expect(record).toMatchObject({
      request_uuid: first.request_uuid,
      kind: 'enrollment',
      external_id: 'customer-42',
    });
    // No workers run here: the request stays queued, so waiting for it ends in a timeout that names the last status.
    const waited = (await vk.enrollments
      .waitForResult(first.request_uuid, { timeoutMs: 300, intervalMs: 100 })
      .catch((e: unknown) => e)) as VoxkeyError;
    expect(waited).toMatchObject({ kind: 'timeout' });
    expect(waited.message).toMatch(/last status: queued/);
    const reused = await vk.enrollments
      .create({ external_id: 'customer-43', voice_data, request_uuid: first.request_uuid })
      .catch((e: unknown) => e);
    expect(reused).toMatchObject({ kind: 'http', status: 409 });
    const tooShort = (await vk.verifications
      .create({ external_id: 'customer-42', voice_data: toVoiceData(syntheticVoiceWav(1)) })
      .catch((e: unknown) => e)) as VoxkeyError;
    expect(tooShort).toMatchObject({ status: 400 });
    expect(tooShort.errors.map((e) => e.field)).toContain('voice_data');
  });

  it('the POSTs with an Idempotency-Key, a User-Agent and a logger work against the server', async () => {
    const lines: string[] = [];
    const logged = createVoxkeyClient({
      baseUrl,
      token,
      orgId,
      logger: { debug: (message) => lines.push(message) },
    });
    const created = await logged.tokens.create({
      friendly_name: 'idempotency-key',
      expires_at: inADay(),
    });
    const secret = await logged.webhooks.rotateSecret();
    expect(secret.secret).toMatch(/^whsec_/);
    await logged.tokens.delete(created.token.id);
    expect(lines).toHaveLength(3);
    expect(lines.join('\n')).not.toContain(token);
    expect(lines.join('\n')).not.toContain(created.bearer);
  });

  it('the server replays a keyed POST sent twice with one Idempotency-Key (same bearer), and refuses the key for another body', async () => {
    const vk = createVoxkeyClient({ baseUrl, token, orgId });
    const headers = { 'Idempotency-Key': `sdk-integration-${Date.now()}` };
    const expires_at = inADay();
    const first = await vk.tokens.create({ friendly_name: 'replayed', expires_at }, { headers });
    const again = await vk.tokens.create({ friendly_name: 'replayed', expires_at }, { headers });
    expect(again).toEqual(first);
    const other = await vk.tokens
      .create({ friendly_name: 'another body', expires_at }, { headers })
      .catch((error: unknown) => error);
    expect(other).toBeInstanceOf(VoxkeyError);
    expect(other).toMatchObject({ status: 409, error: 'idempotency_key_reused' });
    await vk.tokens.delete(first.token.id);
  });

  it('webhooks.sendTest queues a webhook.test delivery listed in the log; without a callback URL it is a typed 409 no_callback_url', async () => {
    const vk = createVoxkeyClient({ baseUrl, token, orgId });
    await vk.settings.update({ callback_url: 'http://127.0.0.1:9/voxkey-webhook' });
    const delivery = await vk.webhooks.sendTest();
    expect(delivery).toMatchObject({ event_type: 'webhook.test', status: 'pending' });
    const listed = await vk.webhooks.listDeliveries({ filter: 'event_type=webhook.test' });
    expect(listed.results.map((d) => d.id)).toContain(delivery.id);
    await vk.settings.update({ callback_url: null });
    await expect(vk.webhooks.sendTest()).rejects.toMatchObject({
      status: 409,
      error: 'no_callback_url',
    });
    await vk.settings.update({ callback_url: 'http://127.0.0.1:9/voxkey-webhook' });
  });

  it('a bad token gets 401; a closed port gets kind "network"', async () => {
    const bad = createVoxkeyClient({ baseUrl, token: 'vk_live_nope', orgId });
    await expect(bad.organisation.get()).rejects.toMatchObject({ status: 401 });
    const closed = createVoxkeyClient({
      baseUrl: `http://127.0.0.1:${await freePort()}/v1`,
      token,
      orgId,
      retries: { retries: 1, baseDelayMs: 1 },
    });
    await expect(closed.plans.list()).rejects.toMatchObject({ kind: 'network', status: 0 });
  });
});
