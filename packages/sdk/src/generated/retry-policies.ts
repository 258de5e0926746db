/**
 * Generated from the `x-voxkey-retry` extension of each operation in openapi/openapi.json. Do not
 * edit by hand: run `npm -w @voxkey/sdk run generate` after the contract changes.
 *
 * - `safe`: repeating the request has no further effect; retried.
 * - `idempotency-key`: retried with the same `Idempotency-Key` header, which the SDK adds.
 * - `never`: not retried after a lost answer or a gateway error (a 429 is, as the server did no work).
 */

/* eslint-disable */
export type RetryPolicy = 'safe' | 'idempotency-key' | 'never';

/** `METHOD /path/{template}` (without the base path) to its retry policy. */
export const retryPolicies: Readonly<Record<string, RetryPolicy>> = {
  'POST /organisations/{org_id}/api-tokens': 'idempotency-key',
  'GET /organisations/{org_id}/api-tokens': 'safe',
  'PATCH /organisations/{org_id}/api-tokens/{token_id}': 'never',
  'DELETE /organisations/{org_id}/api-tokens/{token_id}': 'safe',
  'GET /organisations/{org_id}': 'safe',
  'PATCH /organisations/{org_id}': 'never',
  'GET /organisations/{org_id}/settings': 'safe',
  'PATCH /organisations/{org_id}/settings': 'never',
  'GET /organisations/{org_id}/users': 'safe',
  'GET /organisations/{org_id}/users/{user_id}': 'safe',
  'PATCH /organisations/{org_id}/users/{user_id}': 'never',
  'DELETE /organisations/{org_id}/users/{user_id}': 'safe',
  'GET /organisations/{org_id}/devices/{device_id}': 'safe',
  'POST /organisations/{org_id}/predefined-texts': 'idempotency-key',
  'GET /organisations/{org_id}/predefined-texts': 'safe',
  'GET /organisations/{org_id}/predefined-texts/{text_id}': 'safe',
  'PATCH /organisations/{org_id}/predefined-texts/{text_id}': 'never',
  'DELETE /organisations/{org_id}/predefined-texts/{text_id}': 'safe',
  'GET /plans': 'safe',
  'GET /plans/{plan_id}': 'safe',
  'GET /organisations/{org_id}/subscriptions': 'safe',
  'GET /organisations/{org_id}/subscriptions/{subscription_id}': 'safe',
  'GET /organisations/{org_id}/invoices': 'safe',
  'GET /organisations/{org_id}/invoices/{invoice_id}': 'safe',
  'POST /organisations/{org_id}/enrollments': 'safe',
  'POST /organisations/{org_id}/verifications': 'safe',
  'GET /organisations/{org_id}/enrollments/{request_uuid}': 'safe',
  'GET /organisations/{org_id}/verifications/{request_uuid}': 'safe',
  'POST /organisations/{org_id}/audio-checks': 'safe',
  'POST /organisations/{org_id}/challenges': 'idempotency-key',
  'POST /organisations/{org_id}/webhook-secret': 'idempotency-key',
  'GET /organisations/{org_id}/webhook-deliveries': 'safe',
  'POST /organisations/{org_id}/webhook-deliveries/{delivery_id}/redeliver': 'idempotency-key',
  'POST /organisations/{org_id}/webhook-test': 'idempotency-key',
};
