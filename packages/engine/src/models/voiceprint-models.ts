import { EngineError } from '../errors.js';

/** One stored sample of a voiceprint: the embedding of one recording by one speaker model. */
export interface VoiceprintSample {
  modelId: string;
  embedding: Float32Array;
}

/**
 * Upgrades that lock nobody out: a voiceprint made with an older speaker model is scored with that
 * model, and each verification it passes (not a deepfake) may give it a sample of the default model.
 * Once it holds UPGRADE_SWITCH_SAMPLES of those, the default model scores it; at UPGRADE_TARGET_SAMPLES
 * the older samples are no longer needed (the server deletes them). Two, not one, so a single
 * impostor who slips past the older model cannot become the whole new voiceprint.
 */
export const UPGRADE_SWITCH_SAMPLES = 2;
export const UPGRADE_TARGET_SAMPLES = 3;

export interface VoiceprintPlan {
  /** The speaker model that scores this verification. */
  scoringModel: string;
  /** The samples it scores against (all of that model). */
  scoringSamples: Float32Array[];
  /** Whether the default model's embedding of the probe should be offered as a new sample. */
  collectUpgradeSample: boolean;
}

export function planVoiceprint(
  samples: readonly VoiceprintSample[],
  defaultModel: string,
  loadedModels: ReadonlySet<string>,
): VoiceprintPlan {
  const byModel = new Map<string, Float32Array[]>();
  for (const sample of samples)
    byModel.set(sample.modelId, [...(byModel.get(sample.modelId) ?? []), sample.embedding]);
  const current = byModel.get(defaultModel) ?? [];
  const older = [...byModel.entries()].filter(([model]) => model !== defaultModel);
  if (older.length === 0)
    return { scoringModel: defaultModel, scoringSamples: current, collectUpgradeSample: false };

  const collectUpgradeSample = current.length < UPGRADE_TARGET_SAMPLES;
  if (current.length >= UPGRADE_SWITCH_SAMPLES)
    return { scoringModel: defaultModel, scoringSamples: current, collectUpgradeSample };
  const [scoringModel, scoringSamples] =
    older
      .filter(([model]) => loadedModels.has(model))
      .sort((a, b) => b[1].length - a[1].length)[0] ?? [];
  if (scoringModel && scoringSamples) return { scoringModel, scoringSamples, collectUpgradeSample };
  // The older model is no longer served: the default model's samples alone, when there are any.
  if (current.length > 0)
    return { scoringModel: defaultModel, scoringSamples: current, collectUpgradeSample };
  const models = older.map(([model]) => model);
  throw new EngineError(
    'voiceprint_model_mismatch',
    `the voiceprint was made by ${models.join(', ')}, which this server no longer loads (it runs ${[...loadedModels].join(', ')}); re-enrol the user`,
    {
      voiceprintModels: models,
      engineModels: [...loadedModels],
    },
  );
}
