import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  encryptionKeyBytes,
  isPlaceholderKey,
  loadConfig,
  productionProblems,
} from '../src/config.js';
import { insertDelivery } from '../src/repositories/webhooks.js';
import { coarseDeliveryError, postJson } from '../src/security/outbound-http.js';
import { createWebhookDispatcher } from '../src/workers/webhook-dispatcher.js';
import { createTestContext } from './support/context.js';
import { TEST_DIALECT } from './support/database.js';
import { seedJob } from './support/fixtures.js';

const BIN = fileURLToPath(new URL('../bin/voxkey.js', import.meta.url));
/** A key as `openssl rand -hex 32` makes one. */
const KEY = '3f9c1a7be4d2085f6a1c9e3b7d50f28a4c6e19b3d7f05a82e4c6b1d9f3a7e05c';

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('safe defaults', () => {
  it('development and test listen on 127.0.0.1 unless HOST is set', () => {
    expect(loadConfig({ NODE_ENV: 'development' }).HOST).toBe('127.0.0.1');
    expect(loadConfig({}).HOST).toBe('127.0.0.1');
    expect(loadConfig({ NODE_ENV: 'development', HOST: '0.0.0.0' }).HOST).toBe('0.0.0.0');
  });

  it('production refuses a missing encryption key, an unset HOST, and loopback/private callback URLs', () => {
    const problems = productionProblems(
      loadConfig({
        NODE_ENV: 'production',
        WEBHOOK_ALLOW_LOOPBACK: 'true',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      }),
    );
    expect(problems.join('\n')).toMatch(/VOXKEY_ENCRYPTION_KEY is required/);
    expect(problems.join('\n')).toMatch(/HOST must be set explicitly/);
    expect(problems.join('\n')).toMatch(/WEBHOOK_ALLOW_LOOPBACK=true is refused/);
    expect(problems.join('\n')).toMatch(/WEBHOOK_ALLOW_PRIVATE_NETWORKS=true is refused/);
    expect(
      productionProblems(
        loadConfig({ NODE_ENV: 'production', HOST: '0.0.0.0', VOXKEY_ENCRYPTION_KEY: KEY }),
      ),
    ).toEqual([]);
    expect(
      productionProblems(loadConfig({ NODE_ENV: 'development', WEBHOOK_ALLOW_LOOPBACK: 'true' })),
    ).toEqual([]);
  });

  it('VOXKEY_ENCRYPTION_KEY: 64 hex characters or base64 of 32 bytes (quotes and whitespace aside), else a configuration error; a placeholder is recognised', () => {
    const bytes = Buffer.from(KEY, 'hex');
    const base64 = bytes.toString('base64');
    for (const [key, normalised] of [
      [KEY, KEY],
      [base64, base64],
      [base64.slice(0, 43), base64.slice(0, 43)],
      [`${base64}=`, `${base64}=`],
      [bytes.toString('base64url'), bytes.toString('base64url')],
      [`"${KEY}"`, KEY],
      [`'${base64}'`, base64],
      [`${base64.slice(0, 20)}\n ${base64.slice(20)}`, base64],
    ]) {
      const config = loadConfig({ VOXKEY_ENCRYPTION_KEY: key });
      expect(config.VOXKEY_ENCRYPTION_KEY).toBe(normalised);
      expect(encryptionKeyBytes(config.VOXKEY_ENCRYPTION_KEY!)).toEqual(bytes);
    }
    for (const key of ['abcdef', `${KEY}0`, 'not a key at all, just a passphrase!!', `${base64}==`])
      expect(() => loadConfig({ VOXKEY_ENCRYPTION_KEY: key })).toThrow(
        /VOXKEY_ENCRYPTION_KEY: must be 32 bytes/,
      );
    expect(isPlaceholderKey(Buffer.alloc(32))).toBe(true);
    expect(isPlaceholderKey(Buffer.from('ab'.repeat(32), 'hex'))).toBe(true);
    expect(isPlaceholderKey(bytes)).toBe(false);
  });

  it('`voxkey serve` with NODE_ENV=production and an unset HOST exits 2 before opening anything', async () => {
    const env = {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      VOXKEY_ENCRYPTION_KEY: KEY,
      DATABASE_URL: 'sqlite::memory:',
    };
    const result = await promisify(execFile)(process.execPath, [BIN, 'serve'], {
      env,
      timeout: 20_000,
    }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /Refusing to start with NODE_ENV=production:\n\s+HOST must be set explicitly/,
    );
  });

  it('/metrics requires the METRICS_TOKEN bearer when one is set', async () => {
    const token = 'metrics-token-0123456789';
    const ctx = await createTestContext({ METRICS_TOKEN: token });
    try {
      expect((await ctx.app.request('/metrics')).status).toBe(401);
      expect(
        (
          await ctx.app.request('/metrics', {
            headers: { authorization: 'Bearer wrong-token-0123456789' },
          })
        ).status,
      ).toBe(401);
      const ok = await ctx.app.request('/metrics', {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('voxkey_http_requests_total');
    } finally {
      await ctx.cleanup();
    }
  });

  it('delivery errors: a precise coarse reason only for public peers', () => {
    expect(
      coarseDeliveryError(
        Object.assign(new Error('connect ECONNREFUSED 203.0.113.9:8080'), {
          code: 'ECONNREFUSED',
          address: '8.8.8.8',
        }),
        'hooks.example.com',
      ),
    ).toBe('connection_refused');
    expect(
      coarseDeliveryError(
        Object.assign(new Error('x'), { code: 'ECONNREFUSED', address: '10.1.2.3' }),
        'internal.example.com',
      ),
    ).toBe('unreachable');
    expect(
      coarseDeliveryError(Object.assign(new Error('x'), { code: 'ETIMEDOUT' }), '127.0.0.1'),
    ).toBe('unreachable');
    expect(
      coarseDeliveryError(Object.assign(new Error('x'), { code: 'ENOTFOUND' }), 'nowhere.invalid'),
    ).toBe('dns_failure');
    expect(
      coarseDeliveryError(
        Object.assign(new Error('x'), { code: 'CERT_HAS_EXPIRED', address: '8.8.4.4' }),
        'h',
      ),
    ).toBe('tls_error');
  });

  it(`the delivery log does not echo a local connection error (${TEST_DIALECT})`, async () => {
    const port = await closedPort();
    const raw = await postJson(
      `http://127.0.0.1:${port}/hook`,
      '{}',
      {},
      {
        timeoutMs: 2000,
        policy: { allowLoopback: true, allowPrivate: false, allowPlainHttpLocalhost: true },
      },
    );
    expect(raw.error).toMatch(/ECONNREFUSED/);
    expect(raw.reason).toBe('unreachable');

    const ctx = await createTestContext({ WEBHOOK_RETRY_SCHEDULE: '60' });
    try {
      await ctx.db
        .updateTable('organisation_settings')
        .set({ callback_url: `http://127.0.0.1:${port}/hook` })
        .where('org_id', '=', ctx.orgA.id)
        .execute();
      const job = await seedJob(ctx, { org_id: ctx.orgA.id, kind: 'enrollment' });
      await insertDelivery(ctx.db, {
        orgId: ctx.orgA.id,
        jobId: job.id,
        webhookId: `msg_${randomUUID()}`,
        eventType: 'enrollment.completed',
        requestUuid: job.request_uuid,
        payload: '{}',
      });
      const dispatcher = createWebhookDispatcher(ctx.deps);
      dispatcher.start();
      let listed: any[] = [];
      for (let i = 0; i < 50 && !listed[0]?.last_error; i++) {
        await new Promise((r) => setTimeout(r, 50));
        listed = (await ctx.request('GET', `/v1/organisations/${ctx.orgA.id}/webhook-deliveries`))
          .body.results;
      }
      await dispatcher.stop();
      expect(listed[0]).toMatchObject({
        status: 'pending',
        attempts: 1,
        last_error: 'unreachable',
      });
      expect(JSON.stringify(listed)).not.toContain(String(port));
    } finally {
      await ctx.cleanup();
    }
  });
});
