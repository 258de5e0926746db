import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The top-level folder of src/ each relative import of the file lands in. */
function importedFolders(file: string): Array<{ specifier: string; folder: string }> {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/g), ...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1]!);
  return specifiers
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => {
      const target = path.relative(SRC, path.resolve(path.dirname(file), specifier));
      return { specifier, folder: target.split(path.sep)[0]! };
    });
}

function violations(layer: string, forbidden: string[]): string[] {
  return sourceFiles(path.join(SRC, layer)).flatMap((file) =>
    importedFolders(file)
      .filter(({ folder }) => forbidden.includes(folder))
      .map(({ specifier }) => `${path.relative(SRC, file)} imports ${specifier}`),
  );
}

describe('layers', () => {
  it('finds the imports it is meant to police', () => {
    expect(importedFolders(path.join(SRC, 'app.ts')).map((i) => i.folder)).toEqual(expect.arrayContaining(['http', 'routes']));
  });

  it.each(['repositories', 'security', 'workers', 'services'])('nothing in %s/ imports http/ or routes/', (layer) => {
    expect(violations(layer, ['http', 'routes'])).toEqual([]);
  });

  it('repositories import no layer above them', () => {
    expect(violations('repositories', ['services', 'workers', 'security', 'http', 'routes'])).toEqual([]);
  });

  it('security/ and workers/ do not reach into the request side', () => {
    expect(violations('security', ['services', 'workers'])).toEqual([]);
    expect(violations('workers', ['services'])).toEqual([]);
  });
});
