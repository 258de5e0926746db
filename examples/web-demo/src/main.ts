/**
 * Starts the web demo: `npm start -w @voxkey/example-web-demo` (see README.md).
 *
 *   VOXKEY_URL             the Voxkey server, e.g. http://localhost:8080 (with or without /v1)
 *   VOXKEY_TOKEN           an API token of the organisation
 *   VOXKEY_ORG_ID          the organisation id
 *   VOXKEY_WEBHOOK_SECRET  the organisation's webhook signing secret (whsec_...)
 *   PORT, HOST             where the demo listens (default 3000, 127.0.0.1)
 *   PUBLIC_URL             how Voxkey reaches this demo (default http://127.0.0.1:<port>); on start the
 *                          organisation's callback URL is set to <PUBLIC_URL>/webhooks
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createVoxkeyClient, type WebSocketConstructor } from '@voxkey/sdk';
import { WebSocket, WebSocketServer } from 'ws';
import { createDemoApp } from './app.js';

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`Missing environment variable ${name} (see examples/web-demo/README.md)`);
    process.exit(2);
  }
  return value;
}

const apiUrl = required('VOXKEY_URL').replace(/\/+$/, '');
const voxkey = createVoxkeyClient({
  baseUrl: apiUrl.endsWith('/v1') ? apiUrl : `${apiUrl}/v1`,
  token: required('VOXKEY_TOKEN'),
  orgId: Number(required('VOXKEY_ORG_ID')),
  // For verifications.stream: Node < 22 has no global WebSocket.
  WebSocket: WebSocket as unknown as WebSocketConstructor,
});
const app = createDemoApp({ voxkey, webhookSecret: required('VOXKEY_WEBHOOK_SECRET') });

const host = process.env.HOST ?? '127.0.0.1';
// The page's verification streams (GET /api/verify-stream): audio chunks of 0.25 s, far below 64 KiB.
const sockets = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
const server = serve(
  {
    fetch: app.fetch,
    port: Number(process.env.PORT ?? 3000),
    hostname: host,
    websocket: { server: sockets },
  },
  async (info: AddressInfo) => {
    const local = `http://${host}:${info.port}`;
    const callbackUrl = `${(process.env.PUBLIC_URL ?? local).replace(/\/+$/, '')}/webhooks`;
    try {
      await voxkey.settings.update({ callback_url: callbackUrl });
    } catch (error) {
      console.error(
        `Could not set the organisation's callback URL to ${callbackUrl}:`,
        error instanceof Error ? error.message : error,
      );
      process.exit(1);
    }
    console.log(`Voxkey webhooks go to ${callbackUrl}`);
    console.log(`Web demo listening on ${local}`);
  },
);

server.once('error', (error: NodeJS.ErrnoException) => {
  const port = process.env.PORT ?? '3000';
  console.error(
    error.code === 'EADDRINUSE'
      ? `Port ${port} is already in use on ${host}: stop what uses it or set PORT to a free port`
      : `Could not listen on ${host}:${port}: ${error.message}`,
  );
  process.exit(2);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    if ('closeAllConnections' in server) server.closeAllConnections(); // open SSE streams too
    for (const socket of sockets.clients) socket.terminate(); // and verification streams
  });
}
