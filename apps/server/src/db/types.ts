import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

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
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ApiTokensTable {
  id: Generated<number>;
  org_id: number;
  friendly_name: string;
  token_hash: string;
  kind: 'live' | 'trial';
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
export type NewOrganisation = Insertable<OrganisationsTable>;
export type OrganisationUpdate = Updateable<OrganisationsTable>;
export type { ColumnType };
