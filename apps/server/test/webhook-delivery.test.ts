import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callbackUrlProblem, classifyAddress } from '../src/security/callback-url.js';
import { postJson } from '../src/security/outbound-http.js';
import { nextDelayMs } from '../src/workers/webhook-dispatcher.js';
import { generateWebhookSecret, signatureHeaders } from '../src/security/webhook-secrets.js';

const strict = { allowLoopback: false, allowPrivate: false, allowPlainHttpLocalhost: false };
const local = { allowLoopback: true, allowPrivate: false, allowPlainHttpLocalhost: true };

describe('callback URL policy (SSRF guard)', () => {
  it('classifies addresses', () => {
    expect(classifyAddress('127.0.0.1')).toBe('loopback');
    expect(classifyAddress('::1')).toBe('loopback');
    expect(classifyAddress('::ffff:127.0.0.1')).toBe('loopback');
    for (const address of [
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      'fe80::1',
      'fd00::1',
      '0.0.0.0',
      '192.0.2.7',
      '198.51.100.7',
      '203.0.113.7',
      '2001:db8::7',
    ]) {
      expect(classifyAddress(address)).toBe('private');
    }
    expect(classifyAddress('93.184.216.34')).toBe('public');
    expect(classifyAddress('2606:4700::1111')).toBe('public');
  });

  it('refuses loopback, private and metadata addresses unless allowed', async () => {
    expect(await callbackUrlProblem('https://127.0.0.1/hook', strict)).toMatch(/loopback/);
    expect(await callbackUrlProblem('https://169.254.169.254/latest/meta-data', strict)).toMatch(
      /private/,
    );
    expect(await callbackUrlProblem('https://[fd00::1]/hook', strict)).toMatch(/private/);
    // an address refused whatever the scheme is named as such, not as a missing https
    expect(await callbackUrlProblem('http://localhost:3000/hook', strict)).toMatch(/loopback/);
    expect(await callbackUrlProblem('http://localhost:3000/hook', local)).toBeNull();
    expect(await callbackUrlProblem('http://10.0.0.1/hook', local)).toMatch(/private/);
    expect(
      await callbackUrlProblem('http://10.0.0.1/hook', { ...local, allowPrivate: true }),
    ).toMatch(/https/);
    expect(await callbackUrlProblem('http://93.184.216.34/hook', local)).toMatch(/https/);
    expect(await callbackUrlProblem('https://user:pw@example.com/hook', local)).toMatch(
      /credentials/,
    );
    expect(await callbackUrlProblem('ftp://example.com/x', local)).toMatch(/https|http/);
    expect(await callbackUrlProblem('https://does-not-exist.invalid/hook', local)).toMatch(
      /resolved/,
    );
  });
});

describe('webhook HTTP delivery', () => {
  let server: http.Server;
  let url: string;
  const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        if (req.url === '/slow') return setTimeout(() => res.end(), 2000);
        if (req.url === '/redirect') {
          res.statusCode = 302;
          res.setHeader('location', 'http://169.254.169.254/');
          return res.end();
        }
        res.statusCode = 204;
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://localhost:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('signs the exact bytes it sends, verifiably with the standardwebhooks package', async () => {
    const secret = generateWebhookSecret();
    const payload = JSON.stringify({ event_type: 'verification.completed', match_score: 0.91 });
    const headers = signatureHeaders([secret], 'msg_test', new Date(), payload);
    const result = await postJson(`${url}/hook`, payload, headers, {
      timeoutMs: 2000,
      policy: local,
    });
    expect(result).toEqual({ statusCode: 204, error: null });
    const last = received.at(-1)!;
    expect(last.body).toBe(payload);
    expect(new Webhook(secret).verify(last.body, last.headers as Record<string, string>)).toEqual(
      JSON.parse(payload),
    );
  });

  it('refuses to connect to a loopback host when the policy forbids it (checked at connect time)', async () => {
    const before = received.length;
    const result = await postJson(`${url}/hook`, '{}', {}, { timeoutMs: 2000, policy: strict });
    expect(result.statusCode).toBeNull();
    expect(result.error).toMatch(/forbidden/);
    expect(received.length).toBe(before);
  });

  it('times out, and never follows redirects', async () => {
    const slow = await postJson(`${url}/slow`, '{}', {}, { timeoutMs: 300, policy: local });
    expect(slow.statusCode).toBeNull();
    expect(slow.error).toMatch(/timed out/);
    const redirect = await postJson(
      `${url}/redirect`,
      '{}',
      {},
      { timeoutMs: 2000, policy: local },
    );
    expect(redirect.statusCode).toBe(302);
  });

  it('keeps the connection alive for the next webhook to the same receiver', async () => {
    let connections = 0;
    const counted = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end());
    });
    counted.on('connection', () => connections++);
    await new Promise<void>((resolve) => counted.listen(0, '127.0.0.1', resolve));
    const target = `http://localhost:${(counted.address() as AddressInfo).port}/hook`;
    try {
      for (let i = 0; i < 3; i++)
        expect(await postJson(target, '{}', {}, { timeoutMs: 2000, policy: local })).toEqual({
          statusCode: 200,
          error: null,
        });
      expect(connections).toBe(1);
      // Another policy never borrows that connection: its own is checked (and refused) at connect.
      expect((await postJson(target, '{}', {}, { timeoutMs: 2000, policy: strict })).error).toMatch(
        /forbidden/,
      );
      expect(connections).toBe(1);
    } finally {
      counted.closeAllConnections();
      await new Promise<void>((resolve) => counted.close(() => resolve()));
    }
  });

  it('sends once more on a new connection when the receiver closed the kept-alive one', async () => {
    const sockets = new Set<import('node:net').Socket>();
    let bodies = 0;
    const closing = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        bodies++;
        res.end();
      });
    });
    closing.keepAliveTimeout = 60_000;
    closing.on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
    const target = `http://localhost:${(closing.address() as AddressInfo).port}/hook`;
    try {
      expect(
        (await postJson(target, '{}', {}, { timeoutMs: 2000, policy: local })).statusCode,
      ).toBe(200);
      // The receiver drops its idle connection; the client has not seen it close yet.
      for (const socket of sockets) socket.destroy();
      const again = await postJson(target, '{}', {}, { timeoutMs: 2000, policy: local });
      expect(again).toEqual({ statusCode: 200, error: null });
      expect(bodies).toBe(2);
    } finally {
      closing.closeAllConnections();
      await new Promise<void>((resolve) => closing.close(() => resolve()));
    }
  });

  it('retries on the schedule with jitter, then gives up', () => {
    const schedule = [5000, 300_000];
    expect(nextDelayMs(schedule, 1, () => 0.5)).toBe(5000);
    expect(nextDelayMs(schedule, 1, () => 0)).toBe(4000);
    expect(nextDelayMs(schedule, 1, () => 1)).toBe(6000);
    expect(nextDelayMs(schedule, 2, () => 0.5)).toBe(300_000);
    expect(nextDelayMs(schedule, 3)).toBeNull();
  });
});
