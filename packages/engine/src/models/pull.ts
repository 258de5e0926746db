import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { EngineError } from '../errors.js';
import { defaultManifestPath, defaultModelsDir, loadManifest, sha256File } from './manifest.js';

export interface PullOptions {
  manifestPath?: string;
  modelsDir?: string;
  fetchImpl?: typeof fetch;
  /** Re-download even when a file with the right sha256 is present. */
  force?: boolean;
  onProgress?: (receivedBytes: number, totalBytes: number | null) => void;
}

export interface PullResult {
  name: string;
  path: string;
  sha256: string;
  bytes: number;
  downloaded: boolean;
}

function isLocalhost(url: URL): boolean {
  return url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
}

/**
 * Download a manifest-listed model over HTTPS (plain http only for localhost, for tests),
 * stream it to a temporary file next to the target, verify its sha256, then rename atomically.
 */
export async function pullModel(name: string, opts: PullOptions = {}): Promise<PullResult> {
  const modelsDir = opts.modelsDir ?? defaultModelsDir();
  const manifest = await loadManifest(opts.manifestPath ?? defaultManifestPath(modelsDir));
  const entry = manifest.models.find((m) => m.name === name);
  if (!entry)
    throw new EngineError('model_not_found', `model ${name} is not in the manifest`, { name });
  const target = join(modelsDir, entry.file);
  if (!opts.force) {
    const existing = await sha256File(target).catch(() => null);
    if (existing === entry.sha256.toLowerCase())
      return { name, path: target, sha256: existing, bytes: -1, downloaded: false };
  }
  if (!entry.url)
    throw new EngineError(
      'model_not_found',
      entry.build
        ? `model ${name} is built, not downloaded: run \`${entry.build}\``
        : `model ${name} has no download url (bundled models ship with the repository)`,
      { name },
    );
  const url = new URL(entry.url);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLocalhost(url))) {
    throw new EngineError(
      'download_failed',
      `refusing to download ${name} over ${url.protocol.replace(':', '')}; only HTTPS is allowed`,
      { url: entry.url },
    );
  }
  await mkdir(modelsDir, { recursive: true });
  const tmp = join(modelsDir, `.${entry.file}.${randomBytes(6).toString('hex')}.part`);
  const fetchImpl = opts.fetchImpl ?? fetch;
  try {
    let res: Response;
    try {
      res = await fetchImpl(url, { redirect: 'follow' });
    } catch (e) {
      throw new EngineError(
        'download_failed',
        `download of ${name} from ${url} failed: ${(e as Error).message}`,
        { url: entry.url },
        { cause: e },
      );
    }
    if (res.url && new URL(res.url).protocol !== 'https:' && !isLocalhost(new URL(res.url))) {
      throw new EngineError(
        'download_failed',
        `download of ${name} was redirected to a non-HTTPS address`,
        { url: res.url },
      );
    }
    if (!res.ok || !res.body)
      throw new EngineError(
        'download_failed',
        `download of ${name} from ${url} failed: HTTP ${res.status}`,
        { status: res.status },
      );
    const total = Number(res.headers.get('content-length')) || null;
    const hash = createHash('sha256');
    let bytes = 0;
    const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream);
    body.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      bytes += chunk.length;
      opts.onProgress?.(bytes, total);
    });
    await pipeline(body, createWriteStream(tmp, { flags: 'wx' }));
    const actual = hash.digest('hex');
    if (actual !== entry.sha256.toLowerCase()) {
      throw new EngineError(
        'model_integrity',
        `downloaded ${name} has sha256 ${actual}, expected ${entry.sha256}; discarded`,
        {
          expected: entry.sha256,
          actual,
        },
      );
    }
    await rename(tmp, target);
    return { name, path: target, sha256: actual, bytes, downloaded: true };
  } finally {
    await rm(tmp, { force: true });
  }
}
