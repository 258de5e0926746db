import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The committed OpenAPI document: the cases below are generated from it, so a new route is covered automatically. */
export const OPENAPI_FILE = fileURLToPath(
  new URL('../../../../openapi/openapi.json', import.meta.url),
);

export interface Operation {
  method: string;
  /** Path template relative to /v1, e.g. `/organisations/{org_id}/users/{user_id}`. */
  path: string;
  operationId: string;
  params: string[];
  bodySchema?: any;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

let cachedDocument: any;
/** Parsed once per test file; treat as read-only. */
export function loadOpenApi(): any {
  cachedDocument ??= JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'));
  return cachedDocument;
}

export function listOperations(doc: any = loadOpenApi()): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const params = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
      const bodySchema = op.requestBody?.content?.['application/json']?.schema;
      ops.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId ?? `${method} ${path}`,
        params,
        bodySchema,
      });
    }
  }
  return ops;
}

export function fillPath(template: string, values: Record<string, string | number>): string {
  return `/v1${template.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const v = values[name];
    if (v === undefined) throw new Error(`no value for path parameter ${name}`);
    return encodeURIComponent(String(v));
  })}`;
}

function resolve(doc: any, schema: any): any {
  let s = schema;
  for (let i = 0; s?.$ref && i < 20; i++) {
    const parts = String(s.$ref).replace(/^#\//, '').split('/');
    s = parts.reduce((node: any, key) => node?.[key], doc);
  }
  return s ?? {};
}

/**
 * A minimal valid value for a JSON schema of the document: required properties only, taking
 * `example`/`default` where given and honouring the simple constraints our contract uses.
 */
export function sampleFromSchema(doc: any, schema: any, name = ''): any {
  const s = resolve(doc, schema);
  if (s.example !== undefined) return s.example;
  if (s.default !== undefined) return s.default;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives) {
    const pick =
      alternatives.map((a: any) => resolve(doc, a)).find((a: any) => a.type !== 'null') ??
      alternatives[0];
    return sampleFromSchema(doc, pick, name);
  }
  if (s.allOf)
    return Object.assign({}, ...s.allOf.map((part: any) => sampleFromSchema(doc, part, name)));
  const type = Array.isArray(s.type)
    ? (s.type.find((t: string) => t !== 'null') ?? 'null')
    : s.type;
  switch (type) {
    case 'object':
    case undefined: {
      if (!s.properties && type === undefined) return 'x';
      const out: Record<string, unknown> = {};
      for (const key of s.required ?? [])
        out[key] = sampleFromSchema(doc, s.properties?.[key] ?? {}, key);
      return out;
    }
    case 'array':
      return [sampleFromSchema(doc, s.items ?? {}, name)];
    case 'boolean':
      return true;
    case 'integer':
    case 'number': {
      if (typeof s.minimum === 'number') return s.minimum;
      if (typeof s.exclusiveMinimum === 'number') return s.exclusiveMinimum + 1;
      return 1;
    }
    case 'null':
      return null;
    case 'string': {
      if (s.format === 'uuid') return randomUUID();
      if (s.format === 'date-time') return new Date(Date.now() + 30 * 86_400_000).toISOString();
      if (s.format === 'date') return new Date().toISOString().slice(0, 10);
      if (s.format === 'email') return 'someone@example.com';
      if (s.format === 'uri') return 'https://8.8.8.8/hook';
      if (s.pattern === '^[a-z]{2}-[A-Z]{2}$') return 'en-UK';
      return 'x'.repeat(Math.max(1, s.minLength ?? 1));
    }
    default:
      return null;
  }
}

/** Richer valid bodies for the operations we know; anything else gets a body generated from its schema. */
export function validBody(op: Operation, orgId: number, doc: any = loadOpenApi()): unknown {
  const known: Record<string, unknown> = {
    createApiToken: {
      friendly_name: 'intruder',
      enabled: true,
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    },
    updateApiToken: { enabled: false },
    updateOrganisation: {
      name: 'Hijacked',
      email: 'intruder@example.com',
      phone_number: '+442071234567',
    },
    updateSettings: {
      org_id: orgId,
      settings: { alert_on_failure: true, callback_url: 'https://1.1.1.1/intruder' },
    },
    updateUser: { is_active: false },
    createPredefinedText: { org_id: orgId, language: 'en-UK', text_code: 4242, text: 'intruder' },
    updatePredefinedText: { org_id: orgId, text: 'intruder' },
  };
  if (op.operationId in known) return known[op.operationId];
  const body = structuredClone(sampleFromSchema(doc, op.bodySchema)) as Record<string, unknown>;
  if (body && typeof body === 'object' && 'org_id' in body) body.org_id = orgId;
  if (body && typeof body === 'object' && 'request_uuid' in body) body.request_uuid = randomUUID();
  return body;
}
