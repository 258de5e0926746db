import { z } from '../zod.js';
import { codeTable, ErrorCodeSchema, FieldErrorSchema } from './common.js';
import { STREAM_ERROR_CODES, streamErrorCodeNames } from './error-codes.js';
import { VerificationCompletedEventSchema, VerificationRequestSchema } from './voice.js';

/**
 * Real-time verification over WebSocket (`GET /organisations/{org_id}/verifications/stream`).
 * OpenAPI has no operation for the frames: the messages are components of the document
 * (STREAM_MESSAGE_SCHEMAS), and the protocol is described in prose in the document's description
 * (STREAM_PROTOCOL_DESCRIPTION) and in docs/decisions.md.
 */
export const STREAM_SUBPROTOCOL = 'voxkey.v1';
/** Prefix of the subprotocol entry that carries the token for clients that cannot set headers (browsers). */
export const STREAM_BEARER_PREFIX = 'bearer.';
export const STREAM_PATH = '/organisations/{org_id}/verifications/stream';

export const STREAM_AUDIO_FORMATS = ['pcm_s16le', 'wav', 'mp3', 'opus'] as const;
export const StreamAudioFormatSchema = z.enum(STREAM_AUDIO_FORMATS).openapi('StreamAudioFormat', {
  description:
    '`pcm_s16le`: mono 16-bit little-endian samples at `sample_rate`; `wav`, `mp3` and `opus` (Ogg Opus): the bytes of a file, in any split.',
});
export type StreamAudioFormat = z.infer<typeof StreamAudioFormatSchema>;

/** The first message: the fields of `POST .../verifications` without `voice_data`, plus the audio's format. */
export const StreamStartSchema = VerificationRequestSchema.omit({ voice_data: true })
  .extend({
    type: z.literal('start'),
    format: StreamAudioFormatSchema,
    sample_rate: z.number().int().min(1).max(192_000).default(16_000).openapi({
      description:
        'Samples per second of `pcm_s16le` audio (mono). Other formats carry their own rate; it is checked from the audio.',
    }),
  })
  .openapi('StreamStartMessage', {
    description:
      "Verification stream, client to server, first text message: the fields of `POST .../verifications` without `voice_data`, plus the audio's format.",
  });
export type StreamStart = z.infer<typeof StreamStartSchema>;

export const StreamEndSchema = z
  .strictObject({ type: z.literal('end') })
  .openapi('StreamEndMessage', {
    description:
      'Verification stream, client to server, optional: the caller stopped speaking; the server decides on the audio so far.',
  });

export const StreamProgressMessageSchema = z
  .object({
    type: z.literal('progress'),
    received_s: z.number().min(0).openapi({ description: 'Seconds of audio received.' }),
    net_speech_s: z
      .number()
      .min(0)
      .openapi({ description: 'Seconds of speech in it, as measured so far.' }),
  })
  .openapi('StreamProgressMessage', {
    description:
      'Verification stream, server to client: sent at least once a second while audio arrives.',
  });

export const StreamResultMessageSchema = VerificationCompletedEventSchema.extend({
  type: z.literal('result'),
  final: z.literal(true),
}).openapi('StreamResultMessage', {
  description:
    'Verification stream, server to client, last message: exactly the fields of the `verification.completed` webhook, plus `type` and `final`; the server then closes with 1000.',
});

export type StreamResultMessage = z.infer<typeof StreamResultMessageSchema>;

export const StreamErrorCodeSchema = z.enum(streamErrorCodeNames).openapi('StreamErrorCode', {
  description: `The error codes only a stream can have, beside \`ErrorCode\` (which a stream uses with the same meaning).\n\n${codeTable(
    streamErrorCodeNames.map((code) => [
      code,
      `(${STREAM_ERROR_CODES[code].status}) ${STREAM_ERROR_CODES[code].meaning}`,
    ]),
  )}`,
});

export const StreamErrorMessageSchema = z
  .object({
    type: z.literal('error'),
    code: z.number().int().openapi({
      description: 'The HTTP status of `error`; the close code that follows is 4000 + it.',
      example: 400,
    }),
    error: z.union([ErrorCodeSchema, StreamErrorCodeSchema]),
    message: z.string(),
    errors: z.array(FieldErrorSchema).optional().openapi({
      description: 'With `validation_failed`: one entry per faulty field of the `start` message.',
    }),
  })
  .openapi('StreamErrorMessage', {
    description:
      "Verification stream, server to client: the REST API's error body plus `type`; the server then closes with 4000 + `code`.",
  });

export const StreamServerMessageSchema = z
  .discriminatedUnion('type', [
    StreamProgressMessageSchema,
    StreamResultMessageSchema,
    StreamErrorMessageSchema,
  ])
  .openapi('StreamServerMessage', {
    description: 'Every text message the server sends on a verification stream.',
  });
export type StreamServerMessage = z.infer<typeof StreamServerMessageSchema>;

/** The stream's messages, which no route references: registered as components of the document by name. */
export const STREAM_MESSAGE_SCHEMAS = {
  StreamStartMessage: StreamStartSchema,
  StreamEndMessage: StreamEndSchema,
  StreamServerMessage: StreamServerMessageSchema,
};

/** WebSocket close codes. An error closes with 4000 + the HTTP status of its `error` code (4400, 4404, 4429, ...). */
export const STREAM_CLOSE_CODES = {
  /** The `result` was sent. */
  normal: 1000,
  /** The server is shutting down (after sending the `result` of a stream that had audio). */
  goingAway: 1001,
  /** A message larger than the server's hard limit (ws closes before reading it). */
  messageTooBig: 1009,
  /** An unexpected server fault. */
  internalError: 1011,
  /** Base of the error close codes: 4000 + HTTP status. */
  errorBase: 4000,
} as const;

export const streamCloseCodeFor = (status: number): number => STREAM_CLOSE_CODES.errorBase + status;

export const STREAM_PROTOCOL_DESCRIPTION = [
  '## Real-time verification (WebSocket)',
  '',
  '`GET /v1/organisations/{org_id}/verifications/stream` upgraded to a WebSocket verifies a caller while they speak; the finished verification is an ordinary request record (`GET .../verifications/{request_uuid}`), billed like a posted one, and fires the same signed `verification.completed` webhook.',
  '',
  "- **Authentication** before the upgrade completes: `Authorization: Bearer <token>`, or for browsers the subprotocol list `Sec-WebSocket-Protocol: voxkey.v1, bearer.<token>` (the server answers `voxkey.v1`; the header wins when both are present). A bad token, another organisation, a rate-limited or over-quota organisation, or too many open streams is refused with the REST API's HTTP status and JSON error body, before any frame is read.",
  '- **First message** (text): `{"type":"start","external_id":"...","request_uuid":"<uuid>","format":"pcm_s16le"|"wav"|"mp3"|"opus","sample_rate":16000,"language"?,"device_fingerprint"?,"device_type"?,"challenge_id"?,"text_id"?}` — validated like `POST .../verifications` (same field errors, `user_not_enrolled`, `user_inactive`, `request_uuid_reused`, the challenge codes...). A `challenge_id` is checked and consumed at `start` (so it cannot expire while the person speaks; a stream that then fails or is abandoned has used it up). `pcm_s16le` is mono 16-bit little-endian at `sample_rate` (16000 to 48000); `wav`, `mp3` and `opus` (Ogg Opus) are sent as the bytes of a file, in any split.',
  '- **Then binary messages** of audio (each at most 64 KiB), and optionally `{"type":"end"}` when the caller stops speaking.',
  '- **Server messages** (text, JSON): `{"type":"progress","received_s","net_speech_s"}` at least once a second while audio arrives; `{"type":"result","final":true, ...}` with exactly the fields of the `verification.completed` webhook, once the engine is confident (a probe every 1.5 s of new audio once there are 3 s of speech, deciding when the match score is at least 0.1 away from the threshold) or after `end` (a stream that names a phrase always decides after `end`, so the whole phrase is heard); then the server closes with 1000. A stream that ends with too little speech is `inconclusive`, as a short recording is.',
  '- **Errors**: `{"type":"error","code":<http status>,"error":"<code>","message":"...","errors"?:[...]}`, then a close with code 4000 + that status (4400, 4403, 4404, 4408, 4409, 4413, 4429, 4503). Stream-only codes: `stream_protocol_error` (400: audio before `start`, a second `start`, unknown message, non-audio bytes) and `stream_timeout` (408: idle 10 s, open over 120 s, or not reading). Over 60 s or 10 MB of audio is `audio_too_long` / `payload_too_large`. A server shutting down finishes each stream\'s decision on the audio so far and closes with 1001.',
].join('\n');
