import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  ConfigError,
  ENCRYPTION_KEY_PATTERN,
  encryptionKeyBytes,
  normaliseEncryptionKey,
} from '../config.js';

const VERSION = 'v1';
const KEY_FILE = 'encryption.key';

/** AES-256-GCM with a random 96-bit nonce per value; the text form is `v1.<nonce>.<tag>.<ciphertext>` in base64url. */
export interface Sealer {
  seal(plain: Uint8Array, associatedData: string): string;
  open(sealed: string, associatedData: string): Buffer;
  /** Binary form for large values (queued recordings): version byte 1, nonce, tag, ciphertext. */
  sealBytes(plain: Uint8Array, associatedData: string): Buffer;
  openBytes(sealed: Uint8Array, associatedData: string): Buffer;
}

const BINARY_VERSION = 1;

export function createSealer(key: Buffer): Sealer {
  if (key.length !== 32) throw new Error('The encryption key must be 32 bytes (AES-256)');
  return {
    seal(plain, associatedData) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(Buffer.from(associatedData, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
      return [VERSION, nonce, cipher.getAuthTag(), ciphertext]
        .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
        .join('.');
    },
    sealBytes(plain, associatedData) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(Buffer.from(associatedData, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
      return Buffer.concat([Buffer.from([BINARY_VERSION]), nonce, cipher.getAuthTag(), ciphertext]);
    },
    openBytes(sealed, associatedData) {
      const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
      if (bytes.length < 29 || bytes[0] !== BINARY_VERSION)
        throw new Error('Unrecognised sealed value');
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(1, 13));
      decipher.setAAD(Buffer.from(associatedData, 'utf8'));
      decipher.setAuthTag(bytes.subarray(13, 29));
      return Buffer.concat([decipher.update(bytes.subarray(29)), decipher.final()]);
    },
    open(sealed, associatedData) {
      const [version, nonce, tag, ciphertext] = sealed.split('.');
      if (version !== VERSION || !nonce || !tag || ciphertext === undefined)
        throw new Error('Unrecognised sealed value');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
      decipher.setAAD(Buffer.from(associatedData, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([
        decipher.update(Buffer.from(ciphertext, 'base64url')),
        decipher.final(),
      ]);
    },
  };
}

/** Parses VOXKEY_ENCRYPTION_KEY (or the development key file): 64 hex characters or base64 of 32 bytes. */
export function parseEncryptionKey(value: string): Buffer {
  if (!ENCRYPTION_KEY_PATTERN.test(normaliseEncryptionKey(value)))
    throw new ConfigError(
      'VOXKEY_ENCRYPTION_KEY must be 32 bytes: 64 hex characters or base64 (43-44 characters)',
    );
  return encryptionKeyBytes(value);
}

/**
 * The configured key, or in development a key generated once into the data directory.
 * Production refuses to start without an explicit key.
 */
export function resolveEncryptionKey(options: {
  configured?: string;
  dataDir: string;
  allowGenerated: boolean;
  log: (line: string) => void;
}): Buffer {
  if (options.configured) return parseEncryptionKey(options.configured);
  if (!options.allowGenerated)
    throw new ConfigError(
      'VOXKEY_ENCRYPTION_KEY is required in production (32 bytes, hex or base64; e.g. openssl rand -hex 32)',
    );
  const file = path.join(options.dataDir, KEY_FILE);
  if (existsSync(file)) return parseEncryptionKey(readFileSync(file, 'utf8'));
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600 });
  options.log(
    `Generated a development encryption key at ${file}. Set VOXKEY_ENCRYPTION_KEY in production and keep it safe: voiceprints cannot be read without it.`,
  );
  return key;
}
