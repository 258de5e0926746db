/** Markdown tables from the eval and bench JSON results (printed by the tools, written into docs by `report`). */
import { describeProjection } from '../scoring/projection.js';
import { describeComparison } from '../scoring/plda.js';

const pct = (x: number | undefined) =>
  x === undefined || x === null ? '-' : `${(100 * x).toFixed(2)}%`;
const f1 = (x: number | undefined) => (x === undefined ? '-' : x.toFixed(1));

interface SvGroup {
  targets: number;
  nontargets: number;
  eer?: number;
  minDcf001?: number;
  far?: number;
  frr?: number;
  cllr?: number;
  actualThreshold?: number;
}
interface CmGroup {
  bonafide: number;
  spoof: number;
  eer?: number;
  farAt1PctFrr?: number;
  farAtDefault?: number;
  frrAtDefault?: number;
}

export interface EvalResult {
  command: string;
  date: string;
  speakerModel: { name: string; sha256: string };
  spoofModel: { name: string; sha256: string };
  clips: { total: number; failed: number };
  sv?: {
    trials: number;
    calibration: { a: number; b: number; source: string };
    fittedCalibrationOnTheseTrials: { a: number; b: number };
    groups: Record<string, SvGroup>;
    pooledWithFittedCalibration: SvGroup;
    pooledOperatingPoints?: { matchScore: number; far: number; frr: number }[];
    scoreNormalization?: { method: string; cohortSpeakers: number; topK: number } | null;
    embeddingProjection?: { method: string; outputDim: number } | null;
    plda?: { method: string } | null;
    crossValidatedOperatingPoint?: {
      method: string;
      maxFar: number;
      groups: Record<string, { targets: number; nontargets: number; far: number; frr: number }>;
    };
  };
  cm?: {
    trials: number;
    defaultThreshold?: number;
    groups: Record<string, CmGroup>;
    bonafideFlagged?: Record<string, { bonafide: number; flagged: number }>;
    enrolmentThreshold?: number;
    bonafideFlaggedAtEnrolment?: Record<string, { bonafide: number; flagged: number }>;
    spoofAcceptedAtEnrolment?: number;
  };
  timing: { wallSeconds: number };
}

export function renderEval(r: EvalResult): string {
  const lines: string[] = [];
  const threshold = r.sv?.groups.pooled?.actualThreshold ?? '?';
  if (r.sv) {
    lines.push(
      `Speaker verification: model \`${r.speakerModel.name}\` (sha256 ${r.speakerModel.sha256.slice(0, 12)}...), ${r.sv.trials} trials; ${r.sv.embeddingProjection ? `${describeProjection(r.sv.embeddingProjection)}, ` : ''}${r.sv.scoreNormalization ? `AS-norm scoring (cohort of ${r.sv.scoreNormalization.cohortSpeakers} train speakers, top-${r.sv.scoreNormalization.topK})` : `${describeComparison(r.sv.plda)} scoring`}; ` +
        `FAR/FRR at match_score >= ${threshold} with calibration a=${r.sv.calibration.a.toFixed(3)}, b=${r.sv.calibration.b.toFixed(3)} (${r.sv.calibration.source}); Cllr of that calibration.`,
    );
    lines.push('');
    lines.push(
      '| trials | targets | non-targets | EER | minDCF (P_target 0.01) | FAR | FRR | Cllr (bits) |',
    );
    lines.push('|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const [k, g] of Object.entries(r.sv.groups)) {
      lines.push(
        `| ${k} | ${g.targets} | ${g.nontargets} | ${pct(g.eer)} | ${g.minDcf001?.toFixed(3) ?? '-'} | ${pct(g.far)} | ${pct(g.frr)} | ${g.cllr?.toFixed(3) ?? '-'} |`,
      );
    }
    if (r.sv.pooledOperatingPoints) {
      lines.push('');
      lines.push(
        `Pooled operating points with that calibration: ${r.sv.pooledOperatingPoints.map((o) => `match_score >= ${o.matchScore}: FAR ${pct(o.far)}, FRR ${pct(o.frr)}`).join('; ')}.`,
      );
    }
    const p = r.sv.pooledWithFittedCalibration;
    const c = r.sv.fittedCalibrationOnTheseTrials;
    lines.push('');
    lines.push(
      `Calibration refitted on these trials (optimistic: same data): a=${c.a.toFixed(3)}, b=${c.b.toFixed(3)}; pooled FAR ${pct(p.far)}, FRR ${pct(p.frr)} at ${threshold}, Cllr ${p.cllr?.toFixed(3)}.`,
    );
    lines.push('');
    const cv = r.sv.crossValidatedOperatingPoint;
    if (cv) {
      lines.push(
        `Held-out operating point (${cv.method}; target FAR <= ${pct(cv.maxFar)} in every block):`,
      );
      lines.push('');
      lines.push('| trials | targets | non-targets | FAR | FRR |');
      lines.push('|---|---:|---:|---:|---:|');
      for (const [k, g] of Object.entries(cv.groups))
        lines.push(`| ${k} | ${g.targets} | ${g.nontargets} | ${pct(g.far)} | ${pct(g.frr)} |`);
      lines.push('');
    }
  }
  if (r.cm) {
    lines.push(
      `Spoof detection: model \`${r.spoofModel.name}\` (sha256 ${r.spoofModel.sha256.slice(0, 12)}...), ${r.cm.trials} clips; score = mean logit of P(bona fide) over the model's windows or segments (\`packages/engine/src/models/spoof.ts\`).`,
    );
    lines.push('');
    lines.push(
      `| subset | bona fide | spoof | EER | FAR at 1% FRR | FAR / FRR at the model threshold (deepfake if P(bona fide) < ${r.cm.defaultThreshold ?? 0.5}) |`,
    );
    lines.push('|---|---:|---:|---:|---:|---:|');
    for (const [k, g] of Object.entries(r.cm.groups)) {
      lines.push(
        `| ${k} | ${g.bonafide} | ${g.spoof} | ${pct(g.eer)} | ${pct(g.farAt1PctFrr)} | ${pct(g.farAtDefault)} / ${pct(g.frrAtDefault)} |`,
      );
    }
    lines.push('');
    if (r.cm.bonafideFlagged) {
      lines.push(
        'Real speech flagged as deepfake at the model threshold, per corpus (corpora with >= 10 bona fide dev clips; the smaller ones pooled):',
      );
      lines.push('');
      lines.push('| corpus | bona fide clips | flagged |');
      lines.push('|---|---:|---:|');
      for (const [c, g] of Object.entries(r.cm.bonafideFlagged))
        lines.push(`| ${c} | ${g.bonafide} | ${pct(g.flagged)} |`);
      lines.push('');
    }
    if (r.cm.bonafideFlaggedAtEnrolment) {
      lines.push(
        `At the enrolment threshold (an enrolment is refused as a deepfake if P(bona fide) < ${r.cm.enrolmentThreshold}), real speech refused per corpus; ${pct(r.cm.spoofAcceptedAtEnrolment)} of the dev spoofs pass that gate:`,
      );
      lines.push('');
      lines.push('| corpus | bona fide clips | refused |');
      lines.push('|---|---:|---:|');
      for (const [c, g] of Object.entries(r.cm.bonafideFlaggedAtEnrolment))
        lines.push(`| ${c} | ${g.bonafide} | ${pct(g.flagged)} |`);
      lines.push('');
    }
  }
  lines.push(
    `${r.clips.total} clips, ${r.clips.failed} failed; ${r.timing.wallSeconds.toFixed(0)} s wall. Command: \`${r.command}\` (${r.date}).`,
  );
  return lines.join('\n');
}

export interface BenchResult {
  command: string;
  date: string;
  machine: {
    cpus: number;
    cpuModel?: string;
    node: string;
    loadAverageAtStart?: number[];
    loadAverageAtEnd?: number[];
    load?: {
      loadAverage1mMax: number;
      machineBusyShare: number;
      machineNiceShare: number;
      wallSeconds: number;
    };
  };
  comparison?: {
    other: string;
    endToEndVerify: Record<
      string,
      { thisMedianMs: number; otherMedianMs: number; medianRatio: number; pairs: number }
    >;
  };
  speakerModel: { name: string; sha256: string };
  spoofModel: { name: string; sha256: string };
  vsSpoofModel?: { name: string; sha256: string };
  vsSpeakerModel?: { name: string; sha256: string };
  vad?: string;
  vsVad?: string;
  runsPerPoint: number;
  stagesMedianMs: Record<string, Record<string, number>>;
  endToEndVerify: Record<string, { medianMs: number; p90Ms: number; rtf: number }>;
  enrol10sMedianMs: number;
  phraseCheck5s?: PhraseCost;
  phraseCheckDigits?: PhraseCost;
  throughput5s: Record<string, number>;
  memory: {
    peakRssMb: number;
    enginePeakRssMb?: number;
    vsEnginePeakRssMb?: number;
    vsEngine?: string;
    rssSamples: { runs: number; rssMb: number }[];
    rssGrowthMbFrom100ToEnd: number;
  };
}

interface PhraseCost {
  withPhraseMs: number;
  withoutPhraseMs: number;
  addedMs: number;
  matched: boolean;
}

export function renderBench(r: BenchResult): string {
  const lines: string[] = [];
  lines.push(
    `Models \`${r.speakerModel.name}\` + \`${r.spoofModel.name}\`; ${r.machine.cpus} cores (${r.machine.cpuModel ?? '?'}), Node ${r.machine.node}; median of ${r.runsPerPoint} runs; ` +
      `load average at start ${r.machine.loadAverageAtStart?.join(' / ') ?? '?'} (training jobs and other test suites share the cores, so absolute numbers are noisy).`,
  );
  lines.push('');
  const load = r.machine.load;
  if (load) {
    lines.push(
      `Machine load during the run (${Math.round(load.wallSeconds)} s): 1-min load average up to ${load.loadAverage1mMax} on ${r.machine.cpus} cores; ` +
        `the cores were busy ${Math.round(load.machineBusyShare * 100)}% of the time, ${Math.round(load.machineNiceShare * 100)}% at nice > 0 (training).`,
    );
    lines.push('');
  }
  lines.push(
    'Per stage in one thread (ms) and end to end through the pool (file bytes -> `verify` decision, 1 worker, one request at a time):',
  );
  lines.push('');
  lines.push(
    '| clip | base64 | decode + resample | VAD | fbank + CMN | speaker model | spoof model | end to end (median / p90 ms) | real-time factor |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const [name, s] of Object.entries(r.stagesMedianMs)) {
    const e = r.endToEndVerify[name]!;
    lines.push(
      `| ${name} | ${f1(s.base64DecodeMs)} | ${f1(s.decodeAndResampleMs)} | ${f1(s.vadMs)} | ${f1(s.fbankMs)} | ${f1(s.embedModelMs)} | ${f1(s.spoofMs)} | ${f1(e.medianMs)} / ${f1(e.p90Ms)} | ${e.rtf.toFixed(4)} |`,
    );
  }
  if (Object.values(r.stagesMedianMs).some((s) => s.vsEmbedModelMs !== undefined)) {
    lines.push('');
    lines.push(
      `The speaker model alone, side by side in this run (one thread, ms): ${Object.entries(
        r.stagesMedianMs,
      )
        .map(
          ([name, s]) =>
            `${name} ${f1(s.embedModelMs)} vs ${f1(s.vsEmbedModelMs)}` +
            (s.embedVsRatio !== undefined ? ` (ratio ${s.embedVsRatio.toFixed(2)})` : ''),
        )
        .join(
          '; ',
        )}, \`${r.speakerModel.name}\` vs \`${r.vsSpeakerModel?.name ?? r.comparison?.other ?? 'other'}\`${Object.values(r.stagesMedianMs).some((s) => s.embedVsRatio !== undefined) ? ', alternating call by call' : ''}.`,
    );
  }
  if (r.vsVad) {
    lines.push('');
    lines.push(
      `Voice activity (Silero VAD) per second of audio, \`${r.vad ?? 'batched'}\` vs \`${r.vsVad}\` alternating call by call (one thread, ms/s): ${Object.entries(
        r.stagesMedianMs,
      )
        .map(
          ([name, s]) =>
            `${name} ${s.vadMsPerAudioSecond!.toFixed(2)} vs ${s.vsVadMsPerAudioSecond!.toFixed(2)} (ratio ${s.vadVsRatio!.toFixed(2)})`,
        )
        .join('; ')}.`,
    );
  }
  if (r.vsSpoofModel) {
    lines.push('');
    lines.push(
      `The spoof check alone (its features, windows or segments, and the model), side by side in this run, alternating call by call (one thread, ms): ${Object.entries(
        r.stagesMedianMs,
      )
        .map(
          ([name, s]) =>
            `${name} ${f1(s.spoofMs)} vs ${f1(s.vsSpoofMs)} with \`${r.vsSpoofModel!.name}\` (ratio ${s.spoofVsRatio?.toFixed(2) ?? '?'})`,
        )
        .join('; ')}.`,
    );
  }
  if (r.comparison) {
    lines.push('');
    lines.push(
      `Side by side in this run, alternating request by request with \`${r.comparison.other}\` (end-to-end verify, medians and the median of the pairwise ratios):`,
    );
    lines.push('');
    lines.push('| clip | this build (ms) | other build (ms) | ratio this / other |');
    lines.push('|---|---:|---:|---:|');
    for (const [name, c] of Object.entries(r.comparison.endToEndVerify))
      lines.push(
        `| ${name} | ${f1(c.thisMedianMs)} | ${f1(c.otherMedianMs)} | ${c.medianRatio.toFixed(2)} |`,
      );
  }
  lines.push('');
  lines.push(
    `Enrolment of a 10 s clip (adds the two half-embeddings): ${f1(r.enrol10sMedianMs)} ms median.`,
  );
  const phrases: [string, PhraseCost][] = [];
  if (r.phraseCheck5s) phrases.push(['a 5 s free sentence', r.phraseCheck5s]);
  if (r.phraseCheckDigits) phrases.push(['a digit challenge', r.phraseCheckDigits]);
  if (phrases.length)
    lines.push(
      `Phrase check (issue 32), a verification with and without it, side by side: ${phrases
        .map(
          ([what, p]) =>
            `${what} ${f1(p.withPhraseMs)} vs ${f1(p.withoutPhraseMs)} ms (+${f1(p.addedMs)} ms${p.matched ? '' : ', not matched'})`,
        )
        .join('; ')}.`,
    );
  lines.push(
    `Throughput, burst of 5 s verifications: ${Object.entries(r.throughput5s)
      .map(([k, v]) => `${k} ${v.toFixed(1)}`)
      .join('; ')}.`,
  );
  const s = r.memory.rssSamples;
  if (r.memory.enginePeakRssMb !== undefined)
    lines.push(
      `Peak RSS of a process holding one 2-worker engine (every model it loads, in both workers) after 40 verifications: ${r.memory.enginePeakRssMb} MB` +
        (r.memory.vsEnginePeakRssMb !== undefined
          ? ` vs ${r.memory.vsEnginePeakRssMb} MB with ${r.memory.vsEngine} (${r.memory.enginePeakRssMb - r.memory.vsEnginePeakRssMb >= 0 ? '+' : ''}${(r.memory.enginePeakRssMb - r.memory.vsEnginePeakRssMb).toFixed(1)} MB).`
          : '.'),
    );
  lines.push(
    `Memory (this bench process's RSS, includes the worker threads): peak ${r.memory.peakRssMb} MB; ${s.map((x) => `${x.rssMb} MB after ${x.runs}`).join(', ')} runs ` +
      `(growth from 100 runs to the end: ${r.memory.rssGrowthMbFrom100ToEnd} MB).`,
  );
  lines.push('');
  lines.push(`Command: \`${r.command}\` (${r.date}).`);
  return lines.join('\n');
}
