import http from 'node:http';

/** Size of each chunk an upload writes. */
export const UPLOAD_CHUNK_BYTES = 64 * 1024;
const CHUNK = Buffer.alloc(UPLOAD_CHUNK_BYTES, 'a');

export interface StreamedUpload {
  /** Status of the answer, or null when the connection ended without one. */
  status: number | null;
  /** Bytes of body the client had written when the answer arrived. */
  sentWhenAnswered: number;
  /** Whether the client had finished the body when the answer arrived. */
  finishedWhenAnswered: boolean;
}

/**
 * POSTs a chunked JSON body of up to `totalBytes`, one chunk at a time, and stops writing as soon
 * as the server answers (or the connection closes).
 */
export function streamUpload(
  baseUrl: string,
  path: string,
  options: { token?: string; totalBytes: number; chunkDelayMs?: number; timeoutMs?: number },
): Promise<StreamedUpload> {
  const url = new URL(`${baseUrl}${path}`);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let finished = false;
    let settled = false;
    const settle = (status: number | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ status, sentWhenAnswered: sent, finishedWhenAnswered: finished });
      req.destroy();
    };
    const timer = setTimeout(() => {
      if (!settled) {
        settled = true;
        req.destroy();
        reject(new Error(`no answer after ${sent} bytes`));
      }
    }, options.timeoutMs ?? 10_000);
    const req = http.request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      agent: false,
      headers: {
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      },
    });
    req.on('response', (res) => {
      res.resume();
      settle(res.statusCode ?? null);
    });
    req.on('error', () => settle(null));
    req.write('{"padding":"');
    const writeNext = () => {
      if (settled) return;
      if (sent >= options.totalBytes) {
        finished = true;
        req.end('"}');
        return;
      }
      sent += CHUNK.length;
      const more = req.write(CHUNK);
      const delay = options.chunkDelayMs ?? 0;
      if (more) setTimeout(writeNext, delay);
      else req.once('drain', () => setTimeout(writeNext, delay));
    };
    writeNext();
  });
}
