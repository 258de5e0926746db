import { FLACDecoder } from '@wasm-audio-decoders/flac';
import { encodeWav } from '../audio/wav.js';

/** FLAC file bytes as 16-bit WAV bytes (the engine's intake takes WAV and MP3), for the tools that read the data set's lossless recordings. */
export async function flacToWav(bytes: Uint8Array): Promise<Uint8Array> {
  // A decoder per file: the tools decode concurrently, and one decoder holds one stream's state.
  const decoder = new FLACDecoder();
  await decoder.ready;
  try {
    const { channelData, sampleRate } = await decoder.decodeFile(bytes);
    return encodeWav(channelData[0]!, sampleRate);
  } finally {
    decoder.free();
  }
}
