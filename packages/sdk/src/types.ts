import type { components, operations, paths, webhooks } from './generated/openapi.js';

export type { components, operations, paths, webhooks };

type Schemas = components['schemas'];

/** Error body of every non-2xx response. */
export type ApiError = Schemas['Error'];
/** Error body of a 400 response: one entry per faulty field. */
export type ApiValidationError = Schemas['ValidationError'];
export type FieldError = Schemas['FieldError'];
/** Machine-readable reason of an error response (`error` of the body). */
export type ErrorCode = Schemas['ErrorCode'];
/** Machine-readable reason of one validation problem (`code` of an `errors[]` entry). */
export type FieldErrorCode = Schemas['FieldErrorCode'];

type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 429 | 500 | 503;
type ResponsesOf<Op extends keyof operations> = operations[Op]['responses'];
type ErrorOfResponse<R> = R extends { content: { 'application/json': { error: infer E } } }
  ? E
  : never;

/**
 * The `error` values one operation can answer with, from the contract:
 * `OperationErrorCode<'createEnrollment'>` is `'validation_failed' | 'unauthorized' | ... | 'already_enrolled' | ...`.
 */
export type OperationErrorCode<Op extends keyof operations> = {
  [S in keyof ResponsesOf<Op>]: S extends ErrorStatus ? ErrorOfResponse<ResponsesOf<Op>[S]> : never;
}[keyof ResponsesOf<Op>] &
  ErrorCode;

export type ApiToken = Schemas['ApiToken'];
export type CreatedApiToken = Schemas['CreatedApiToken'];
export type CreateApiTokenRequest = Schemas['CreateApiTokenRequest'];
export type UpdateApiTokenRequest = Schemas['UpdateApiTokenRequest'];
export type Organisation = Schemas['Organisation'];
export type UpdateOrganisationRequest = Schemas['UpdateOrganisationRequest'];
export type OrganisationSettings = Schemas['OrganisationSettings'];
export type SettingsValues = Schemas['SettingsValues'];
export type UpdateSettingsRequest = Schemas['UpdateSettingsRequest'];
export type User = Schemas['User'];
export type UpdateUserRequest = Schemas['UpdateUserRequest'];
export type Device = Schemas['Device'];
export type PredefinedText = Schemas['PredefinedText'];
export type CreatePredefinedTextRequest = Schemas['CreatePredefinedTextRequest'];
export type UpdatePredefinedTextRequest = Schemas['UpdatePredefinedTextRequest'];
export type Plan = Schemas['Plan'];
export type Subscription = Schemas['Subscription'];
export type Invoice = Schemas['Invoice'];
export type Accepted = Schemas['Accepted'];
export type EnrollmentRequest = Schemas['EnrollmentRequest'];
/** A one-time phrase to show a person (`challenges.create`): send its `challenge_id` with their recording. */
export type Challenge = Schemas['Challenge'];
export type CreateChallengeRequest = Schemas['CreateChallengeRequest'];
/** Whether a recording says the phrase its request named (`phrase` of the results; null when none was named). */
export type PhraseCheck = Schemas['PhraseCheck'];
export type VerificationRequest = Schemas['VerificationRequest'];
/** `new` (default), `add` (one more recording of an enrolled voiceprint), `replace` (a fresh voiceprint). */
export type EnrollmentMode = Schemas['EnrollmentMode'];
/** What the engine sees in a recording (`audioChecks.create`). */
export type AudioCheck = Schemas['AudioCheck'];
export type AudioCheckRequest = Schemas['AudioCheckRequest'];
/** One reason a recording would fail enrolment or verification, with a stable `code`. */
export type AudioProblem = Schemas['AudioProblem'];
/** The ids of the speaker and spoof models that processed a recording. */
export type Models = Schemas['Models'];
/**
 * An enrolment or verification request and its outcome. `result` is null until a verification
 * completes and always null for enrolments (the generated type loses the null: the contract
 * declares it as `allOf` of the enum and a nullable string).
 */
export type RequestRecord = Omit<Schemas['RequestRecord'], 'result'> & {
  result: Schemas['VerificationResult'] | null;
};
export type JobStatus = Schemas['JobStatus'];
export type VerificationResult = Schemas['VerificationResult'];
export type WebhookSecret = Schemas['WebhookSecret'];
export type WebhookDelivery = Schemas['WebhookDelivery'];

/** Payload of the `verification.completed` webhook. */
export type VerificationCompletedEvent = Schemas['VerificationCompletedEvent'];
/** Payload of the `enrollment.completed` webhook. */
export type EnrollmentCompletedEvent = Schemas['EnrollmentCompletedEvent'];
/** Payload of the `webhook.test` event (`client.webhooks.sendTest()`); carries no user or voice data. */
export type WebhookTestEvent = Schemas['WebhookTestEvent'];
/** Every webhook event Voxkey sends; narrow on `event_type`. */
export type VoxkeyEvent = VerificationCompletedEvent | EnrollmentCompletedEvent | WebhookTestEvent;
export type VoxkeyEventType = VoxkeyEvent['event_type'];

/** Why a voice request did not end in a decision on the voice, or why an enrolment failed (`failure_reason`). */
export type FailureReason = Schemas['FailureReason'];

/** The audio format a verification stream declares in its `start` message. */
export type StreamAudioFormat = Schemas['StreamAudioFormat'];
/** The first message of a verification stream. */
export type StreamStartMessage = Schemas['StreamStartMessage'];
/** Sent at least once a second while a stream's audio arrives. */
export type StreamProgressMessage = Schemas['StreamProgressMessage'];
/** The `verification.completed` webhook payload, sent on the stream as its final message. */
export type StreamResultMessage = Schemas['StreamResultMessage'];
/** A stream's error: the REST API's error body plus `type`; the server then closes the stream. */
export type StreamErrorMessage = Schemas['StreamErrorMessage'];
/** Every message the server sends on a verification stream; narrow on `type`. */
export type StreamMessage = Schemas['StreamServerMessage'];

/** An identifier accepted in a path: the numeric id as a number or a string. */
export type Id = number | string;
