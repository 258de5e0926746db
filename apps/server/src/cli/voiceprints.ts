import {
  compatibilitySpeakerModels,
  defaultManifestPath,
  defaultModelsDir,
  loadManifest,
  planVoiceprint,
  selectModel,
  voiceprintModelId,
} from '@voxkey/engine';
import { z } from 'zod';
import type { AppConfig } from '../config.js';
import type { Database } from '../db/connection.js';
import { sampleModelCounts } from '../repositories/voiceprints.js';
import { requireOrganisation } from './listing.js';
import { JsonOption, OrgIdOption, parseOptions } from './options.js';
import { type CliIo, printJson, printLine } from './output.js';

const Options = z.object({ org: OrgIdOption.optional(), json: JsonOption });

export interface VoiceprintModelCount {
  org_id: number;
  /** The speaker model that scores these voiceprints now (engine voiceprint-models.ts). */
  model: string;
  voiceprints: number;
  /** Of those, voiceprints that still hold samples of an older model (their upgrade is not complete). */
  upgrading: number;
}

/**
 * Voiceprints per speaker model per organisation: which model scores each one today, and how many
 * are still being upgraded to the default. An older model may be dropped once no voiceprint needs it.
 */
export async function voiceprintModels(
  options: unknown,
  database: Database,
  config: AppConfig,
  io: CliIo,
): Promise<void> {
  const values = parseOptions(Options, options);
  if (values.org !== undefined) await requireOrganisation(database, values.org);
  const modelsDir = config.VOXKEY_MODELS_DIR ?? defaultModelsDir();
  const manifest = await loadManifest(defaultManifestPath(modelsDir));
  const defaultModel = selectModel(manifest, 'speaker', modelsDir);
  const defaultId = voiceprintModelId(defaultModel);
  const loaded = new Set([
    defaultId,
    ...compatibilitySpeakerModels(manifest, modelsDir, defaultModel).map(voiceprintModelId),
  ]);

  const voiceprints = new Map<
    number,
    { orgId: number; samples: { modelId: string; embedding: Float32Array }[] }
  >();
  for (const row of await sampleModelCounts(database.db, values.org)) {
    const entry = voiceprints.get(row.voiceprint_id) ?? { orgId: row.org_id, samples: [] };
    for (let i = 0; i < Number(row.samples); i++)
      entry.samples.push({ modelId: row.model_id, embedding: new Float32Array(0) });
    voiceprints.set(row.voiceprint_id, entry);
  }
  const counts = new Map<string, VoiceprintModelCount>();
  for (const { orgId, samples } of voiceprints.values()) {
    let model: string;
    try {
      model = planVoiceprint(samples, defaultId, loaded).scoringModel;
    } catch {
      model = `${[...new Set(samples.map((s) => s.modelId))].join('+')} (not loaded: re-enrol)`;
    }
    const key = `${orgId}\u0000${model}`;
    const count = counts.get(key) ?? { org_id: orgId, model, voiceprints: 0, upgrading: 0 };
    count.voiceprints++;
    if (samples.some((s) => s.modelId !== defaultId)) count.upgrading++;
    counts.set(key, count);
  }
  const results = [...counts.values()].sort(
    (a, b) => a.org_id - b.org_id || a.model.localeCompare(b.model),
  );
  if (values.json) return printJson(io, { default_model: defaultModel.name, results });
  printLine(io, `Default speaker model: ${defaultModel.name}`);
  if (results.length === 0) return printLine(io, 'No voiceprints.');
  printLine(io, 'ORG\tMODEL\tVOICEPRINTS\tUPGRADING');
  for (const r of results)
    printLine(io, `${r.org_id}\t${r.model}\t${r.voiceprints}\t${r.upgrading}`);
}
