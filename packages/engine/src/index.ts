export { createEngine } from './engine.js';
export type {
  ClipEmbedding,
  EngineOptions,
  EngineStats,
  EngineTimings,
  EnrolmentAnalysis,
  SpoofResult,
  VerificationAnalysis,
  VoiceEngine,
  Voiceprint,
} from './engine.js';
export { EngineError, ERROR_CATEGORIES, isEngineError } from './errors.js';
export type { EngineErrorCategory, EngineErrorCode } from './errors.js';
export { LIMITS, TARGET_SAMPLE_RATE } from './limits.js';
export { decodeBase64Audio } from './base64.js';
export { sniffFormat } from './sniff.js';
export type { AudioFormat } from './sniff.js';
export { decodeAudio, inspectAudio, inspectBytes, DEFAULT_INTAKE_LIMITS } from './intake.js';
export type { AudioInfo, DecodedRecording, IntakeLimits } from './intake.js';
export { decodeWav, encodeWav, parseWavHeader } from './wav.js';
export { decodeMp3 } from './mp3.js';
export { scanMp3 } from './mp3-frames.js';
export { resample } from './resample.js';
export { fbank, fbankCmn, applyCmn, numFrames, FBANK_BINS } from './fbank.js';
export { detectSpeech, speechProbabilities, speechSegments, concatSegments, sileroModelPath, DEFAULT_VAD_OPTIONS } from './vad.js';
export type { SpeechSegment, VadOptions } from './vad.js';
export { embedSpeech, embedFeatures } from './embedding.js';
export { scoreSpoof, spoofWindows, SPOOF_WINDOW, SPOOF_HOP } from './spoof.js';
export {
  cosineSimilarity,
  l2normalize,
  meanEmbedding,
  matchScore,
  decide,
  sigmoid,
  DEFAULT_CALIBRATION,
  DEFAULT_MATCH_THRESHOLD,
} from './scoring.js';
export type { VerificationResult } from './scoring.js';
export { qualityScore, estimateSnrDb, signalStats } from './quality.js';
export { loadManifest, validateManifest, selectModel, verifyModelFile, sha256File, defaultModelsDir, defaultManifestPath } from './manifest.js';
export type { Manifest, ModelEntry, ModelKind, LogisticCalibration } from './manifest.js';
export { pullModel } from './pull.js';
export type { PullOptions, PullResult } from './pull.js';
export { eer, minDcf, cllr, ratesAtThreshold, farAtFrr, fitLogisticCalibration } from './metrics.js';
export { scoreAgainstSamples, DEFAULT_SAMPLE_SCORING_RULE, SAMPLE_SCORING_RULES } from './scoring.js';
export type { SampleScoringRule } from './scoring.js';
export type { AudioCheck } from './audio-check-task.js';
export type { AudioProblem } from './audio-check.js';
