import type {
  EnrollmentModeSchema,
  FailureReason,
  JobStatusSchema,
  RequestRecordSchema,
  VerificationResultSchema,
  WebhookDeliverySchema,
} from '@voxkey/contract';
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { z } from 'zod';

// The enumerations the contract publishes are taken from it; the others are declared here, once.
export type TokenKind = 'live' | 'trial';
export type EnrollmentMode = z.infer<typeof EnrollmentModeSchema>;
export type JobKind = z.infer<typeof RequestRecordSchema>['kind'];
export type JobStatus = z.infer<typeof JobStatusSchema>;
export type VerificationResult = z.infer<typeof VerificationResultSchema>;
export type { FailureReason };
export type DeliveryStatus = z.infer<typeof WebhookDeliverySchema>['status'];
export type WebhookEventType = z.infer<typeof WebhookDeliverySchema>['event_type'];

/** ISO 8601 UTC timestamps are stored as text in both dialects, so they sort and compare the same everywhere. */
type Timestamp = string;
/** Booleans are stored as 0/1 integers in both dialects (better-sqlite3 cannot bind booleans). */
type Flag = number;

export interface OrganisationsTable {
  id: Generated<number>;
  name: string;
  address: string | null;
  email: string;
  phone_number: string | null;
  vat: string | null;
  vies: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface OrganisationSettingsTable {
  id: Generated<number>;
  org_id: number;
  alert_on_failure: Flag;
  callback_url: string | null;
  last_failure_alert_at: Timestamp | null;
  /** null: the server's MATCH_THRESHOLD. */
  match_threshold: number | null;
  /** null: the spoof model's default. */
  deepfake_threshold: number | null;
  /** Enrolments' deepfake gate; null = the spoof model's enrolment default. */
  enrollment_deepfake_threshold: number | null;
  reject_deepfake_enrollments: ColumnType<Flag, Flag | undefined, Flag>;
  /** Verifications must name a phrase, and one not matched is rejected (issue 32). */
  require_phrase: ColumnType<Flag, Flag | undefined, Flag>;
  /** Lifetime of new challenges. */
  challenge_ttl_seconds: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ApiTokensTable {
  id: Generated<number>;
  org_id: number;
  friendly_name: string;
  token_hash: string;
  kind: TokenKind;
  enabled: Flag;
  expires_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PlansTable {
  id: Generated<number>;
  name: string;
  monthly_calls_included: number;
  overage_rate_gbp: number;
  trial_days: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SubscriptionsTable {
  id: Generated<number>;
  org_id: number;
  plan_id: number;
  start_date: string;
  end_date: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface InvoicesTable {
  id: Generated<number>;
  org_id: number;
  sub_id: number;
  invoice_sequence: number;
  period: string;
  monthly_verifications: number;
  overage_calls: number;
  amount_gbp: number;
  file_ref: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface UsersTable {
  id: Generated<number>;
  org_id: number;
  external_id: string;
  is_active: Flag;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface DevicesTable {
  id: Generated<number>;
  org_id: number;
  user_id: number;
  fingerprint: string;
  type: number;
  last_used: Timestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PredefinedTextsTable {
  id: Generated<number>;
  org_id: number;
  language: string;
  text_code: number;
  text: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface JobsTable {
  id: Generated<number>;
  org_id: number;
  kind: JobKind;
  request_uuid: string;
  body_hash: string;
  external_id: string;
  language: string;
  device_fingerprint: string | null;
  device_type: number | null;
  status: JobStatus;
  attempts: number;
  run_after: Timestamp;
  lease_owner: string | null;
  lease_expires_at: Timestamp | null;
  user_id: number | null;
  result: VerificationResult | null;
  match_score: number | null;
  deepfake_detected: Flag | null;
  quality_score: number | null;
  failure_reason: FailureReason | null;
  device_mismatch: Flag | null;
  latency_ms: number | null;
  completed_at: Timestamp | null;
  /** Personal data erased (user deleted or retention passed); the row is kept for metering and GETs answer 404. */
  erased_at: Generated<Timestamp | null>;
  /** Enrolments only. */
  mode: EnrollmentMode | null;
  samples: number | null;
  deepfake_score: number | null;
  match_threshold: number | null;
  deepfake_threshold: number | null;
  speaker_model: string | null;
  spoof_model: string | null;
  /** Verifications: whether the verification gave the voiceprint a sample of the default speaker model. */
  voiceprint_upgraded: Flag | null;
  /** The recording's measured quality (the engine's RecordingQuality as JSON); null when not analysed. */
  recording_quality: string | null;
  /** The challenge the request consumed, or the predefined text it named (at most one of the two). */
  challenge_id: ColumnType<string | null, string | null | undefined, string | null>;
  text_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** The phrase the recording must say and how the recogniser decodes it; null when none was named. */
  phrase_expected: ColumnType<string | null, string | null | undefined, string | null>;
  phrase_vocabulary: ColumnType<
    PhraseVocabulary | null,
    PhraseVocabulary | null | undefined,
    PhraseVocabulary | null
  >;
  /** What the recogniser heard, once completed (erased with the request's personal data). */
  phrase_transcript: ColumnType<string | null, string | null | undefined, string | null>;
  phrase_match_score: ColumnType<number | null, number | null | undefined, number | null>;
  phrase_matched: ColumnType<Flag | null, Flag | null | undefined, Flag | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** How the recogniser decodes a phrase: a digit challenge, or any sentence (a predefined text). */
export type PhraseVocabulary = 'digits' | 'free';

/** A one-time phrase (issue 32): bound to its organisation and external_id, used at most once. */
export interface ChallengesTable {
  /** Random UUID v4: the public, unguessable challenge_id. */
  id: string;
  org_id: number;
  external_id: string;
  text: string;
  vocabulary: PhraseVocabulary;
  language: string;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  /** The request_uuid of the enrolment or verification that used it. */
  used_by_request: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface VoiceprintsTable {
  id: Generated<number>;
  org_id: number;
  user_id: number;
  /**
   * The speaker model the voiceprint was enrolled with; after an upgrade to a new default model
   * (once its older samples are dropped), that model. Each sample records its own model.
   */
  model_id: string;
  enrolment_fingerprint: string | null;
  /** Mean quality of the samples. */
  quality_score: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface VoiceprintSamplesTable {
  id: Generated<number>;
  org_id: number;
  user_id: number;
  voiceprint_id: number;
  model_id: string;
  /** AES-256-GCM sealed Float32 embedding of one enrolment recording. */
  sealed_embedding: string;
  /** Which associated data sealed it (see security/voiceprints.ts). */
  seal_version: number;
  quality_score: number | null;
  /** The enrolment recording's measured quality (the engine's RecordingQuality as JSON); null for samples stored before issue 31. */
  recording_quality: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookSecretsTable {
  id: Generated<number>;
  org_id: number;
  sealed_secret: string;
  /** null for the current secret; a rotated-out secret keeps signing until then. */
  expires_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  org_id: number;
  /** null for a `webhook.test` event, which belongs to no job. */
  job_id: number | null;
  webhook_id: string;
  event_type: WebhookEventType;
  request_uuid: string;
  /** The exact JSON bytes that are signed and sent on every attempt. */
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Timestamp | null;
  lease_owner: string | null;
  lease_expires_at: Timestamp | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface IdempotencyKeysTable {
  id: Generated<number>;
  org_id: number;
  idempotency_key: string;
  /** sha256 of method, path and body: the same key with another request is refused. */
  request_fingerprint: string;
  status: 'in_progress' | 'completed';
  response_status: number | null;
  /** The first response's body, sealed (it may hold a bearer token or a webhook secret). */
  sealed_response: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface RateLimitBucketsTable {
  key: string;
  tokens: number;
  refilled_at_ms: number;
  /** 1 when the last take succeeded. */
  allowed: number;
}

/** When each organisation last had a job / a delivery claimed, for round-robin claim order. */
export interface QueueTurnsTable {
  org_id: number;
  job_claimed_at: Timestamp | null;
  delivery_claimed_at: Timestamp | null;
}

/** A job's recording, kept only until the job ends (its own table, so updates of the job row stay small). */
export interface JobRecordingsTable {
  job_id: number;
  /** The recording's file bytes (WAV or MP3), sealed (security/recordings.ts). */
  audio: Uint8Array;
  /** JSON of the request-side header check (the engine's AudioInfo), so the worker does not check again. */
  audio_info: string | null;
}

export interface DB {
  organisations: OrganisationsTable;
  organisation_settings: OrganisationSettingsTable;
  api_tokens: ApiTokensTable;
  plans: PlansTable;
  subscriptions: SubscriptionsTable;
  invoices: InvoicesTable;
  users: UsersTable;
  devices: DevicesTable;
  predefined_texts: PredefinedTextsTable;
  jobs: JobsTable;
  job_recordings: JobRecordingsTable;
  voiceprints: VoiceprintsTable;
  voiceprint_samples: VoiceprintSamplesTable;
  webhook_secrets: WebhookSecretsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  rate_limit_buckets: RateLimitBucketsTable;
  queue_turns: QueueTurnsTable;
  idempotency_keys: IdempotencyKeysTable;
  challenges: ChallengesTable;
}

export type OrganisationRow = Selectable<OrganisationsTable>;
export type SettingsRow = Selectable<OrganisationSettingsTable>;
export type ApiTokenRow = Selectable<ApiTokensTable>;
export type PlanRow = Selectable<PlansTable>;
export type SubscriptionRow = Selectable<SubscriptionsTable>;
export type InvoiceRow = Selectable<InvoicesTable>;
export type UserRow = Selectable<UsersTable>;
export type DeviceRow = Selectable<DevicesTable>;
export type PredefinedTextRow = Selectable<PredefinedTextsTable>;
export type JobRow = Selectable<JobsTable>;
export type VoiceprintRow = Selectable<VoiceprintsTable>;
export type VoiceprintSampleRow = Selectable<VoiceprintSamplesTable>;
export type WebhookSecretRow = Selectable<WebhookSecretsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>;
export type ChallengeRow = Selectable<ChallengesTable>;
export type NewOrganisation = Insertable<OrganisationsTable>;
export type OrganisationUpdate = Updateable<OrganisationsTable>;
export type { ColumnType };
