import { readFile } from 'node:fs/promises';
import { toVoiceData } from './voice.js';

export * from './index.js';

/**
 * Reads a WAV or MP3 file and returns it base64-encoded as `voice_data` (Node, Deno, Bun).
 *
 * ```ts
 * import { createVoxkeyClient, readAudioFile } from '@voxkey/sdk/node';
 * await voxkey.enrollments.create({ external_id: 'customer-42', voice_data: await readAudioFile('hello.wav') });
 * ```
 */
export async function readAudioFile(path: string | URL): Promise<string> {
  const bytes = await readFile(path);
  if (bytes.byteLength === 0) throw new TypeError(`readAudioFile: ${String(path)} is empty`);
  return toVoiceData(bytes);
}
