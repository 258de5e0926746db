/**
 * Summaries of V8 CPU profiles (`node --cpu-prof`, one file per thread): self time per function and
 * per package, and time inside each engine stage (inclusive), so a bench result says where the
 * time went. Used by the engine's `npm run bench -- --profile` and the server's `npm run bench:profile`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Functions whose inclusive time is a stage of the analysis (the names in src/). */
export const STAGE_FUNCTIONS: Record<string, string> = {
  decodeWav: 'decode WAV',
  decodeMp3: 'decode MP3',
  resample: 'resample',
  signalStats: 'signal stats',
  speechProbabilities: 'VAD (Silero)',
  speechSegments: 'VAD segmentation',
  concatSegments: 'concatenate speech',
  fbank: 'fbank',
  applyCmn: 'CMN',
  embedFeatures: 'speaker model',
  scoreSpoof: 'spoof model (incl. windowing and, for v4, its band features)',
  spoofBands: 'spoof band features',
  estimateSnrDb: 'SNR estimate',
};

const ORT_STAGE = 'onnxruntime inference (native, all models)';

export interface ProfileSummary {
  file: string;
  thread: string;
  wallMs: number;
  sampledMs: number;
  idleMs: number;
  stagesMs: Record<string, number>;
  topSelf: { fn: string; ms: number; share: number }[];
  /** Self time by npm package (node internals, native code and this repository's packages named as such). */
  byPackage: { pkg: string; ms: number; share: number }[];
}

export function packageOf(url: string): string {
  if (!url) return '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const workspace = /\/(apps|packages)\/([^/]+)\//.exec(url);
  return workspace ? `voxkey ${workspace[2]}` : url;
}

const label = (n: ProfileNode) => {
  const f = n.callFrame;
  const where = f.url ? `${basename(f.url)}:${f.lineNumber + 1}` : '';
  return `${f.functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
};

export function summariseProfile(file: string, top = 15): ProfileSummary {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++)
    self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000);
  const selfByFn = new Map<string, number>();
  const selfByPackage = new Map<string, number>();
  const stages: Record<string, number> = {};
  let idle = 0;
  let total = 0;
  for (const [id, ms] of self) {
    const node = byId.get(id)!;
    total += ms;
    const name = node.callFrame.functionName;
    if (name === '(idle)') idle += ms;
    selfByFn.set(label(node), (selfByFn.get(label(node)) ?? 0) + ms);
    if (name !== '(idle)' && name !== '(program)') {
      const pkg =
        name === '(garbage collector)' ? 'garbage collector' : packageOf(node.callFrame.url);
      selfByPackage.set(pkg, (selfByPackage.get(pkg) ?? 0) + ms);
    }
    // Inclusive stage time: the innermost stage function on the stack gets the sample. onnxruntime-node
    // runs each session.run from a setImmediate callback, so native inference has no caller on its
    // stack: it is counted as one stage for all models.
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const frame = byId.get(cur)!.callFrame;
      const stage =
        STAGE_FUNCTIONS[frame.functionName] ??
        (frame.url.includes('onnxruntime-node') ? ORT_STAGE : undefined);
      if (stage) {
        stages[stage] = (stages[stage] ?? 0) + ms;
        break;
      }
    }
  }
  const busy = total - idle;
  const share = (ms: number) => Math.round((ms / Math.max(busy, 1e-9)) * 1000) / 1000;
  const topSelf = [...selfByFn.entries()]
    .filter(([fn]) => !fn.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([fn, ms]) => ({ fn, ms: Math.round(ms), share: share(ms) }));
  const byPackage = [...selfByPackage.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([pkg, ms]) => ({ pkg, ms: Math.round(ms), share: share(ms) }));
  const round = (x: number) => Math.round(x);
  const thread = /\.(\d+)\.(\d+)\.\d+\.cpuprofile$/.exec(file)?.[2] ?? '?';
  return {
    file: basename(file),
    thread: thread === '0' ? 'main' : `worker ${thread}`,
    wallMs: round((p.endTime - p.startTime) / 1000),
    sampledMs: round(total),
    idleMs: round(idle),
    stagesMs: Object.fromEntries(
      Object.entries(stages)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => [k, round(v)]),
    ),
    topSelf,
    byPackage,
  };
}

export function summariseProfiles(dir: string): ProfileSummary[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort()
    .map((f) => summariseProfile(join(dir, f)));
}
