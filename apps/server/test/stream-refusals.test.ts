import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DIALECT } from './support/database.js';
import { moveToPlan, orgPath, seedJobs } from './support/fixtures.js';
import { startStreamServer, type StreamServer } from './support/stream-server.js';

const UPGRADE_HEADERS = {
  Connection: 'Upgrade',
  Upgrade: 'websocket',
  'Sec-WebSocket-Version': '13',
  'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
};

/** RFC 9112: `HTTP-version SP status-code SP reason-phrase CRLF`; Python's websockets also wants the phrase. */
const STATUS_LINE = /^HTTP\/1\.1 (\d{3}) ([\t \x21-\x7e]+)\r\n/;

/** The refusal's first bytes as sent, read from a raw socket. */
function rawStatusLine(
  port: number,
  path: string,
  headers: Record<string, string>,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      const lines = [
        `GET ${path} HTTP/1.1`,
        `Host: 127.0.0.1:${port}`,
        ...Object.entries({ ...UPGRADE_HEADERS, ...headers }).map(([k, v]) => `${k}: ${v}`),
      ];
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('end', () => resolve(received.slice(0, received.indexOf('\r\n') + 2)));
    socket.on('error', reject);
  });
}

/** The refusal read by Node's own HTTP client, whose parser (llhttp) is strict unless told otherwise. */
function parsedRefusal(port: number, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; reason: string; headers: IncomingHttpHeaders; body: any }>(
    (resolve, reject) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        path,
        headers: { ...UPGRADE_HEADERS, ...headers },
        insecureHTTPParser: false,
      });
      req.on('upgrade', () => reject(new Error('the upgrade was accepted')));
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            reason: res.statusMessage!,
            headers: res.headers,
            body: JSON.parse(text),
          }),
        );
      });
      req.on('error', reject);
      req.end();
    },
  );
}

// Every answer before the upgrade is a complete HTTP response: status line with its reason phrase,
// Content-Type, Content-Length, Connection: close and the REST error body.
describe(`stream refusals are well-formed HTTP (${TEST_DIALECT})`, () => {
  let s: StreamServer;
  const streamPath = (orgId: number) => orgPath(orgId, '/verifications/stream');
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  beforeAll(async () => {
    s = await startStreamServer();
  });
  afterAll(async () => {
    expect(s.ctx.reportedErrors).toEqual([]);
    await s?.stop();
  });

  async function expectRefusal(
    path: string,
    headers: Record<string, string>,
    status: number,
    reason: string,
    error: string,
  ) {
    const line = await rawStatusLine(s.port, path, headers);
    expect(line).toMatch(STATUS_LINE);
    expect(line).toBe(`HTTP/1.1 ${status} ${reason}\r\n`);
    const res = await parsedRefusal(s.port, path, headers);
    expect(res.status).toBe(status);
    expect(res.reason).toBe(reason);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers.connection).toBe('close');
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(JSON.stringify(res.body)));
    expect(res.body).toMatchObject({ code: status, error });
    return res;
  }

  it('401 Unauthorized for a bad token', async () => {
    const res = await expectRefusal(
      streamPath(s.ctx.orgA.id),
      bearer('vk_live_notarealtoken0000000000000000'),
      401,
      'Unauthorized',
      'unauthorized',
    );
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it("403 Forbidden for another organisation's token", async () => {
    await expectRefusal(
      streamPath(s.ctx.orgA.id),
      bearer(s.ctx.orgB.token),
      403,
      'Forbidden',
      'forbidden',
    );
  });

  it('404 Not Found for an unknown path', async () => {
    await expectRefusal(
      orgPath(s.ctx.orgA.id, '/no-such-route'),
      bearer(s.ctx.orgA.token),
      404,
      'Not Found',
      'not_found',
    );
  });

  it('409 Conflict for an organisation without a callback URL', async () => {
    const org = await s.ctx.makeOrg('NoCallback');
    await expectRefusal(streamPath(org.id), bearer(org.token), 409, 'Conflict', 'no_callback_url');
  });

  it('429 Too Many Requests, with Retry-After, for an organisation over its quota', async () => {
    const org = await s.ctx.makeOrg('OverQuota');
    await s.ctx.request('PATCH', orgPath(org.id, '/settings'), {
      token: org.token,
      body: { org_id: org.id, settings: { callback_url: 'http://localhost:9/hook' } },
    });
    await moveToPlan(s.ctx, org.id, 'Sandbox');
    await seedJobs(s.ctx, 100, { org_id: org.id, kind: 'verification', status: 'completed' });
    const res = await expectRefusal(
      streamPath(org.id),
      bearer(org.token),
      429,
      'Too Many Requests',
      'quota_exceeded',
    );
    expect(res.headers['retry-after']).toBeDefined();
  });

  it('503 Service Unavailable once the server is shutting down', async () => {
    await s.ctx.deps.streams!.shutdown();
    await expectRefusal(
      streamPath(s.ctx.orgA.id),
      bearer(s.ctx.orgA.token),
      503,
      'Service Unavailable',
      'unavailable',
    );
  });
});
