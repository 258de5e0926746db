import { VoxkeyError } from './errors.js';
import type {
  ErrorCode,
  StreamAudioFormat,
  StreamErrorMessage,
  StreamMessage,
  StreamResultMessage,
  StreamStartMessage,
} from './types.js';
import { newRequestUuid } from './voice.js';

/** The subprotocol of verification streams; the token travels as a second entry, `bearer.<token>`. */
export const STREAM_SUBPROTOCOL = 'voxkey.v1';

/** A standard WebSocket constructor: `globalThis.WebSocket` (browsers, Node 22+) or `ws`'s. */
export type WebSocketConstructor = new (
  url: string,
  protocols?: string | string[],
) => WebSocketLike;

/** The part of the standard WebSocket API a stream uses. */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: string | ArrayBufferLike | ArrayBufferView): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: string, listener: (event: any) => void): void;
}

/** The `start` message's fields a caller gives; the SDK fills in `type` and the defaults. */
export type StreamVerificationInput = Omit<
  StreamStartMessage,
  'type' | 'request_uuid' | 'format'
> & {
  /** Generated when omitted. A stream cannot be replayed: a used request_uuid is refused (409). */
  request_uuid?: string;
  /** Default `pcm_s16le` (mono, 16-bit little-endian). `wav`, `mp3` and `opus` (Ogg) are the bytes of a file, in any split. */
  format?: StreamAudioFormat;
};

/**
 * A live verification: `send` audio chunks, `end()` when the caller stops speaking, iterate the
 * server's messages (`progress`, then `result`), or await the stream itself for the result. Errors
 * (a refused start, a protocol error, a dropped connection) reject with a VoxkeyError.
 */
export interface VerificationStream
  extends AsyncIterable<StreamMessage>, PromiseLike<StreamResultMessage> {
  readonly request_uuid: string;
  /** Resolves with the `result` message; rejects with a VoxkeyError. */
  readonly result: Promise<StreamResultMessage>;
  /** Queues an audio chunk (sent once the stream is open; dropped once a result is in). */
  send(chunk: ArrayBuffer | ArrayBufferView): void;
  /** Tells the server the caller has finished: it decides on the audio so far. */
  end(): void;
  /** Abandons the stream (no verification is recorded unless the decision had started). */
  close(): void;
}

export interface StreamConnection {
  /** `ws://.../v1/organisations/{org_id}/verifications/stream` */
  url: string;
  token: () => Promise<string>;
  WebSocket: WebSocketConstructor | undefined;
}

const OPEN = 1;

function streamError(
  message: string,
  init: Partial<StreamErrorMessage> = {},
  cause?: unknown,
): VoxkeyError {
  return new VoxkeyError({
    kind: init.code ? 'http' : 'network',
    status: init.code ?? 0,
    code: init.code ?? 0,
    error: init.error as ErrorCode | undefined,
    message,
    errors: init.errors,
    body: init.code ? init : undefined,
    cause,
  });
}

/** Opens a verification stream (see VerificationStream). */
export function openVerificationStream(
  connection: StreamConnection,
  input: StreamVerificationInput,
): VerificationStream {
  const Ctor =
    connection.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (!Ctor)
    throw new TypeError(
      'verifications.stream needs a WebSocket: pass WebSocket (e.g. from the "ws" package) to createVoxkeyClient() on Node < 22',
    );
  const request_uuid = input.request_uuid ?? newRequestUuid();
  const start: StreamStartMessage = {
    type: 'start',
    external_id: input.external_id,
    request_uuid,
    format: input.format ?? 'pcm_s16le',
    sample_rate: input.sample_rate ?? 16000,
    ...(input.language !== undefined ? { language: input.language } : {}),
    ...(input.device_fingerprint !== undefined
      ? { device_fingerprint: input.device_fingerprint }
      : {}),
    ...(input.device_type !== undefined ? { device_type: input.device_type } : {}),
    ...(input.challenge_id !== undefined ? { challenge_id: input.challenge_id } : {}),
    ...(input.text_id !== undefined ? { text_id: input.text_id } : {}),
  };

  const messages: StreamMessage[] = [];
  const waiters: Array<() => void> = [];
  const pending: Array<ArrayBuffer | ArrayBufferView | string> = [];
  let socket: WebSocketLike | undefined;
  let finished = false;
  let failure: VoxkeyError | undefined;
  let settleResult!: { resolve: (m: StreamResultMessage) => void; reject: (e: unknown) => void };
  const result = new Promise<StreamResultMessage>(
    (resolve, reject) => (settleResult = { resolve, reject }),
  );
  // An unawaited stream must not report an unhandled rejection; the iterator and `result` still see it.
  result.catch(() => {});
  let gotResult = false;
  let closedByUs = false;

  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  const finish = (error?: VoxkeyError) => {
    if (finished) return;
    finished = true;
    if (error && !gotResult) {
      failure = error;
      settleResult.reject(error);
    }
    wake();
  };
  const transmit = (data: ArrayBuffer | ArrayBufferView | string) => {
    if (socket && socket.readyState === OPEN) socket.send(data as string);
    else pending.push(data);
  };

  void connection
    .token()
    .then((token) => {
      if (closedByUs) return;
      const ws = new Ctor(connection.url, [STREAM_SUBPROTOCOL, `bearer.${token}`]);
      ws.binaryType = 'arraybuffer';
      socket = ws;
      ws.addEventListener('open', () => {
        ws.send(JSON.stringify(start));
        for (const data of pending.splice(0)) ws.send(data as string);
      });
      ws.addEventListener('message', (event: { data: unknown }) => {
        if (typeof event.data !== 'string') return;
        let message: StreamMessage;
        try {
          message = JSON.parse(event.data) as StreamMessage;
        } catch {
          return;
        }
        messages.push(message);
        if (message.type === 'result') {
          gotResult = true;
          settleResult.resolve(message);
        } else if (message.type === 'error') {
          failure = streamError(message.message, message);
          settleResult.reject(failure);
        }
        wake();
      });
      ws.addEventListener('close', (event: { code: number; reason?: string }) => {
        if (gotResult || failure) return finish();
        if (closedByUs) return finish(streamError('The stream was closed before a result'));
        // A refused upgrade (bad token, rate limit...) reaches a WebSocket as a bare close (1006) without the HTTP status.
        finish(
          streamError(
            `The verification stream closed without a result (close code ${event.code}${event.reason ? `: ${event.reason}` : ''}); a refused connection (token, rate limit, quota) shows as 1006`,
          ),
        );
      });
      ws.addEventListener('error', () => {
        // The close event follows with the code.
      });
    })
    .catch((err: unknown) =>
      finish(streamError('Could not open the verification stream', {}, err)),
    );

  async function* iterate(): AsyncGenerator<StreamMessage, void, undefined> {
    let index = 0;
    for (;;) {
      while (index < messages.length) {
        const message = messages[index++]!;
        yield message;
        if (message.type === 'result') return;
        if (message.type === 'error') throw failure;
      }
      if (finished) {
        if (failure && !gotResult) throw failure;
        return;
      }
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  }

  return {
    request_uuid,
    result,
    send(chunk) {
      if (finished || gotResult) return;
      transmit(chunk);
    },
    end() {
      if (finished || gotResult) return;
      transmit(JSON.stringify({ type: 'end' }));
    },
    close() {
      closedByUs = true;
      socket?.close(1000);
      if (!socket) finish(streamError('The stream was closed before a result'));
    },
    [Symbol.asyncIterator]: iterate,
    then(onFulfilled, onRejected) {
      return result.then(onFulfilled, onRejected);
    },
  };
}

/** `http(s)://host/v1` + path -> `ws(s)://host/v1/path`. */
export function webSocketUrl(baseUrl: string, path: string): string {
  const url = new URL(
    baseUrl.replace(/\/+$/, '') + path,
    typeof location === 'undefined' ? undefined : location.href,
  );
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}
