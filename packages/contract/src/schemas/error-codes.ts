/**
 * The machine-readable `error` of every error body, with the HTTP status it comes with.
 * Clients branch on these, never on the message text; a code, once published, keeps its meaning.
 */
export const ERROR_CODES = {
  validation_failed: {
    status: 400,
    meaning:
      'The request failed validation; `errors` has one entry per faulty field, each with its own `code`.',
  },
  unauthorized: {
    status: 401,
    meaning: 'The bearer token is missing, malformed, unknown, expired or disabled.',
  },
  forbidden: {
    status: 403,
    meaning:
      "The token may not act on this organisation (another organisation's id gets this whether or not it exists).",
  },
  user_inactive: { status: 403, meaning: 'The user is deactivated and cannot be verified.' },
  not_found: { status: 404, meaning: 'No such resource (or route) in this organisation.' },
  user_not_enrolled: {
    status: 404,
    meaning:
      'No enrolled user has this external_id, so there is nothing to verify against or add a recording to.',
  },
  challenge_not_found: {
    status: 404,
    meaning:
      "No challenge with this challenge_id in this organisation (an unknown id, a mistyped one and another organisation's all look the same).",
  },
  text_not_found: {
    status: 404,
    meaning: 'No predefined text with this text_id in this organisation.',
  },
  no_callback_url: {
    status: 409,
    meaning:
      "The organisation has no callback URL, so a voice request's result (or a test event) could not be delivered.",
  },
  already_enrolled: {
    status: 409,
    meaning:
      'This external_id is already enrolled; enrol with mode `add` or `replace`, or delete the user.',
  },
  voiceprint_full: {
    status: 409,
    meaning:
      'The voiceprint already holds the maximum number of recordings (10); enrol with mode `replace` to start again.',
  },
  enrollment_in_progress: {
    status: 409,
    meaning: 'An enrolment of this external_id is queued or processing.',
  },
  request_uuid_reused: {
    status: 409,
    meaning:
      'This request_uuid was already used for a different request (a replay with the same body is answered again instead).',
  },
  idempotency_key_reused: {
    status: 409,
    meaning:
      'This Idempotency-Key was already used in the last 24 hours with another request (a different body or operation); use a new key per request.',
  },
  idempotency_key_in_progress: {
    status: 409,
    meaning:
      'A request with this Idempotency-Key is still being processed; retry after `Retry-After` seconds to get its response.',
  },
  challenge_expired: {
    status: 409,
    meaning:
      "The challenge expired before a request used it (its lifetime is the organisation's `challenge_ttl_seconds`); create a new one.",
  },
  challenge_used: {
    status: 409,
    meaning:
      'The challenge was already used by another enrolment or verification; each challenge is used at most once, so create a new one.',
  },
  challenge_user_mismatch: {
    status: 409,
    meaning:
      'The challenge was created for another external_id; a challenge can only be used by the person it was created for.',
  },
  already_exists: {
    status: 409,
    meaning:
      'A predefined text with this (language, text_code) pair already exists in the organisation.',
  },
  payload_too_large: {
    status: 413,
    meaning: 'The request body is larger than the server accepts.',
  },
  unsupported_media_type: {
    status: 415,
    meaning: 'The request has a body that is not `application/json`.',
  },
  rate_limited: {
    status: 429,
    meaning:
      "The token's or organisation's request rate is exceeded; retry after `Retry-After` seconds.",
  },
  queue_full: {
    status: 429,
    meaning:
      'The voice processing queue is full, or this organisation has as many unfinished requests as it may; retry after `Retry-After` seconds.',
  },
  quota_exceeded: {
    status: 429,
    meaning:
      "A Sandbox organisation (any token), or a trial token on any plan, has used this month's sandbox quota; `Retry-After` points at the next month.",
  },
  internal_error: {
    status: 500,
    meaning: 'An unexpected server fault; the message never carries internals.',
  },
  unavailable: {
    status: 503,
    meaning: 'The server cannot do this now (e.g. voice processing without an installed model).',
  },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * Errors only a stream can have, beside the REST API's `ErrorCode`s (which a stream uses with the
 * same meaning); kept out of the REST list, as no route answers with them.
 */
export const STREAM_ERROR_CODES = {
  stream_protocol_error: {
    status: 400,
    meaning:
      'A message out of order (audio before `start`, a second `start`, an unknown message type, text that is not JSON) or audio bytes that are not the declared format.',
  },
  stream_timeout: {
    status: 408,
    meaning:
      'Nothing arrived for too long, the stream stayed open too long, or the client did not read what the server sent.',
  },
} as const satisfies Record<string, { status: number; meaning: string }>;
export type StreamErrorCode = keyof typeof STREAM_ERROR_CODES;

/** The one table the server renders every error from, REST and stream alike. */
export const SERVER_ERROR_CODES = { ...ERROR_CODES, ...STREAM_ERROR_CODES } as const;
export type ServerErrorCode = keyof typeof SERVER_ERROR_CODES;

/** The `code` of each entry of a 400's `errors[]`. */
export const FIELD_ERROR_CODES = {
  required: 'A required field is missing.',
  unknown_field: 'The object has a field the API does not know.',
  invalid_type:
    'The value has the wrong JSON type (e.g. a string for a number, a fraction for an integer).',
  invalid_value: 'The value is not one of those allowed.',
  invalid_format:
    'A string does not have the required format (pattern, date-time, email, URL, identifier).',
  invalid_uuid:
    "The value is not a UUID: a UUID v4 for an enrolment's `request_uuid` and a `challenge_id`; any RFC 9562 UUID (version 1 to 8, not the nil or max UUID) for a verification's `request_uuid`.",
  invalid_json: 'The body is not well-formed JSON.',
  too_short: 'A string or list is shorter than allowed (an empty required string included).',
  too_long: 'A string or list is longer than allowed.',
  out_of_range: 'A number (or identifier) is outside its allowed range.',
  invalid_filter:
    'A `filter` condition names an unknown field or operator, or a value of the wrong type.',
  invalid_sort: '`sort` names an unknown field or direction.',
  contains_nul: 'Text holds a NUL (U+0000) character.',
  too_deeply_nested: 'The body nests objects or arrays too deeply.',
  must_match_path: 'The body names another organisation than the path.',
  must_be_in_future: 'A date-time that must lie in the future does not.',
  too_many_errors:
    'The last entry of a list cut at 20 problems: its message says how many more were not listed (its `field` is empty).',
  outlives_creator:
    "A token would outlive the token that creates it: its `expires_at` is later than the creator's, or is omitted (never expires) while the creator expires (e.g. a trial token).",
  callback_url_not_allowed:
    'The callback URL is not allowed (not http(s), has credentials, cannot be resolved, or points at a forbidden address).',
  invalid_base64: '`voice_data` is not valid base64.',
  unsupported_audio_format: '`voice_data` is neither WAV nor MP3.',
  corrupt_audio: '`voice_data` is a WAV or MP3 whose header or frames cannot be read.',
  sample_rate_too_low: "The recording's sample rate is below 16 kHz.",
  audio_too_short: 'The recording is shorter than the minimum duration.',
  audio_too_long: 'The recording is longer than the maximum duration.',
  audio_too_large: 'The decoded recording is larger than the maximum file size.',
  unsupported_language:
    "The speech recogniser cannot check phrases in this language (a challenge's `language`, or the language of the predefined text named by `text_id`).",
  phrase_required:
    'The organisation requires a phrase on every verification (`require_phrase`): send `challenge_id` or `text_id`.',
  mutually_exclusive:
    'Two fields that exclude each other were both sent (`challenge_id` and `text_id`).',
} as const satisfies Record<string, string>;

export type FieldErrorCode = keyof typeof FIELD_ERROR_CODES;

export const errorCodeNames = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];
export const fieldErrorCodeNames = Object.keys(FIELD_ERROR_CODES) as [
  FieldErrorCode,
  ...FieldErrorCode[],
];
export const streamErrorCodeNames = Object.keys(STREAM_ERROR_CODES) as [
  StreamErrorCode,
  ...StreamErrorCode[],
];
