import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  rawBody: string;
  body: any;
  receivedAt: number;
}

/**
 * A local receiver that records every call; `respond` decides the status code per call
 * (e.g. fail the first attempts to exercise retries).
 */
export async function startWebhookReceiver(
  respond: (call: ReceivedWebhook, index: number) => number = () => 200,
) {
  const calls: ReceivedWebhook[] = [];
  const waiters: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const call: ReceivedWebhook = {
        id: String(req.headers['webhook-id']),
        timestamp: String(req.headers['webhook-timestamp']),
        signature: String(req.headers['webhook-signature']),
        rawBody,
        body: JSON.parse(rawBody),
        receivedAt: Date.now(),
      };
      calls.push(call);
      res.statusCode = respond(call, calls.length - 1);
      res.end();
      for (const wake of waiters.splice(0)) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  async function waitFor(
    predicate: (calls: ReceivedWebhook[]) => boolean,
    timeoutMs = 30_000,
  ): Promise<ReceivedWebhook[]> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(calls)) {
      if (Date.now() > deadline)
        throw new Error(
          `timed out waiting for webhooks; got ${calls.length}: ${JSON.stringify(calls.map((c) => c.body))}`,
        );
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
    return calls;
  }

  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    calls,
    waitFor,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Standard Webhooks verification written out by hand, independent of the server's library. */
export function signatureIsValid(secret: string, call: ReceivedWebhook): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key)
    .update(`${call.id}.${call.timestamp}.${call.rawBody}`)
    .digest();
  return call.signature.split(' ').some((part) => {
    const [version, value] = part.split(',');
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
