import { z } from '../zod.js';
import { VerificationRequestSchema } from './voice.js';

/**
 * Real-time verification over WebSocket (`GET /organisations/{org_id}/verifications/stream`).
 * OpenAPI cannot describe the frames, so the messages are defined here and described in prose in
 * the document's description (STREAM_PROTOCOL_DESCRIPTION) and in docs/decisions.md.
 */
export const STREAM_SUBPROTOCOL = 'voxkey.v1';
/** Prefix of the subprotocol entry that carries the token for clients that cannot set headers (browsers). */
export const STREAM_BEARER_PREFIX = 'bearer.';
export const STREAM_PATH = '/organisations/{org_id}/verifications/stream';

export const STREAM_AUDIO_FORMATS = ['pcm_s16le', 'wav', 'mp3', 'opus'] as const;
export const StreamAudioFormatSchema = z.enum(STREAM_AUDIO_FORMATS);

/** The first message: the fields of `POST .../verifications` without `voice_data`, plus the audio's format. */
export const StreamStartSchema = VerificationRequestSchema.omit({ voice_data: true }).extend({
  type: z.literal('start'),
  format: StreamAudioFormatSchema,
  /** Samples per second of `pcm_s16le` audio (mono). Other formats carry their own rate; it is checked from the audio. */
  sample_rate: z.number().int().min(1).max(192_000).default(16_000),
});
export type StreamStart = z.infer<typeof StreamStartSchema>;

export const StreamEndSchema = z.strictObject({ type: z.literal('end') });

/**
 * Errors only a stream can have, beside the REST API's `ErrorCode`s (which a stream uses with the
 * same meaning). Each comes with the HTTP status its close code is derived from.
 */
export const STREAM_ERROR_CODES = {
  stream_protocol_error: {
    status: 400,
    meaning: 'A message out of order (audio before `start`, a second `start`, an unknown message type, text that is not JSON) or audio bytes that are not the declared format.',
  },
  stream_timeout: { status: 408, meaning: 'Nothing arrived for too long, the stream stayed open too long, or the client did not read what the server sent.' },
} as const satisfies Record<string, { status: number; meaning: string }>;
export type StreamErrorCode = keyof typeof STREAM_ERROR_CODES;

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
  '- **Authentication** before the upgrade completes: `Authorization: Bearer <token>`, or for browsers the subprotocol list `Sec-WebSocket-Protocol: voxkey.v1, bearer.<token>` (the server answers `voxkey.v1`; the header wins when both are present). A bad token, another organisation, a rate-limited or over-quota organisation, or too many open streams is refused with the REST API\'s HTTP status and JSON error body, before any frame is read.',
  '- **First message** (text): `{"type":"start","external_id":"...","request_uuid":"<uuid v4>","format":"pcm_s16le"|"wav"|"mp3"|"opus","sample_rate":16000,"language"?,"device_fingerprint"?,"device_type"?}` — validated like `POST .../verifications` (same field errors, `user_not_enrolled`, `user_inactive`, `request_uuid_reused`...). `pcm_s16le` is mono 16-bit little-endian at `sample_rate` (16000 to 48000); `wav`, `mp3` and `opus` (Ogg Opus) are sent as the bytes of a file, in any split.',
  '- **Then binary messages** of audio (each at most 64 KiB), and optionally `{"type":"end"}` when the caller stops speaking.',
  '- **Server messages** (text, JSON): `{"type":"progress","received_s","net_speech_s"}` at least once a second while audio arrives; `{"type":"result","final":true, ...}` with exactly the fields of the `verification.completed` webhook, once the engine is confident (a probe every 1.5 s of new audio once there are 3 s of speech, deciding when the match score is at least 0.1 away from the threshold) or after `end`; then the server closes with 1000. A stream that ends with too little speech is `inconclusive`, as a short recording is.',
  '- **Errors**: `{"type":"error","code":<http status>,"error":"<code>","message":"...","errors"?:[...]}`, then a close with code 4000 + that status (4400, 4403, 4404, 4408, 4409, 4413, 4429, 4503). Stream-only codes: `stream_protocol_error` (400: audio before `start`, a second `start`, unknown message, non-audio bytes) and `stream_timeout` (408: idle 10 s, open over 120 s, or not reading). Over 60 s or 10 MB of audio is `audio_too_long` / `payload_too_large`. A server shutting down finishes each stream\'s decision on the audio so far and closes with 1001.',
].join('\n');
