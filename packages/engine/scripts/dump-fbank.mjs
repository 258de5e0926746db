// node packages/engine/scripts/dump-fbank.mjs OUT_DIR INPUT_SCALE CLIP... : for each clip, the engine's own decode +
// resample (<i>.pcm.f32, 16 kHz mono) and its Kaldi fbank with CMN (<i>.fbank.f32, [T, 80]) as
// raw little-endian float32, for the import parity check (python -m training.voxkey_train.import_pretrained).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeAudio, fbankCmn } from '@voxkey/engine/dsp';

const [outDir, scale, ...clips] = process.argv.slice(2);
const limits = { maxFileBytes: 64 << 20, maxDurationSeconds: 600, minDurationSeconds: 0 };
for (const [i, clip] of clips.entries()) {
  const { samples } = await decodeAudio(new Uint8Array(await readFile(clip)), limits);
  const { data } = fbankCmn(samples, Number(scale));
  await writeFile(
    join(outDir, `${i}.pcm.f32`),
    new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength),
  );
  await writeFile(
    join(outDir, `${i}.fbank.f32`),
    new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  );
}
