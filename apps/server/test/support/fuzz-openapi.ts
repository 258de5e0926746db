/**
 * Fuzzing support driven by the committed OpenAPI document: the operations with their parameters,
 * fast-check arbitraries for valid values of a JSON schema, mutations that make a request invalid in
 * one way at a time, and an ajv validator for response bodies (component schemas, $refs resolved).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';

export const OPENAPI_FILE = fileURLToPath(
  new URL('../../../../openapi/openapi.json', import.meta.url),
);
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

export interface FuzzParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: any;
  description?: string;
}

export interface FuzzOperation {
  method: string;
  /** Template relative to /v1, e.g. `/organisations/{org_id}/users/{user_id}`. */
  path: string;
  operationId: string;
  pathParams: FuzzParameter[];
  queryParams: FuzzParameter[];
  bodySchema?: any;
  /** Status codes the document declares, as strings ('200', '400', ...). */
  responses: Record<string, any>;
}

export function loadDocument(): any {
  return JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'));
}

export function resolveRef(doc: any, schema: any): any {
  let s = schema;
  for (let i = 0; s?.$ref && i < 20; i++) {
    const parts = String(s.$ref).replace(/^#\//, '').split('/');
    s = parts.reduce((node: any, key) => node?.[key], doc);
  }
  return s ?? {};
}

export function fuzzOperations(doc: any): FuzzOperation[] {
  const ops: FuzzOperation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const params: FuzzParameter[] = [...(item.parameters ?? []), ...(op.parameters ?? [])].map(
        (p: any) => resolveRef(doc, p),
      );
      ops.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId ?? `${method} ${path}`,
        pathParams: params.filter((p) => p.in === 'path'),
        queryParams: params.filter((p) => p.in === 'query'),
        bodySchema: op.requestBody?.content?.['application/json']?.schema,
        responses: op.responses ?? {},
      });
    }
  }
  return ops;
}

/** Field names listed in a parameter description as "Fields: `a`, `b`." (filter and sort of list routes). */
export function describedFields(param: FuzzParameter | undefined): string[] {
  const match = /Fields: ([^.]*)\./.exec(param?.description ?? param?.schema?.description ?? '');
  return match ? [...match[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!) : [];
}

// ---------------------------------------------------------------------------------------------
// Response validation
// ---------------------------------------------------------------------------------------------

const addFormats: (ajv: any) => void = (addFormatsModule as any).default ?? addFormatsModule;

/** Rewrites `#/components/schemas/X` to `#/$defs/X` and closes every object that lists its properties. */
function toStrictJsonSchema(node: any, closeObjects: boolean, insideAllOf = false): any {
  if (Array.isArray(node)) return node.map((n) => toStrictJsonSchema(n, closeObjects, insideAllOf));
  if (!node || typeof node !== 'object') return node;
  const out: any = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string')
      out.$ref = value.replace('#/components/schemas/', '#/$defs/');
    else if (key === 'properties') {
      out.properties = Object.fromEntries(
        Object.entries(value as object).map(([k, v]) => [k, toStrictJsonSchema(v, closeObjects)]),
      );
    } else out[key] = toStrictJsonSchema(value, closeObjects, key === 'allOf');
  }
  // The document says which fields a response has; an extra field in a 2xx body is a contract break.
  if (closeObjects && !insideAllOf && out.properties && out.additionalProperties === undefined)
    out.additionalProperties = false;
  return out;
}

export interface ResponseValidator {
  /** null when the body matches the operation's schema for that status, else ajv's messages. */
  validate(op: FuzzOperation, status: number, body: unknown): string[] | null;
  /** The component name a response schema refers to (`User`, `UserList`, ...), if any. */
  componentOf(op: FuzzOperation, status: number): string | undefined;
}

export function createResponseValidator(
  doc: any,
  options: { closeObjects?: boolean; patch?: (defs: any) => void } = {},
): ResponseValidator {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  const defs = toStrictJsonSchema(doc.components?.schemas ?? {}, options.closeObjects ?? true);
  options.patch?.(defs);
  ajv.addSchema({ $id: 'voxkey', $defs: defs });
  const cache = new Map<string, any>();
  const schemaFor = (op: FuzzOperation, status: number) =>
    op.responses[String(status)]?.content?.['application/json']?.schema;
  return {
    validate(op, status, body) {
      const schema = schemaFor(op, status);
      if (!schema)
        return [`status ${status} has no JSON schema in the document for ${op.operationId}`];
      const key = `${op.operationId}:${status}`;
      let validate = cache.get(key);
      if (!validate) {
        const strict = toStrictJsonSchema(schema, options.closeObjects ?? true);
        const rooted = JSON.parse(
          JSON.stringify(strict).replaceAll('"#/$defs/', '"voxkey#/$defs/'),
        );
        validate = ajv.compile(rooted);
        cache.set(key, validate);
      }
      if (validate(body)) return null;
      return (validate.errors ?? []).map(
        (e: any) =>
          `${e.instancePath || '/'} ${e.message} ${e.params ? JSON.stringify(e.params) : ''}`,
      );
    },
    componentOf(op, status) {
      const ref = schemaFor(op, status)?.$ref as string | undefined;
      return ref?.split('/').pop();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Valid values from schemas
// ---------------------------------------------------------------------------------------------

export interface ValueHints {
  /** The organisation in the path: body `org_id` must equal it. */
  orgId: number;
}

const PUBLIC_CALLBACKS = [
  'https://8.8.8.8/hook',
  'https://1.1.1.1/voxkey/webhooks',
  'https://[2001:4860:4860::8888]/h?x=1',
];
const SIMPLE_EMAILS = ['ops@example.com', 'a.b+c@sub.example.org', 'x@y.co'];

function codePoints(s: string): number {
  return [...s].length;
}

function stringArbitrary(s: any): fc.Arbitrary<string> {
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = typeof s.maxLength === 'number' ? s.maxLength : 80;
  const fits = (v: string) => codePoints(v) >= min && codePoints(v) <= max;
  if (s.format === 'uuid') return fc.uuid({ version: 4 });
  if (s.format === 'date-time') {
    // Future instants: the contract's date-times in requests (expires_at) must lie ahead.
    return fc
      .integer({ min: 3_600_000, max: 5 * 365 * 86_400_000 })
      .map((ms) => new Date(Date.now() + ms).toISOString());
  }
  if (s.format === 'date')
    return fc
      .date({ min: new Date('2020-01-01'), max: new Date('2030-12-31'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10));
  if (s.format === 'email')
    return fc.oneof(fc.constantFrom(...SIMPLE_EMAILS), fc.emailAddress()).filter(fits);
  if (s.format === 'uri') return fc.constantFrom(...PUBLIC_CALLBACKS);
  if (typeof s.pattern === 'string') return fc.stringMatching(new RegExp(s.pattern)).filter(fits);
  const cap = Math.min(max, 120);
  return fc
    .oneof(
      {
        weight: 3,
        arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: min, maxLength: cap }),
      },
      {
        weight: 1,
        arbitrary: fc.string({ unit: 'grapheme', minLength: min, maxLength: Math.min(cap, 40) }),
      },
    )
    .filter(fits);
}

/** Values that satisfy a schema of the document (and the obvious business rules: org_id, future dates, public https callbacks). */
export function validValue(
  doc: any,
  schema: any,
  hints: ValueHints,
  name = '',
): fc.Arbitrary<unknown> {
  const s = resolveRef(doc, schema);
  if (name === 'org_id') return fc.constant(hints.orgId);
  if (name === 'voice_data') {
    // Random bytes, well-formed base64: never a WAV or MP3, so never accepted.
    return fc
      .uint8Array({ minLength: 1, maxLength: 3000 })
      .map((bytes) => Buffer.from(bytes).toString('base64'));
  }
  if (name === 'request_uuid') return fc.uuid({ version: 4 });
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum) && s.enum.length) return fc.constantFrom(...s.enum);
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives)
    return fc.oneof(...alternatives.map((a: any) => validValue(doc, a, hints, name)));
  if (s.allOf) return validValue(doc, s.allOf[0], hints, name);
  if (Array.isArray(s.type))
    return fc.oneof(...s.type.map((t: string) => validValue(doc, { ...s, type: t }, hints, name)));
  switch (s.type) {
    case 'object': {
      const props = s.properties ?? {};
      const model = Object.fromEntries(
        Object.entries(props).map(([key, sub]) => [key, validValue(doc, sub, hints, key)]),
      );
      return fc.record(model, { requiredKeys: s.required ?? [] });
    }
    case 'array':
      return fc.array(validValue(doc, s.items ?? {}, hints, name), { maxLength: 3 });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'integer': {
      const min =
        typeof s.minimum === 'number'
          ? s.minimum
          : typeof s.exclusiveMinimum === 'number'
            ? s.exclusiveMinimum + 1
            : -1_000_000;
      const max =
        typeof s.maximum === 'number'
          ? s.maximum
          : typeof s.exclusiveMaximum === 'number'
            ? s.exclusiveMaximum - 1
            : 1_000_000;
      return fc.integer({ min, max });
    }
    case 'number': {
      const min = typeof s.minimum === 'number' ? s.minimum : -1e6;
      const max = typeof s.maximum === 'number' ? s.maximum : 1e6;
      return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
    }
    case 'string':
      return stringArbitrary(s);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

// ---------------------------------------------------------------------------------------------
// Hostile values
// ---------------------------------------------------------------------------------------------

/** Strings that break naive code: NUL, lone surrogates, RTL, emoji, SQL and path tricks, formats. */
export const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\u202egnp.exe',
  '👩‍👩‍👧‍👦🇬🇧',
  'Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇',
  'ﷺ',
  '\t\r\n',
  "'; drop table users; --",
  '%',
  '%%',
  '_',
  '\\',
  '../../etc/passwd',
  '${jndi:ldap://x}',
  '<script>alert(1)</script>',
  '{{7*7}}',
  'null',
  'true',
  '0',
  '-1',
  '1e309',
  'NaN',
  '2026-02-30T25:61:61Z',
  '+44 20 7123 4567',
  'en_UK',
  'EN-uk',
  'http://127.0.0.1/hook',
  'https://169.254.169.254/latest/meta-data',
  'https://10.0.0.1/x',
  'file:///etc/passwd',
  'javascript:alert(1)',
];

export const NASTY_NUMBERS = [
  -1,
  0,
  -0,
  1.5,
  2147483647,
  2147483648,
  -2147483649,
  2 ** 53,
  2 ** 53 + 2,
  1e15,
  1e16,
  1e308,
  -1e308,
  5e-324,
];

export const NASTY_PATH_IDS = [
  '0',
  '-1',
  '01',
  '1.5',
  '1e3',
  '0x10',
  '9999999999999999',
  '999999999999999',
  '18446744073709551616',
  'abc',
  'null',
  'undefined',
  '%00',
  '%2e%2e',
  '%2F',
  '%ED%A0%80',
  '%',
  ' 1',
  '1 ',
  '１',
  '[]',
  '{}',
  "1' or '1'='1",
];

/** Any JSON value of a type other than the schema's. */
export function wrongTypeValue(doc: any, schema: any): fc.Arbitrary<unknown> {
  const s = resolveRef(doc, schema);
  const types = new Set<string>(Array.isArray(s.type) ? s.type : s.type ? [s.type] : []);
  const candidates: fc.Arbitrary<unknown>[] = [];
  if (!types.has('string')) candidates.push(fc.constantFrom('1', 'true', 'x', ''));
  if (!types.has('integer') && !types.has('number'))
    candidates.push(fc.constantFrom(1, 0, -1, 1.5));
  if (types.has('integer')) candidates.push(fc.constantFrom(1.5, 1e-7, 1e308));
  if (!types.has('boolean')) candidates.push(fc.constantFrom(true, false));
  if (!types.has('null')) candidates.push(fc.constant(null));
  if (!types.has('object')) candidates.push(fc.constantFrom({}, { a: 1 }, { $ne: null }));
  if (!types.has('array')) candidates.push(fc.constantFrom([], [1], ['a', null]));
  return fc.oneof(...candidates);
}
