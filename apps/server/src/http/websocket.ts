import { type IncomingMessage, type Server, STATUS_CODES } from 'node:http';
import type { ServerType } from '@hono/node-server';
import type { Duplex } from 'node:stream';
import { STREAM_SUBPROTOCOL } from '@voxkey/contract';
import { type WebSocket, WebSocketServer } from 'ws';

/**
 * What the app's route hands back for an upgrade it accepts: `accept` once the WebSocket is open,
 * `release` when it never opens (the client left during the handshake).
 */
export interface UpgradeSlot {
  accept?: (ws: WebSocket) => void;
  release?: () => void;
}

/** The env an upgrade request runs the app with (node-server passes `incoming` the same way). */
export interface UpgradeEnv {
  incoming: IncomingMessage;
  websocket: UpgradeSlot;
}

type FetchApp = { fetch: (request: Request, env: UpgradeEnv) => Response | Promise<Response> };

/** Messages larger than this are cut off by ws itself (1009); the stream's own frame limit is lower and answered with an error message. */
const HARD_MAX_PAYLOAD = 1024 * 1024;

function toRequest(incoming: IncomingMessage): Request {
  const headers = new Headers();
  for (const [key, value] of Object.entries(incoming.headers)) {
    if (value === undefined) continue;
    headers.set(key, Array.isArray(value) ? value.join(', ') : value);
  }
  return new Request(
    new URL(incoming.url ?? '/', `http://${incoming.headers.host ?? 'localhost'}`),
    { headers },
  );
}

/** A refusal written on the raw socket: the app's status, headers and JSON body, as the REST API answers. */
async function refuse(socket: Duplex, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  // The status line needs a reason phrase: strict clients (Python's websockets) reject `HTTP/1.1 401` alone.
  const reason = response.statusText || STATUS_CODES[response.status] || 'Error';
  const lines = [`HTTP/1.1 ${response.status} ${reason}`];
  response.headers.forEach((value, key) => {
    if (!['connection', 'content-length', 'transfer-encoding'].includes(key))
      lines.push(`${key}: ${value}`);
  });
  lines.push('Connection: close', `Content-Length: ${body.length}`);
  if (!socket.destroyed)
    socket.end(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]));
}

/**
 * Runs every WebSocket upgrade through the app (token, rate limit, organisation, the route's own
 * checks) before the handshake completes; only a route that fills `websocket.accept` gets a socket.
 */
export function attachWebSockets(
  server: ServerType,
  app: FetchApp,
  onError: (err: unknown) => void,
) {
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: HARD_MAX_PAYLOAD,
    // Never echo the bearer entry: the server speaks voxkey.v1 or nothing.
    handleProtocols: (protocols) =>
      protocols.has(STREAM_SUBPROTOCOL) ? STREAM_SUBPROTOCOL : false,
  });
  (server as Server).on('upgrade', (incoming: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => {});
    const slot: UpgradeSlot = {};
    void (async () => {
      let response: Response;
      try {
        response = await app.fetch(toRequest(incoming), { incoming, websocket: slot });
      } catch (err) {
        onError(err);
        slot.release?.();
        socket.destroy();
        return;
      }
      if (!slot.accept || !response.ok || socket.destroyed) {
        slot.release?.();
        await refuse(socket, response);
        return;
      }
      const accept = slot.accept;
      wss.handleUpgrade(incoming, socket, head, (ws) => accept(ws));
    })();
  });
  return wss;
}
