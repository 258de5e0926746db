// `@voxkey/engine/dsp`: the signal-processing stages the engine runs inside its workers, for tools,
// tests and experiments. Not needed to run the engine; may change between versions.
export { sniffFormat } from './audio/sniff.js';
export { decodeAudio } from './audio/intake.js';
export type { DecodedRecording } from './audio/intake.js';
export { decodeWav, encodeWav, parseWavHeader } from './audio/wav.js';
export type { DecodedAudio, WavInfo } from './audio/wav.js';
export { decodeMp3 } from './audio/mp3.js';
export { scanMp3 } from './audio/mp3-frames.js';
export { resample } from './audio/resample.js';
export { fbank, fbankCmn, applyCmn, numFrames, FBANK_BINS } from './features/fbank.js';
export {
  detectSpeech,
  speechProbabilities,
  speechSegments,
  concatSegments,
  sileroModelPath,
  DEFAULT_VAD_OPTIONS,
} from './features/vad.js';
export type { SpeechSegment, VadOptions } from './features/vad.js';
export { embedSpeech, embedFeatures } from './models/embedding.js';
export {
  scoreSpoof,
  spoofWindows,
  spoofSegments,
  SPOOF_WINDOW,
  SPOOF_HOP,
  SPOOF_MAX_SEGMENT,
} from './models/spoof.js';
export type { SpoofInput } from './models/spoof.js';
export { spoofBands, spoofFrames, SPOOF_BANDS } from './features/spoof-bands.js';
export {
  whisperLogMel,
  WHISPER_MEL_BINS,
  WHISPER_HOP,
  WHISPER_CHUNK_FRAMES,
} from './features/whisper-mel.js';
export type { WhisperMel } from './features/whisper-mel.js';
export { sigmoid } from './math.js';
export {
  WhisperVocabulary,
  loadVocabulary,
  parseVocabulary,
  bytesToUnicode,
  WHISPER_FIRST_SPECIAL,
  WHISPER_VOCABULARY_FILE,
} from './phrase/vocabulary.js';
export { normalizePhrase, phraseWords, DIGIT_WORDS, FILLER_WORDS } from './phrase/normalise.js';
export {
  loopReadingLengths,
  loopTolerantMatchScore,
  matchScore,
  wordEditDistance,
  windowWordEditDistance,
} from './phrase/match.js';
export type { MatchOptions } from './phrase/match.js';
export {
  generateDigitChallenge,
  DEFAULT_CHALLENGE_DIGITS,
  DIGIT_CHALLENGE_PASS,
  MAX_CHALLENGE_DIGITS,
} from './phrase/challenge.js';
export type { DigitChallenge } from './phrase/challenge.js';
export { l2normalize, meanEmbedding } from './scoring/scoring.js';
export { qualityScore, estimateSnrDb, signalStats } from './scoring/quality.js';
export {
  eer,
  minDcf,
  cllr,
  ratesAtThreshold,
  farAtFrr,
  fitLogisticCalibration,
} from './scoring/metrics.js';
