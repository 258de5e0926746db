import type { components, operations, paths, webhooks } from './generated/openapi.js';

export type { components, operations, paths, webhooks };

type Schemas = components['schemas'];

/** Error body of every non-2xx response. */
export type ApiError = Schemas['Error'];
/** Error body of a 400 response: one entry per faulty field. */
export type ApiValidationError = Schemas['ValidationError'];
export type FieldError = Schemas['FieldError'];

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
export type VerificationRequest = Schemas['VerificationRequest'];
/**
 * An enrolment or verification request and its outcome. `result` is null until a verification
 * completes and always null for enrolments (the generated type loses the null: the contract
 * declares it as `allOf` of the enum and a nullable string).
 */
export type RequestRecord = Omit<Schemas['RequestRecord'], 'result'> & { result: Schemas['VerificationResult'] | null };
export type JobStatus = Schemas['JobStatus'];
export type VerificationResult = Schemas['VerificationResult'];
export type WebhookSecret = Schemas['WebhookSecret'];
export type WebhookDelivery = Schemas['WebhookDelivery'];

/** Payload of the `verification.completed` webhook. */
export type VerificationCompletedEvent = Schemas['VerificationCompletedEvent'];
/** Payload of the `enrollment.completed` webhook. */
export type EnrollmentCompletedEvent = Schemas['EnrollmentCompletedEvent'];
/** Every webhook event Voxkey sends; narrow on `event_type`. */
export type VoxkeyEvent = VerificationCompletedEvent | EnrollmentCompletedEvent;
export type VoxkeyEventType = VoxkeyEvent['event_type'];

/** An identifier accepted in a path: the numeric id as a number or a string. */
export type Id = number | string;
