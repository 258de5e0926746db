export {
  createVoxkeyClient,
  unwrap,
  type AcceptedRequest,
  type CreateEnrollmentInput,
  type CreatePredefinedTextInput,
  type CreateTokenInput,
  type CreateVerificationInput,
  type RequestOptions,
  type SettingsChanges,
  type UpdatePredefinedTextInput,
  type VoiceInput,
  type VoxkeyClient,
  type VoxkeyClientOptions,
  type VoxkeyRawClient,
} from './client.js';
export { isVoxkeyError, parseRetryAfter, VoxkeyError, type VoxkeyErrorInit, type VoxkeyErrorKind } from './errors.js';
export { paginate, type ListParams, type Page } from './pagination.js';
export { backoffDelay, isIdempotent, type RetryOptions } from './transport.js';
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
