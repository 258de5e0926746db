import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';

/** A CSV file (RFC 4180: quoted fields may hold commas, quotes and line breaks) as rows keyed by its header. */
export function readCsv(path: string): Record<string, string>[] {
  return parse(readFileSync(path, 'utf8'), {
    columns: true,
    skip_empty_lines: true,
  }) as Record<string, string>[];
}
