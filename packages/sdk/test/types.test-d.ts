import { describe, expectTypeOf, it } from 'vitest';
import {
  createVoxkeyClient,
  verifyWebhook,
  VoxkeyError,
  type AcceptedRequest,
  type AudioCheck,
  type AudioProblem,
  type Challenge,
  type EnrollmentMode,
  type ApiError,
  type ApiValidationError,
  type ErrorCode,
  type FieldError,
  type FieldErrorCode,
  type Invoice,
  type OperationErrorCode,
  type Page,
  type PhraseCheck,
  type PredefinedText,
  type RequestRecord,
  type Subscription,
  type User,
  type VerificationCompletedEvent,
  type VoxkeyEvent,
  type WebhookDelivery,
  type WebhookTestEvent,
} from '../src/index.js';

const vk = createVoxkeyClient({ baseUrl: 'http://localhost:8080/v1', token: 't', orgId: 1 });

describe('raw client narrowing', () => {
  it('getUser: data is User after checking error; error is the union of error bodies', async () => {
    const { data, error } = await vk.raw.GET('/organisations/{org_id}/users/{user_id}', {
      params: { path: { org_id: '1', user_id: '2' } },
    });
    if (error) {
      // The error bodies are the contract's: each status narrows `error` to the codes it can carry.
      expectTypeOf(error).toMatchTypeOf<ApiValidationError | ApiError>();
      expectTypeOf(error.error).toEqualTypeOf<OperationErrorCode<'getUser'>>();
      expectTypeOf(data).toEqualTypeOf<undefined>();
      return;
    }
    expectTypeOf(data).toEqualTypeOf<User>();
  });

  it('createPredefinedText: typed body and 201 data', async () => {
    const result = await vk.raw.POST('/organisations/{org_id}/predefined-texts', {
      params: { path: { org_id: '1' } },
      body: { org_id: 1, language: 'en-UK', text_code: 1, text: 'Say hello' },
    });
    if (result.data) expectTypeOf(result.data).toEqualTypeOf<PredefinedText>();
    else expectTypeOf(result.error).toMatchTypeOf<ApiError | ApiValidationError | undefined>();
    void vk.raw.POST('/organisations/{org_id}/predefined-texts', {
      params: { path: { org_id: '1' } },
      // @ts-expect-error text_code must be a number
      body: { org_id: 1, language: 'en-UK', text_code: '1', text: 'x' },
    });
  });

  it('listUsers: query parameters are typed', async () => {
    const { data } = await vk.raw.GET('/organisations/{org_id}/users', {
      params: {
        path: { org_id: '1' },
        query: { filter: ['is_active=true'], sort: 'id:desc', per_page: 10, page: 1 },
      },
    });
    expectTypeOf(data).toEqualTypeOf<{ results: User[] } | undefined>();
    void vk.raw.GET('/organisations/{org_id}/users', {
      // @ts-expect-error per_page is a number
      params: { path: { org_id: '1' }, query: { per_page: 'ten' } },
    });
    // @ts-expect-error path parameters are required
    void vk.raw.GET('/organisations/{org_id}/users', {});
  });

  it('createEnrollment: body requires voice_data, request_uuid and external_id', () => {
    void vk.raw.POST('/organisations/{org_id}/enrollments', {
      params: { path: { org_id: '1' } },
      // @ts-expect-error request_uuid is missing
      body: { voice_data: 'x', external_id: 'e' },
    });
  });
});

describe('resource methods', () => {
  it('return the data directly', () => {
    expectTypeOf(vk.users.get).returns.toEqualTypeOf<Promise<User>>();
    expectTypeOf(vk.users.list).returns.toEqualTypeOf<Promise<Page<User>>>();
    expectTypeOf(vk.users.iterate).returns.toEqualTypeOf<AsyncGenerator<User, void, undefined>>();
    expectTypeOf(vk.subscriptions.list).returns.toEqualTypeOf<Promise<Page<Subscription>>>();
    expectTypeOf(vk.invoices.iterate).returns.toEqualTypeOf<
      AsyncGenerator<Invoice, void, undefined>
    >();
    expectTypeOf(vk.enrollments.create).returns.toEqualTypeOf<Promise<AcceptedRequest>>();
    expectTypeOf(vk.verifications.get).returns.toEqualTypeOf<Promise<RequestRecord>>();
    expectTypeOf<RequestRecord['result']>().toEqualTypeOf<
      'verified' | 'rejected' | 'inconclusive' | null
    >();
  });

  it('request_uuid is optional for create, the rest is checked', () => {
    void vk.enrollments.create({ external_id: 'e', voice_data: new Uint8Array(4) });
    // @ts-expect-error external_id is required
    void vk.enrollments.create({ voice_data: 'x' });
    // @ts-expect-error is_active is a boolean
    void vk.users.update(1, { is_active: 'no' });
  });
});

describe('errors and events', () => {
  it('VoxkeyError carries typed fields', () => {
    const e = new VoxkeyError({ kind: 'http', status: 400, code: 400, message: 'x' });
    expectTypeOf(e.status).toEqualTypeOf<number>();
    expectTypeOf(e.errors).toEqualTypeOf<FieldError[]>();
    expectTypeOf(e.requestId).toEqualTypeOf<string | undefined>();
    expectTypeOf(e.retryAfter).toEqualTypeOf<number | undefined>();
    expectTypeOf(e.kind).toEqualTypeOf<'http' | 'timeout' | 'network'>();
    expectTypeOf(e.error).toEqualTypeOf<ErrorCode | undefined>();
    expectTypeOf(e.errors[0]!.code).toEqualTypeOf<FieldErrorCode>();
  });

  it('error codes are typed per operation from the contract', () => {
    type Enrolment = OperationErrorCode<'createEnrollment'>;
    expectTypeOf<
      'already_enrolled' | 'enrollment_in_progress' | 'no_callback_url' | 'request_uuid_reused'
    >().toMatchTypeOf<Enrolment>();
    expectTypeOf<
      'queue_full' | 'quota_exceeded' | 'rate_limited' | 'unavailable' | 'validation_failed'
    >().toMatchTypeOf<Enrolment>();
    expectTypeOf<'user_inactive'>().not.toMatchTypeOf<Enrolment>();
    expectTypeOf<'user_inactive' | 'user_not_enrolled'>().toMatchTypeOf<
      OperationErrorCode<'createVerification'>
    >();
    expectTypeOf<'already_exists'>().toMatchTypeOf<OperationErrorCode<'createPredefinedText'>>();
    expectTypeOf<OperationErrorCode<'getUser'>>().toEqualTypeOf<
      | 'validation_failed'
      | 'unauthorized'
      | 'forbidden'
      | 'not_found'
      | 'payload_too_large'
      | 'unsupported_media_type'
      | 'rate_limited'
      | 'internal_error'
      | 'unavailable'
    >();
    // @ts-expect-error not a code
    const wrong: ErrorCode = 'conflict';
    void wrong;
  });

  it('verifyWebhook narrows on event_type', () => {
    const event = verifyWebhook({ secret: 'whsec_x', headers: {}, body: '' });
    expectTypeOf(event).toEqualTypeOf<VoxkeyEvent>();
    if (event.event_type === 'verification.completed') {
      expectTypeOf(event.result).toEqualTypeOf<'verified' | 'rejected' | 'inconclusive'>();
      expectTypeOf(event.match_score).toEqualTypeOf<number>();
    } else if (event.event_type === 'enrollment.completed') {
      expectTypeOf(event.status).toEqualTypeOf<'enrolled' | 'failed'>();
      expectTypeOf(event.user_id).toEqualTypeOf<number | null>();
    } else {
      expectTypeOf(event.event_type).toEqualTypeOf<'webhook.test'>();
      expectTypeOf(event).toEqualTypeOf<WebhookTestEvent>();
      expectTypeOf(event.organisation_id).toEqualTypeOf<number>();
    }
  });

  it('challenges.create returns a Challenge; the phrase errors are typed per operation', async () => {
    expectTypeOf(await vk.challenges.create({ external_id: 'c' })).toEqualTypeOf<Challenge>();
    expectTypeOf<
      'challenge_not_found' | 'challenge_expired' | 'challenge_used' | 'challenge_user_mismatch'
    >().toMatchTypeOf<OperationErrorCode<'createVerification'>>();
    expectTypeOf<'challenge_used' | 'text_not_found'>().toMatchTypeOf<
      OperationErrorCode<'createEnrollment'>
    >();
    expectTypeOf<RequestRecord['phrase']>().toEqualTypeOf<PhraseCheck | null>();
    expectTypeOf<VerificationCompletedEvent['phrase']>().toEqualTypeOf<PhraseCheck | null>();
  });

  it('webhooks.sendTest returns the queued delivery; its errors include no_callback_url and the idempotency conflicts', async () => {
    expectTypeOf(await vk.webhooks.sendTest()).toEqualTypeOf<WebhookDelivery>();
    expectTypeOf<OperationErrorCode<'sendWebhookTest'>>().toMatchTypeOf<ErrorCode>();
    expectTypeOf<
      'no_callback_url' | 'idempotency_key_reused' | 'idempotency_key_in_progress'
    >().toMatchTypeOf<OperationErrorCode<'sendWebhookTest'>>();
    expectTypeOf<'idempotency_key_reused'>().toMatchTypeOf<OperationErrorCode<'createApiToken'>>();
    expectTypeOf<WebhookDelivery['event_type']>().toEqualTypeOf<
      'verification.completed' | 'enrollment.completed' | 'webhook.test'
    >();
  });
});

describe('conveniences', () => {
  it('waitForResult returns the request record; logger accepts console', async () => {
    expectTypeOf(vk.verifications.waitForResult)
      .parameter(1)
      .toEqualTypeOf<
        { timeoutMs?: number; intervalMs?: number; signal?: AbortSignal } | undefined
      >();
    expectTypeOf(
      await vk.enrollments.waitForResult('u', { timeoutMs: 1000 }),
    ).toEqualTypeOf<RequestRecord>();
    createVoxkeyClient({ baseUrl: 'http://x/v1', token: 't', logger: console });
    // @ts-expect-error a logger needs debug()
    createVoxkeyClient({ baseUrl: 'http://x/v1', token: 't', logger: { info: () => {} } });
  });

  it('the browser entry types recordVoice (the same as ./recorder) and re-exports the client', async () => {
    const browser = await import('../src/browser.js');
    expectTypeOf(browser.createVoxkeyClient).toEqualTypeOf(createVoxkeyClient);
    const recording = await browser.recordVoice({ seconds: 5 });
    expectTypeOf(recording.wav).toEqualTypeOf<Uint8Array<ArrayBuffer>>();
    expectTypeOf(recording.wav).toExtend<BodyInit>(); // a fetch body as it is
    expectTypeOf(recording.toVoiceData).returns.toEqualTypeOf<string>();
    // @ts-expect-error seconds is required
    void browser.recordVoice({});
    const recorder = await import('../src/recorder.js');
    expectTypeOf(recorder.recordVoice).toEqualTypeOf(browser.recordVoice);
  });
});

describe('voiceprint lifecycle types', () => {
  it('enrolment modes, the audio pre-check and the decision settings are typed', async () => {
    expectTypeOf(vk.enrollments.create).toBeCallableWith({
      external_id: 'e',
      voice_data: 'UklGRg==',
      mode: 'add',
    });
    // @ts-expect-error: not a mode
    void vk.enrollments.create({ external_id: 'e', voice_data: 'UklGRg==', mode: 'merge' });
    expectTypeOf<EnrollmentMode>().toEqualTypeOf<'new' | 'add' | 'replace'>();
    const check = await vk.audioChecks.create({ voice_data: new Uint8Array(4) });
    expectTypeOf(check).toEqualTypeOf<AudioCheck>();
    expectTypeOf(check.problems).toEqualTypeOf<AudioProblem[]>();
    expectTypeOf(check.snr_db).toEqualTypeOf<number | null>();
    expectTypeOf(vk.settings.update).toBeCallableWith({
      match_threshold: 0.9,
      deepfake_threshold: null,
      reject_deepfake_enrollments: false,
    });
    const settings = await vk.settings.get();
    expectTypeOf(settings.settings.match_threshold).toEqualTypeOf<number | null>();
    const record = await vk.enrollments.get('x');
    expectTypeOf(record.samples).toEqualTypeOf<number | null>();
  });
});
