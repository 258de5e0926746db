// `@voxkey/engine/dsp`: the signal-processing stages the engine runs inside its workers, for tools,
// tests and experiments. Not needed to run the engine; may change between versions.
export { sniffFormat } from './sniff.js';
export { decodeAudio } from './intake.js';
export type { DecodedRecording } from './intake.js';
export { decodeWav, encodeWav, parseWavHeader } from './wav.js';
export type { DecodedAudio, WavInfo } from './wav.js';
export { decodeMp3 } from './mp3.js';
export { scanMp3 } from './mp3-frames.js';
export { resample } from './resample.js';
export { fbank, fbankCmn, applyCmn, numFrames, FBANK_BINS } from './fbank.js';
export { detectSpeech, speechProbabilities, speechSegments, concatSegments, sileroModelPath, DEFAULT_VAD_OPTIONS } from './vad.js';
export type { SpeechSegment, VadOptions } from './vad.js';
export { embedSpeech, embedFeatures } from './embedding.js';
export { scoreSpoof, spoofWindows, SPOOF_WINDOW, SPOOF_HOP } from './spoof.js';
export { l2normalize, meanEmbedding, sigmoid } from './scoring.js';
export { qualityScore, estimateSnrDb, signalStats } from './quality.js';
export { eer, minDcf, cllr, ratesAtThreshold, farAtFrr, fitLogisticCalibration } from './metrics.js';
