import { readFileSync } from 'node:fs';

/** A plain CSV (no quoted commas, as the data set's lists are) as rows keyed by the header. */
export function readCsv(path: string): Record<string, string>[] {
  const [header, ...lines] = readFileSync(path, 'utf8').trim().split(/\r?\n/);
  const cols = header!.split(',');
  return lines.map((l) => {
    const v = l.split(',');
    return Object.fromEntries(cols.map((c, i) => [c, v[i] ?? '']));
  });
}
