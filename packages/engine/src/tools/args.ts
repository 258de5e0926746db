import { isAbsolute, resolve } from 'node:path';
import { Command } from 'commander';

export interface ToolSpec {
  /** The npm script that runs the tool, for the usage line (e.g. `npm run eval --`). */
  name: string;
  description: string;
  /** commander flags (`'sv <trials.csv>'`, `'no-cache'`) -> help text. */
  options: Record<string, string>;
}

/**
 * Parses a development tool's options with commander (`--help` included; an unknown option or a
 * missing value exits 2). Values come back under their kebab-case names, flags as `true`.
 */
export function parseArgs(argv: string[], spec: ToolSpec): Record<string, string | true> {
  const program = new Command(spec.name)
    .description(spec.description)
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));
  for (const [flags, help] of Object.entries(spec.options)) program.option(`--${flags}`, help);
  const values = program.parse(argv, { from: 'user' }).opts<Record<string, string | boolean>>();
  const out: Record<string, string | true> = {};
  for (const option of program.options) {
    const value = values[option.attributeName()];
    const name = option.long!.slice(2);
    if (option.negate) {
      if (value === false) out[name] = true;
    } else if (value !== undefined && value !== false) out[name] = value;
  }
  return out;
}

export function userPath(p: string): string {
  return isAbsolute(p) ? p : resolve(process.env.INIT_CWD ?? process.cwd(), p);
}

export function num(v: string | true | undefined, fallback: number): number {
  return typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))
    ? Number(v)
    : fallback;
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export const percentile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};

/**
 * Two functions timed in alternation (the machine is noisy): medians, and the medians of the per-pair ratios a/b
 * and differences a - b.
 */
export async function timePaired(
  runs: number,
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
): Promise<{ aMs: number; bMs: number; ratio: number; differenceMs: number }> {
  await a();
  await b();
  const ta: number[] = [];
  const tb: number[] = [];
  const ratios: number[] = [];
  const differences: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t1 = performance.now();
    await a();
    const t2 = performance.now();
    await b();
    const t3 = performance.now();
    ta.push(t2 - t1);
    tb.push(t3 - t2);
    ratios.push((t2 - t1) / (t3 - t2));
    differences.push(t2 - t1 - (t3 - t2));
  }
  return {
    aMs: median(ta),
    bMs: median(tb),
    ratio: median(ratios),
    differenceMs: median(differences),
  };
}
