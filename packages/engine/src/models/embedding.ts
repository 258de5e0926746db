import * as ort from 'onnxruntime-node';
import { FBANK_BINS, fbankCmn } from '../features/fbank.js';

export interface SpeakerModelIo {
  inputName: string;
  outputName: string;
  /** fbank input scale the model was trained with (fbank.ts). */
  inputScale: number;
}

/** Run the speaker model on CMN'd fbank features [1, T, 80] -> embedding [D]. */
export async function embedFeatures(
  session: ort.InferenceSession,
  io: Pick<SpeakerModelIo, 'inputName' | 'outputName'>,
  feats: Float32Array,
  frames: number,
): Promise<Float32Array> {
  const out = await session.run({
    [io.inputName]: new ort.Tensor('float32', feats, [1, frames, FBANK_BINS]),
  });
  const data = out[io.outputName]!.data as Float32Array;
  return Float32Array.from(data);
}

/** Embedding of 16 kHz speech (fbank + CMN computed over exactly these samples). */
export async function embedSpeech(
  session: ort.InferenceSession,
  io: SpeakerModelIo,
  speech: Float32Array,
): Promise<Float32Array> {
  const { data, frames } = fbankCmn(speech, io.inputScale);
  return embedFeatures(session, io, data, frames);
}
