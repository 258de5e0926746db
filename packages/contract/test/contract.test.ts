import { describe, expect, it } from 'vitest';
import {
  apiRoutes,
  buildOpenApiDocument,
  parseFilter,
  CreatePredefinedTextBodySchema,
  EMPTY_MESSAGE,
  EnrollmentRequestSchema,
  REQUIRED_MESSAGE,
  StreamStartSchema,
  VerificationRequestSchema,
} from '../src/index.js';

describe('contract', () => {
  const document = buildOpenApiDocument();

  it('documents every route with an operationId, typed errors and required bodies', () => {
    const operations = Object.values(document.paths ?? {}).flatMap((item) =>
      Object.values(
        item as Record<
          string,
          {
            operationId?: string;
            responses: Record<string, unknown>;
            requestBody?: { required?: boolean };
          }
        >,
      ),
    );
    expect(operations).toHaveLength(Object.keys(apiRoutes).length);
    for (const operation of operations) {
      expect(operation.operationId).toBeTruthy();
      for (const status of ['400', '401', '403', '404', '429', '500'])
        expect(operation.responses).toHaveProperty(status);
      if (operation.requestBody) {
        expect(operation.requestBody.required).toBe(true);
        expect(operation.responses).toHaveProperty('413');
        expect(operation.responses).toHaveProperty('415');
      }
    }
    expect(Object.keys(document.webhooks ?? {}).sort()).toEqual([
      'enrollment.completed',
      'verification.completed',
      'webhook.test',
    ]);
  });

  it('says "This field is required" for missing fields and rejects unknown ones', () => {
    const result = CreatePredefinedTextBodySchema.safeParse({ language: 'en-UK', extra: 1 });
    expect(result.success).toBe(false);
    const issues = result.error!.issues;
    expect(issues.find((i) => i.path[0] === 'org_id')?.message).toBe(REQUIRED_MESSAGE);
    expect(issues.some((i) => i.code === 'unrecognized_keys')).toBe(true);
  });

  it('says "Must not be empty" for an empty required string, which is present and so not "required"', () => {
    const result = EnrollmentRequestSchema.safeParse({
      voice_data: '',
      request_uuid: '9b2f6d3e-8c1a-4f5b-9d7e-2a4c6e8f0b1d',
      external_id: '',
    });
    expect(result.error?.issues.map((i) => [i.path[0], i.code, i.message])).toEqual([
      ['voice_data', 'too_small', EMPTY_MESSAGE],
      ['external_id', 'too_small', EMPTY_MESSAGE],
    ]);
  });

  it('requires a UUID v4 request_uuid and defaults the language to en-UK', () => {
    const bad = EnrollmentRequestSchema.safeParse({
      voice_data: 'AAAA',
      request_uuid: '123e4567-e89b-12d3-a456-426614174000',
      external_id: 'x',
    });
    expect(bad.error?.issues[0]).toMatchObject({
      path: ['request_uuid'],
      message: 'Must be a valid UUID v4',
    });
    // A UUID v7 is fine for a verification, not for an enrolment.
    expect(
      EnrollmentRequestSchema.safeParse({
        voice_data: 'AAAA',
        request_uuid: '01890a5d-ac96-774b-bcce-b302099a8057',
        external_id: 'x',
      }).error?.issues[0],
    ).toMatchObject({ path: ['request_uuid'], message: 'Must be a valid UUID v4' });
    const good = EnrollmentRequestSchema.parse({
      voice_data: 'AAAA',
      request_uuid: '9b2f6d3e-8c1a-4f5b-9d7e-2a4c6e8f0b1d',
      external_id: 'x',
    });
    expect(good.language).toBe('en-UK');
  });

  it('takes any RFC 9562 UUID as a verification request_uuid (and stream start), not the nil or max UUID', () => {
    const body = (request_uuid: string) => ({ voice_data: 'AAAA', request_uuid, external_id: 'x' });
    for (const uuid of [
      '01890a5d-ac96-774b-bcce-b302099a8057', // v7
      'c232ab00-9414-11ec-b3c8-9f6bdeced846', // v1
      '9b2f6d3e-8c1a-4f5b-9d7e-2a4c6e8f0b1d', // v4
      '2489E9AD-2EE2-8E00-8EC9-32D5F69181C0', // v8, upper case
    ]) {
      expect(VerificationRequestSchema.safeParse(body(uuid)).success, uuid).toBe(true);
      expect(
        StreamStartSchema.safeParse({
          type: 'start',
          format: 'wav',
          request_uuid: uuid,
          external_id: 'x',
        }).success,
        uuid,
      ).toBe(true);
    }
    for (const uuid of [
      'not-a-uuid',
      '00000000-0000-0000-0000-000000000000',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      '01890a5d-ac96-074b-bcce-b302099a8057', // version 0
      '01890a5d-ac96-774b-cbce-b302099a8057', // Microsoft variant
    ]) {
      const bad = VerificationRequestSchema.safeParse(body(uuid));
      expect(bad.error?.issues, uuid).toEqual([
        expect.objectContaining({
          path: ['request_uuid'],
          format: 'uuid',
          message: 'Must be a valid UUID',
        }),
      ]);
    }
    // A missing one is still "required", not a UUID problem.
    const missing = VerificationRequestSchema.safeParse({ voice_data: 'AAAA', external_id: 'x' });
    expect(missing.error?.issues[0]).toMatchObject({
      path: ['request_uuid'],
      message: REQUIRED_MESSAGE,
    });
  });

  it('refuses impossible dates in timestamp filters instead of throwing', () => {
    const fields = { created_at: 'timestamp' } as const;
    for (const bad of [
      'created_at=gte:2026-99-99',
      'created_at=gte:2026-02-31',
      'created_at=2026-13-01T25:61',
    ]) {
      expect(parseFilter(bad, fields)).toEqual({ error: expect.stringMatching(/created_at/) });
    }
    expect(parseFilter('created_at=gte:2026-01-05T12:00:00', fields)).toEqual({
      field: 'created_at',
      operator: 'gte',
      value: '2026-01-05T12:00:00.000Z',
    });
  });
});
