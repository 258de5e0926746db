import { describe, expect, it } from 'vitest';
import {
  planVoiceprint,
  UPGRADE_SWITCH_SAMPLES,
  UPGRADE_TARGET_SAMPLES,
  type VoiceprintSample,
} from '../src/models/voiceprint-models.js';

const sample = (modelId: string, marker: number): VoiceprintSample => ({
  modelId,
  embedding: Float32Array.of(marker),
});
const loaded = new Set(['new', 'old']);

describe('planVoiceprint: which model scores a voiceprint during a speaker-model upgrade', () => {
  it('a voiceprint of the default model: scored with it, nothing to collect', () => {
    const plan = planVoiceprint([sample('new', 1), sample('new', 2)], 'new', loaded);
    expect(plan).toMatchObject({ scoringModel: 'new', collectUpgradeSample: false });
    expect(plan.scoringSamples.map((e) => e[0])).toEqual([1, 2]);
  });

  it('an older voiceprint: scored with its own model, collecting default-model samples until it holds enough', () => {
    const old = [sample('old', 1), sample('old', 2), sample('old', 3)];
    expect(planVoiceprint(old, 'new', loaded)).toMatchObject({
      scoringModel: 'old',
      collectUpgradeSample: true,
    });
    const withOne = planVoiceprint([...old, sample('new', 9)], 'new', loaded);
    expect(withOne).toMatchObject({ scoringModel: 'old', collectUpgradeSample: true });
    expect(withOne.scoringSamples.map((e) => e[0])).toEqual([1, 2, 3]);
    const switched = planVoiceprint(
      [...old, ...Array.from({ length: UPGRADE_SWITCH_SAMPLES }, (_, i) => sample('new', 10 + i))],
      'new',
      loaded,
    );
    expect(switched).toMatchObject({
      scoringModel: 'new',
      collectUpgradeSample: UPGRADE_SWITCH_SAMPLES < UPGRADE_TARGET_SAMPLES,
    });
    expect(switched.scoringSamples.map((e) => e[0])).toEqual([10, 11]);
    const full = planVoiceprint(
      [...old, ...Array.from({ length: UPGRADE_TARGET_SAMPLES }, (_, i) => sample('new', 10 + i))],
      'new',
      loaded,
    );
    expect(full).toMatchObject({ scoringModel: 'new', collectUpgradeSample: false });
  });

  it('several older models: the one with the most samples scores', () => {
    const plan = planVoiceprint(
      [sample('old', 1), sample('older', 2), sample('older', 3)],
      'new',
      new Set(['new', 'old', 'older']),
    );
    expect(plan.scoringModel).toBe('older');
  });

  it('an older model that is no longer loaded: the default samples alone, else voiceprint_model_mismatch', () => {
    expect(planVoiceprint([sample('gone', 1), sample('new', 2)], 'new', loaded)).toMatchObject({
      scoringModel: 'new',
      collectUpgradeSample: true,
    });
    expect(() => planVoiceprint([sample('gone', 1)], 'new', loaded)).toThrow(
      expect.objectContaining({ code: 'voiceprint_model_mismatch' }),
    );
  });
});
