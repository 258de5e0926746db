export {
  createVoxkeyClient,
  unwrap,
  type AcceptedRequest,
  type CreateChallengeInput,
  type CreateEnrollmentInput,
  type CreatePredefinedTextInput,
  type CreateTokenInput,
  type CreateVerificationInput,
  type RequestOptions,
  type SettingsChanges,
  type UpdatePredefinedTextInput,
  type VoiceInput,
  type VoxkeyClient,
  type WaitForResultOptions,
  type VoxkeyClientOptions,
  type VoxkeyRawClient,
} from './client.js';
export {
  isVoxkeyError,
  parseRetryAfter,
  VoxkeyError,
  type VoxkeyErrorInit,
  type VoxkeyErrorKind,
} from './errors.js';
export { paginate, type ListParams, type Page } from './pagination.js';
export { isIdempotent, retryPolicy, type RetryPolicy } from './retry-policy.js';
export { backoffDelay, type RetryOptions, type VoxkeyLogger } from './transport.js';
export { SDK_VERSION } from './version.js';
export {
  STREAM_SUBPROTOCOL,
  type StreamVerificationInput,
  type VerificationStream,
  type WebSocketConstructor,
  type WebSocketLike,
} from './stream.js';
export { newRequestUuid, toVoiceData } from './voice.js';
export {
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  verifyWebhook,
  WebhookVerificationError,
  type VerifyWebhookOptions,
  type WebhookHeaders,
  type WebhookVerificationReason,
} from './webhooks.js';
export type * from './types.js';
