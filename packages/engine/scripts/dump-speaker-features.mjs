// node packages/engine/scripts/dump-speaker-features.mjs OUT_DIR INPUT_SCALE LIST_FILE : the speaker model's input as
// the engine computes it (analysis.ts): decode + resample, Silero VAD, the speech segments joined (the
// whole clip when under 0.5 s of speech), Kaldi fbank with CMN; one raw little-endian float32 [T, 80]
// file <i>.fbank.f32 per line of LIST_FILE (clip paths), for the speaker-model quantisation.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import {
  concatSegments,
  decodeAudio,
  detectSpeech,
  fbankCmn,
  sileroModelPath,
} from '@voxkey/engine/dsp';

const [outDir, scale, listFile] = process.argv.slice(2);
const clips = (await readFile(listFile, 'utf8')).split('\n').filter(Boolean);
const limits = { maxFileBytes: 64 << 20, maxDurationSeconds: 600, minDurationSeconds: 0 };
const vad = await ort.InferenceSession.create(sileroModelPath(), {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
});
for (const [i, clip] of clips.entries()) {
  const { samples } = await decodeAudio(new Uint8Array(await readFile(clip)), limits);
  const { segments, netSpeechSeconds } = await detectSpeech(vad, samples);
  const speech = netSpeechSeconds >= 0.5 ? concatSegments(samples, segments) : samples;
  const { data } = fbankCmn(speech, Number(scale));
  await writeFile(
    join(outDir, `${i}.fbank.f32`),
    new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  );
}
