import { StreamStartSchema, STREAM_SUBPROTOCOL } from '@voxkey/contract';
import type { Handler } from 'hono';
import type { WebSocket } from 'ws';
import type { ZodError } from 'zod';
import { ApiError } from '../../errors.js';
import { toFieldErrors } from '../../http/field-errors.js';
import type { AppEnv } from '../../http/types.js';
import type { UpgradeEnv } from '../../http/websocket.js';

export const VERIFICATION_STREAM_PATH = '/organisations/:org_id/verifications/stream';

/** The `start` message, validated like the body of POST .../verifications (same field errors). */
function parseStart(message: unknown) {
  const parsed = StreamStartSchema.safeParse(message);
  if (!parsed.success)
    throw ApiError.validation(
      toFieldErrors(parsed.error as ZodError, 'json'),
      'The start message failed validation',
    );
  return parsed.data;
}

const asBytes = (data: WebSocket.RawData): Uint8Array =>
  Array.isArray(data)
    ? Buffer.concat(data)
    : data instanceof ArrayBuffer
      ? new Uint8Array(data)
      : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);

/**
 * `GET /v1/organisations/{org_id}/verifications/stream`: runs after the token, rate-limit and
 * organisation middleware like every API route, admits the stream, and hands the socket to it once
 * the upgrade completes. Anything but a WebSocket upgrade is a 400.
 */
export const openVerificationStream: Handler<AppEnv & { Bindings: Partial<UpgradeEnv> }> = async (
  c,
) => {
  const slot = c.env?.websocket;
  if (!slot || c.req.header('upgrade')?.toLowerCase() !== 'websocket') {
    throw ApiError.field(
      'Upgrade',
      'invalid_value',
      'This endpoint only takes WebSocket upgrades (Upgrade: websocket); see the API reference, "Real-time verification"',
    );
  }
  const protocols = c.req.header('sec-websocket-protocol');
  if (protocols && !protocols.split(',').some((p) => p.trim() === STREAM_SUBPROTOCOL)) {
    throw ApiError.field(
      'Sec-WebSocket-Protocol',
      'invalid_value',
      `The subprotocol list must include ${STREAM_SUBPROTOCOL}`,
    );
  }
  const streams = c.get('deps').streams;
  if (!streams) throw new ApiError('unavailable', 'This server does not take verification streams');
  const ticket = await streams.admit(c.get('auth'));
  slot.release = () => ticket.release();
  slot.accept = (ws) => {
    const stream = ticket.open(
      {
        send: (text) => ws.send(text),
        close: (code) => ws.close(code),
        terminate: () => ws.terminate(),
        get bufferedAmount() {
          return ws.bufferedAmount;
        },
      },
      parseStart,
    );
    ws.on('message', (data, isBinary) =>
      isBinary
        ? stream.receiveBinary(asBytes(data))
        : stream.receiveText(Buffer.from(asBytes(data)).toString('utf8')),
    );
    ws.on('close', () => stream.socketClosed());
    ws.on('error', () => stream.socketClosed());
  };
  return c.body(null, 200);
};
