import type { RecordingQuality } from '@voxkey/engine';

/** The API's `recording_quality` (contract RecordingQualitySchema) from the engine's measures. */
export function recordingQualityFields(q: RecordingQuality) {
  const round = (x: number, digits: number) => Number(x.toFixed(digits));
  return {
    net_speech_s: round(q.netSpeechSeconds, 2),
    snr_db: round(q.snrDb, 1),
    bandwidth_hz: Math.round(q.bandwidthHz),
    spectral_hole_ratio: round(q.spectralHoleRatio, 4),
    decay_rate_db_per_s: Math.round(q.decayRateDbPerS),
  };
}

/** A stored recording quality (JSON of the engine's RecordingQuality); null when none was stored or it does not parse. */
export function parseRecordingQuality(json: string | null): RecordingQuality | null {
  if (!json) return null;
  try {
    const q = JSON.parse(json) as RecordingQuality;
    return [
      q.netSpeechSeconds,
      q.snrDb,
      q.bandwidthHz,
      q.spectralHoleRatio,
      q.decayRateDbPerS,
    ].every(Number.isFinite)
      ? q
      : null;
  } catch {
    return null;
  }
}
