import { retryPolicies, type RetryPolicy } from './generated/retry-policies.js';

export type { RetryPolicy };

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  policy: RetryPolicy;
}

/** Each operation's path template as a pattern over the end of a URL's path (the base path varies). */
const operations: Operation[] = Object.entries(retryPolicies)
  .map(([key, policy]) => {
    const [method, template] = key.split(' ') as [string, string];
    const source = template
      .split(/\{[^}]+\}/)
      .map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('[^/]+');
    return { method, template, pattern: new RegExp(`${source}/?$`), policy };
  })
  // The longest template first: the most specific one wins where several match.
  .sort((a, b) => b.template.length - a.template.length);

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether the SDK may repeat `method url` after a lost answer or a gateway error, from the
 * contract's `x-voxkey-retry` extension: `safe` (reads, DELETE, enrolment and verification,
 * which the server de-duplicates by `request_uuid`), `idempotency-key` (POSTs without a natural
 * key: repeated with the same `Idempotency-Key` header) or `never` (PATCH). A request the contract
 * does not know is `safe` for GET/HEAD/OPTIONS and `never` otherwise.
 */
export function retryPolicy(method: string, url: string): RetryPolicy {
  const m = method.toUpperCase();
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    path = url;
  }
  for (const operation of operations) {
    if (operation.method === m && operation.pattern.test(path)) return operation.policy;
  }
  return SAFE_METHODS.has(m) ? 'safe' : 'never';
}

/**
 * Whether repeating `method url` is safe when the SDK does it: true for the contract's `safe`
 * operations and for the `idempotency-key` ones (the SDK sends the same key on every attempt).
 */
export function isIdempotent(method: string, url: string): boolean {
  return retryPolicy(method, url) !== 'never';
}
