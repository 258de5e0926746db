import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { VoxkeyError } from './errors.js';
import type { paths } from './generated/openapi.js';
import type { ListParams, Page } from './pagination.js';
import type { AcceptedRequest, RequestOptions } from './request.js';
import {
  listResource,
  voiceRequestResource,
  type RawResult,
  type WaitForResultOptions,
} from './resources.js';
import {
  createTransport,
  DEFAULT_RETRY,
  DEFAULT_TIMEOUT_MS,
  type FetchLike,
  type RetryOptions,
  type VoxkeyLogger,
} from './transport.js';
import type {
  ApiToken,
  AudioCheck,
  Challenge,
  CreatedApiToken,
  Device,
  EnrollmentRequest,
  Id,
  Invoice,
  Organisation,
  OrganisationSettings,
  Plan,
  PredefinedText,
  RequestRecord,
  Subscription,
  UpdateOrganisationRequest,
  UpdatePredefinedTextRequest,
  UpdateSettingsRequest,
  User,
  VerificationRequest,
  WebhookDelivery,
  WebhookSecret,
} from './types.js';
import { SDK_VERSION } from './version.js';
import {
  openVerificationStream,
  type StreamVerificationInput,
  type VerificationStream,
  type WebSocketConstructor,
  webSocketUrl,
} from './stream.js';
import { voiceDataOf, type VoiceInput } from './voice.js';

export type { AcceptedRequest, RequestOptions, VoiceInput, WaitForResultOptions };

/** The fully typed openapi-fetch client over every route of the OpenAPI document. */
export type VoxkeyRawClient = Client<paths, 'application/json'>;

export interface VoxkeyClientOptions {
  /** Base URL including the version prefix, e.g. `http://localhost:8080/v1`. */
  baseUrl: string;
  /** An API token (`vk_live_...` / `vk_trial_...`), or a function returning one (called per request). */
  token: string | (() => string | Promise<string>);
  /** The organisation the token belongs to. Required for every `/organisations/{org_id}/...` method. */
  orgId?: Id;
  /** A fetch implementation (default `globalThis.fetch`). Called with one `Request`. */
  fetch?: (input: Request) => Promise<Response>;
  /** Retries (a count, or full options). Default 2 retries, backoff 250 ms base, 8 s cap. */
  retries?: number | RetryOptions;
  /** Per-attempt timeout in ms until the response headers arrive. Default 30000; 0 disables it. */
  timeoutMs?: number;
  /** Extra headers for every request. */
  headers?: Record<string, string>;
  /**
   * Gets a debug line per attempt and per retry (method, URL, status, timing; never the token or
   * the body). `console` fits; default none.
   */
  logger?: VoxkeyLogger;
  /**
   * The WebSocket constructor for `verifications.stream` (default `globalThis.WebSocket`: browsers,
   * Node 22+). On Node 20 pass the `ws` package's: `import WebSocket from 'ws'`.
   */
  WebSocket?: WebSocketConstructor;
}

export type CreateEnrollmentInput = Omit<EnrollmentRequest, 'request_uuid' | 'voice_data'> & {
  voice_data: VoiceInput;
  /** UUID v4 making the request idempotent; generated when omitted. Reuse it to retry safely. */
  request_uuid?: string;
};
export type CreateVerificationInput = Omit<VerificationRequest, 'request_uuid' | 'voice_data'> & {
  voice_data: VoiceInput;
  /**
   * Any UUID (RFC 9562, versions 1 to 8, e.g. v4 or v7) making the request idempotent; a v4 is
   * generated when omitted. Reuse it to retry safely.
   */
  request_uuid?: string;
};
export interface CreateAudioCheckInput {
  /** The recording: base64 WAV/MP3, or its bytes (encoded for you). */
  voice_data: VoiceInput;
}
export interface CreateChallengeInput {
  /** The person who will read the phrase; only their enrolment or verification can use it. */
  external_id: string;
  /** Language tag like `en-UK` (the default); the recogniser checks English only today. */
  language?: string;
}
export interface CreateTokenInput {
  friendly_name: string;
  /** Default true. */
  enabled?: boolean;
  /**
   * ISO 8601 date-time; omit for a token that never expires. A token cannot outlive the one that
   * creates it: when the client's token expires (a trial token, or one with an expiry), this is
   * required and must be no later than that expiry (else a 400 `outlives_creator`).
   */
  expires_at?: string;
}
export interface CreatePredefinedTextInput {
  language: string;
  text_code: number;
  text: string;
}
export type UpdatePredefinedTextInput = Omit<UpdatePredefinedTextRequest, 'org_id'>;
export type SettingsChanges = UpdateSettingsRequest['settings'];

export interface VoxkeyClient {
  /** The openapi-fetch client: `{ data, error, response }` per call, typed from the OpenAPI document. */
  readonly raw: VoxkeyRawClient;
  /** The organisation id this client was created for (as a string), if any. */
  readonly orgId: string | undefined;
  readonly organisation: {
    get(options?: RequestOptions): Promise<Organisation>;
    update(changes: UpdateOrganisationRequest, options?: RequestOptions): Promise<Organisation>;
  };
  readonly settings: {
    get(options?: RequestOptions): Promise<OrganisationSettings>;
    /**
     * Changes the given keys (`alert_on_failure`, `callback_url`, `match_threshold`, `deepfake_threshold`,
     * `reject_deepfake_enrollments`, `require_phrase`, `challenge_ttl_seconds`; null thresholds return to
     * the server's defaults); `org_id` is filled in.
     */
    update(settings: SettingsChanges, options?: RequestOptions): Promise<OrganisationSettings>;
  };
  readonly tokens: {
    /** Creates a token; `bearer` is returned only here, once. */
    create(input: CreateTokenInput, options?: RequestOptions): Promise<CreatedApiToken>;
    list(params?: ListParams, options?: RequestOptions): Promise<Page<ApiToken>>;
    iterate(
      params?: ListParams,
      options?: RequestOptions,
    ): AsyncGenerator<ApiToken, void, undefined>;
    update(id: Id, changes: { enabled: boolean }, options?: RequestOptions): Promise<ApiToken>;
    delete(id: Id, options?: RequestOptions): Promise<ApiToken>;
  };
  readonly users: {
    list(params?: ListParams, options?: RequestOptions): Promise<Page<User>>;
    iterate(params?: ListParams, options?: RequestOptions): AsyncGenerator<User, void, undefined>;
    get(id: Id, options?: RequestOptions): Promise<User>;
    update(id: Id, changes: { is_active?: boolean }, options?: RequestOptions): Promise<User>;
    /** Erases the user and the voiceprint; returns the record as it was. */
    delete(id: Id, options?: RequestOptions): Promise<User>;
  };
  readonly devices: {
    get(id: Id, options?: RequestOptions): Promise<Device>;
  };
  readonly predefinedTexts: {
    /** Creates a text; `org_id` is filled in. A VoxkeyError 409 when (`language`, `text_code`) exists. */
    create(input: CreatePredefinedTextInput, options?: RequestOptions): Promise<PredefinedText>;
    list(params?: ListParams, options?: RequestOptions): Promise<Page<PredefinedText>>;
    iterate(
      params?: ListParams,
      options?: RequestOptions,
    ): AsyncGenerator<PredefinedText, void, undefined>;
    get(id: Id, options?: RequestOptions): Promise<PredefinedText>;
    update(
      id: Id,
      changes: UpdatePredefinedTextInput,
      options?: RequestOptions,
    ): Promise<PredefinedText>;
    delete(id: Id, options?: RequestOptions): Promise<PredefinedText>;
  };
  readonly plans: {
    list(params?: ListParams, options?: RequestOptions): Promise<Page<Plan>>;
    iterate(params?: ListParams, options?: RequestOptions): AsyncGenerator<Plan, void, undefined>;
    get(id: Id, options?: RequestOptions): Promise<Plan>;
  };
  readonly subscriptions: {
    /** The organisation's subscriptions, oldest first (`sort: 'id:desc'` for the newest first). */
    list(params?: ListParams, options?: RequestOptions): Promise<Page<Subscription>>;
    iterate(
      params?: ListParams,
      options?: RequestOptions,
    ): AsyncGenerator<Subscription, void, undefined>;
    get(id: Id, options?: RequestOptions): Promise<Subscription>;
  };
  readonly invoices: {
    /** The organisation's invoices, oldest first; one subscription's with `filter: 'sub_id=<id>'`. */
    list(params?: ListParams, options?: RequestOptions): Promise<Page<Invoice>>;
    iterate(
      params?: ListParams,
      options?: RequestOptions,
    ): AsyncGenerator<Invoice, void, undefined>;
    get(id: Id, options?: RequestOptions): Promise<Invoice>;
  };
  readonly audioChecks: {
    /**
     * Checks a recording synchronously before enrolling or verifying: `usable`, what the engine measured
     * and `problems` (`insufficient_speech`, `silent_audio`, ...) to show the person. Stores nothing, not billed.
     */
    create(input: CreateAudioCheckInput, options?: RequestOptions): Promise<AudioCheck>;
  };
  readonly challenges: {
    /**
     * A one-time phrase (six random digits as words) for `external_id` to read aloud: show `text`,
     * then send the recording with `challenge_id` to `verifications.create`, `enrollments.create` or
     * `verifications.stream`; the result's `phrase` says whether the recording says it. Used once,
     * expires after the organisation's `challenge_ttl_seconds` (default 120 s).
     */
    create(input: CreateChallengeInput, options?: RequestOptions): Promise<Challenge>;
  };
  readonly enrollments: {
    /**
     * Starts an enrolment (202); the result arrives as an `enrollment.completed` webhook. `mode`: `new`
     * (default), `add` (one more recording of the user's voiceprint, up to 10) or `replace`.
     */
    create(input: CreateEnrollmentInput, options?: RequestOptions): Promise<AcceptedRequest>;
    /** The state of an enrolment request by its `request_uuid`. */
    get(requestUuid: string, options?: RequestOptions): Promise<RequestRecord>;
    /**
     * Polls the request record until its `status` is `completed` or `failed` and returns it; a
     * VoxkeyError of kind 'timeout' after `timeoutMs` (default 60000). For scripts and tests with
     * no webhook receiver: the record tells the outcome (`result` is for verifications).
     */
    waitForResult(requestUuid: string, options?: WaitForResultOptions): Promise<RequestRecord>;
  };
  readonly verifications: {
    /** Starts a verification (202); the result arrives as a `verification.completed` webhook. */
    create(input: CreateVerificationInput, options?: RequestOptions): Promise<AcceptedRequest>;
    /** The state of a verification request by its `request_uuid`. */
    get(requestUuid: string, options?: RequestOptions): Promise<RequestRecord>;
    /**
     * Polls the request record until its `status` is `completed` or `failed` and returns it
     * (`result`, `match_score`, `deepfake_detected`...); a VoxkeyError of kind 'timeout' after
     * `timeoutMs` (default 60000).
     */
    waitForResult(requestUuid: string, options?: WaitForResultOptions): Promise<RequestRecord>;
    /**
     * Verifies while the caller speaks, over a WebSocket: `send` audio chunks (default mono 16-bit
     * PCM at 16 kHz), iterate `progress` messages, and await the stream for the `result` (the fields
     * of the `verification.completed` webhook). The verification is recorded and its webhook fires
     * as for `create`.
     */
    stream(input: StreamVerificationInput): VerificationStream;
  };
  readonly webhooks: {
    /** A new signing secret; the previous one keeps signing until `previous_secret_expires_at`. */
    rotateSecret(options?: RequestOptions): Promise<WebhookSecret>;
    listDeliveries(params?: ListParams, options?: RequestOptions): Promise<Page<WebhookDelivery>>;
    iterateDeliveries(
      params?: ListParams,
      options?: RequestOptions,
    ): AsyncGenerator<WebhookDelivery, void, undefined>;
    /** Queues a delivery again. */
    redeliver(deliveryId: Id, options?: RequestOptions): Promise<WebhookDelivery>;
    /**
     * Queues a signed `webhook.test` event to the callback URL (listed in the deliveries like any other),
     * to check a receiver and its `verifyWebhook` call without enrolling anyone. 409 `no_callback_url` when none is set.
     */
    sendTest(options?: RequestOptions): Promise<WebhookDelivery>;
  };
}

/** The request behind each response of a client, so errors can name the method and URL. */
const requests = new WeakMap<Response, Request>();

/**
 * Returns `data` of an openapi-fetch result, or throws a VoxkeyError for an error response.
 * Use it with `client.raw` to get the resource-method behaviour on any call.
 */
export function unwrap<T>(result: RawResult<T>): T {
  if (result.response.ok && result.error === undefined) return result.data as T;
  const request = requests.get(result.response);
  throw VoxkeyError.fromResponse(
    result.response,
    result.error,
    request && { method: request.method, url: request.url },
  );
}

function resolveRetry(retries: number | RetryOptions | undefined): Required<RetryOptions> {
  if (retries === undefined) return { ...DEFAULT_RETRY };
  if (typeof retries === 'number') return { ...DEFAULT_RETRY, retries: checkRetries(retries) };
  const merged = { ...DEFAULT_RETRY, ...stripUndefined(retries) };
  merged.retries = checkRetries(merged.retries);
  return merged;
}

function checkRetries(n: number): number {
  if (!Number.isInteger(n) || n < 0)
    throw new TypeError(`retries must be a non-negative integer, got ${n}`);
  return n;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Browsers refuse to set `User-Agent` from script (and it would cost a CORS preflight). */
function inBrowser(): boolean {
  const g = globalThis as { document?: unknown; WorkerGlobalScope?: unknown };
  return g.document !== undefined || g.WorkerGlobalScope !== undefined;
}

/**
 * Creates a client for one organisation.
 *
 * ```ts
 * const voxkey = createVoxkeyClient({ baseUrl: 'http://localhost:8080/v1', token: process.env.VOXKEY_TOKEN!, orgId: 1 });
 * const { results } = await voxkey.users.list({ filter: 'is_active=true' });
 * ```
 */
export function createVoxkeyClient(options: VoxkeyClientOptions): VoxkeyClient {
  if (!options || typeof options.baseUrl !== 'string' || options.baseUrl === '')
    throw new TypeError('createVoxkeyClient: baseUrl is required');
  if (options.token === undefined || options.token === '')
    throw new TypeError('createVoxkeyClient: token is required');
  const baseFetch: FetchLike = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const retry = resolveRetry(options.retries);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const logger = options.logger;
  const transport = createTransport({ fetch: baseFetch, retry, timeoutMs, logger });
  const orgId = options.orgId === undefined ? undefined : String(options.orgId);

  const raw = createClient<paths, 'application/json'>({
    baseUrl: options.baseUrl,
    fetch: transport,
    headers: {
      Accept: 'application/json',
      ...(inBrowser() ? {} : { 'User-Agent': `voxkey-sdk/${SDK_VERSION}` }),
      ...options.headers,
    },
  });
  const token = options.token;
  const auth: Middleware = {
    async onRequest({ request }) {
      const value = typeof token === 'function' ? await token() : token;
      request.headers.set('Authorization', `Bearer ${value}`);
      return request;
    },
    onResponse({ request, response }) {
      requests.set(response, request);
    },
  };
  raw.use(auth);

  const org = (): { org_id: string } => {
    if (orgId === undefined)
      throw new TypeError('This method needs the organisation: pass orgId to createVoxkeyClient()');
    return { org_id: orgId };
  };
  /** The organisation's path parameter plus one id, e.g. `at('user_id', 3)`. */
  const at = <K extends string>(name: K, id: Id) =>
    ({ ...org(), [name]: String(id) }) as { org_id: string } & Record<K, string>;

  /** openapi-fetch init for one call: signal, headers, and a transport when retries/timeout are overridden. */
  const init = (o: RequestOptions | undefined) => {
    if (!o) return {};
    const custom = o.retries !== undefined || o.timeoutMs !== undefined;
    return {
      ...(o.signal ? { signal: o.signal } : {}),
      ...(o.headers ? { headers: o.headers } : {}),
      ...(custom
        ? {
            fetch: createTransport({
              fetch: baseFetch,
              retry: {
                ...retry,
                ...(o.retries !== undefined ? { retries: checkRetries(o.retries) } : {}),
              },
              timeoutMs: o.timeoutMs ?? timeoutMs,
              logger,
            }),
          }
        : {}),
    };
  };
  const call = async <T>(result: Promise<RawResult<T>>): Promise<T> => unwrap(await result);

  const organisation: VoxkeyClient['organisation'] = {
    get: (o) => call(raw.GET('/organisations/{org_id}', { params: { path: org() }, ...init(o) })),
    update: (changes, o) =>
      call(
        raw.PATCH('/organisations/{org_id}', {
          params: { path: org() },
          body: changes,
          ...init(o),
        }),
      ),
  };

  const settings: VoxkeyClient['settings'] = {
    get: (o) =>
      call(raw.GET('/organisations/{org_id}/settings', { params: { path: org() }, ...init(o) })),
    update(values, o) {
      const path = org();
      return call(
        raw.PATCH('/organisations/{org_id}/settings', {
          params: { path },
          body: { org_id: Number(path.org_id), settings: values },
          ...init(o),
        }),
      );
    },
  };

  const tokens: VoxkeyClient['tokens'] = {
    create: (input, o) =>
      call(
        raw.POST('/organisations/{org_id}/api-tokens', {
          params: { path: org() },
          body: { ...input, enabled: input.enabled ?? true },
          ...init(o),
        }),
      ),
    ...listResource(
      (query, o) =>
        raw.GET('/organisations/{org_id}/api-tokens', {
          params: { path: org(), query },
          ...init(o),
        }),
      unwrap,
    ),
    update: (id, changes, o) =>
      call(
        raw.PATCH('/organisations/{org_id}/api-tokens/{token_id}', {
          params: { path: at('token_id', id) },
          body: changes,
          ...init(o),
        }),
      ),
    delete: (id, o) =>
      call(
        raw.DELETE('/organisations/{org_id}/api-tokens/{token_id}', {
          params: { path: at('token_id', id) },
          ...init(o),
        }),
      ),
  };

  const users: VoxkeyClient['users'] = {
    ...listResource(
      (query, o) =>
        raw.GET('/organisations/{org_id}/users', { params: { path: org(), query }, ...init(o) }),
      unwrap,
    ),
    get: (id, o) =>
      call(
        raw.GET('/organisations/{org_id}/users/{user_id}', {
          params: { path: at('user_id', id) },
          ...init(o),
        }),
      ),
    update: (id, changes, o) =>
      call(
        raw.PATCH('/organisations/{org_id}/users/{user_id}', {
          params: { path: at('user_id', id) },
          body: changes,
          ...init(o),
        }),
      ),
    delete: (id, o) =>
      call(
        raw.DELETE('/organisations/{org_id}/users/{user_id}', {
          params: { path: at('user_id', id) },
          ...init(o),
        }),
      ),
  };

  const devices: VoxkeyClient['devices'] = {
    get: (id, o) =>
      call(
        raw.GET('/organisations/{org_id}/devices/{device_id}', {
          params: { path: at('device_id', id) },
          ...init(o),
        }),
      ),
  };

  const predefinedTexts: VoxkeyClient['predefinedTexts'] = {
    create(input, o) {
      const path = org();
      const body = {
        org_id: Number(path.org_id),
        language: input.language,
        text_code: input.text_code,
        text: input.text,
      };
      return call(
        raw.POST('/organisations/{org_id}/predefined-texts', {
          params: { path },
          body,
          ...init(o),
        }),
      );
    },
    ...listResource(
      (query, o) =>
        raw.GET('/organisations/{org_id}/predefined-texts', {
          params: { path: org(), query },
          ...init(o),
        }),
      unwrap,
    ),
    get: (id, o) =>
      call(
        raw.GET('/organisations/{org_id}/predefined-texts/{text_id}', {
          params: { path: at('text_id', id) },
          ...init(o),
        }),
      ),
    update: (id, changes, o) =>
      call(
        raw.PATCH('/organisations/{org_id}/predefined-texts/{text_id}', {
          params: { path: at('text_id', id) },
          body: changes,
          ...init(o),
        }),
      ),
    delete: (id, o) =>
      call(
        raw.DELETE('/organisations/{org_id}/predefined-texts/{text_id}', {
          params: { path: at('text_id', id) },
          ...init(o),
        }),
      ),
  };

  const plans: VoxkeyClient['plans'] = {
    ...listResource((query, o) => raw.GET('/plans', { params: { query }, ...init(o) }), unwrap),
    get: (id, o) =>
      call(raw.GET('/plans/{plan_id}', { params: { path: { plan_id: String(id) } }, ...init(o) })),
  };

  const subscriptions: VoxkeyClient['subscriptions'] = {
    ...listResource(
      (query, o) =>
        raw.GET('/organisations/{org_id}/subscriptions', {
          params: { path: org(), query },
          ...init(o),
        }),
      unwrap,
    ),
    get: (id, o) =>
      call(
        raw.GET('/organisations/{org_id}/subscriptions/{subscription_id}', {
          params: { path: at('subscription_id', id) },
          ...init(o),
        }),
      ),
  };

  const invoices: VoxkeyClient['invoices'] = {
    ...listResource(
      (query, o) =>
        raw.GET('/organisations/{org_id}/invoices', { params: { path: org(), query }, ...init(o) }),
      unwrap,
    ),
    get: (id, o) =>
      call(
        raw.GET('/organisations/{org_id}/invoices/{invoice_id}', {
          params: { path: at('invoice_id', id) },
          ...init(o),
        }),
      ),
  };

  const audioChecks: VoxkeyClient['audioChecks'] = {
    create: (input, o) =>
      call(
        raw.POST('/organisations/{org_id}/audio-checks', {
          params: { path: org() },
          body: { voice_data: voiceDataOf(input.voice_data) },
          ...init(o),
        }),
      ),
  };

  const challenges: VoxkeyClient['challenges'] = {
    create: (input, o) =>
      call(
        raw.POST('/organisations/{org_id}/challenges', {
          params: { path: org() },
          body: { external_id: input.external_id, language: input.language },
          ...init(o),
        }),
      ),
  };

  const enrollments: VoxkeyClient['enrollments'] = voiceRequestResource({
    kind: 'enrolment',
    create: (body: EnrollmentRequest, o) =>
      raw.POST('/organisations/{org_id}/enrollments', {
        params: { path: org() },
        body,
        ...init(o),
      }),
    get: (requestUuid, o) =>
      raw.GET('/organisations/{org_id}/enrollments/{request_uuid}', {
        params: { path: at('request_uuid', requestUuid) },
        ...init(o),
      }),
    unwrap,
  });

  const verifications: VoxkeyClient['verifications'] = {
    ...voiceRequestResource({
      kind: 'verification',
      create: (body: VerificationRequest, o) =>
        raw.POST('/organisations/{org_id}/verifications', {
          params: { path: org() },
          body,
          ...init(o),
        }),
      get: (requestUuid, o) =>
        raw.GET('/organisations/{org_id}/verifications/{request_uuid}', {
          params: { path: at('request_uuid', requestUuid) },
          ...init(o),
        }),
      unwrap,
    }),
    stream: (input) =>
      openVerificationStream(
        {
          url: webSocketUrl(options.baseUrl, `/organisations/${org().org_id}/verifications/stream`),
          token: async () => (typeof token === 'function' ? await token() : token),
          WebSocket: options.WebSocket,
        },
        input,
      ),
  };

  const deliveries = listResource(
    (query, o) =>
      raw.GET('/organisations/{org_id}/webhook-deliveries', {
        params: { path: org(), query },
        ...init(o),
      }),
    unwrap,
  );
  const webhooks: VoxkeyClient['webhooks'] = {
    rotateSecret: (o) =>
      call(
        raw.POST('/organisations/{org_id}/webhook-secret', { params: { path: org() }, ...init(o) }),
      ),
    listDeliveries: deliveries.list,
    iterateDeliveries: deliveries.iterate,
    redeliver: (deliveryId, o) =>
      call(
        raw.POST('/organisations/{org_id}/webhook-deliveries/{delivery_id}/redeliver', {
          params: { path: at('delivery_id', deliveryId) },
          ...init(o),
        }),
      ),
    sendTest: (o) =>
      call(
        raw.POST('/organisations/{org_id}/webhook-test', { params: { path: org() }, ...init(o) }),
      ),
  };

  return {
    raw,
    orgId,
    organisation,
    settings,
    tokens,
    users,
    devices,
    predefinedTexts,
    plans,
    subscriptions,
    invoices,
    audioChecks,
    challenges,
    enrollments,
    verifications,
    webhooks,
  };
}
