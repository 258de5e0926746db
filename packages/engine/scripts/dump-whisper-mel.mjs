// node packages/engine/scripts/dump-whisper-mel.mjs OUT_DIR CLIP... : for each clip, the engine's own decode + resample
// (<i>.pcm.f32, 16 kHz mono) and its Whisper log-mel (<i>.mel.f32, [80, T]) as raw little-endian float32,
// for the import parity check (python -m training.voxkey_train.import_whisper).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeAudio, whisperLogMel } from '@voxkey/engine/dsp';

const [outDir, ...clips] = process.argv.slice(2);
const limits = { maxFileBytes: 64 << 20, maxDurationSeconds: 600, minDurationSeconds: 0 };
for (const [i, clip] of clips.entries()) {
  const { samples } = await decodeAudio(new Uint8Array(await readFile(clip)), limits);
  const { data } = await whisperLogMel(samples);
  await writeFile(
    join(outDir, `${i}.pcm.f32`),
    new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength),
  );
  await writeFile(
    join(outDir, `${i}.mel.f32`),
    new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  );
}
