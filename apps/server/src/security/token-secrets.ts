import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { TokenKind } from '../db/types.js';

const PREFIX: Record<TokenKind, string> = { live: 'vk_live_', trial: 'vk_trial_' };
const TOKEN_PATTERN = /^vk_(live|trial)_[A-Za-z0-9_-]{43}$/;

/** 256 random bits, base64url, behind a prefix that says what it is (and lets secret scanners find leaks). */
export function generateBearer(kind: TokenKind): string {
  return PREFIX[kind] + randomBytes(32).toString('base64url');
}

/** The token has 256 bits of entropy, so a plain SHA-256 is a safe stored form (no salt or slow hash needed). */
export function hashBearer(bearer: string): string {
  return createHash('sha256').update(bearer, 'utf8').digest('hex');
}

export function looksLikeBearer(value: string): boolean {
  return TOKEN_PATTERN.test(value);
}

export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Whether an `Authorization` header carries exactly `Bearer <expected>`, compared in constant time. */
export function bearerMatches(header: string | undefined, expected: string): boolean {
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
  return presented !== undefined && sameHash(hashBearer(presented), hashBearer(expected));
}
