import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FAMILIES } from '../src/tools/families-data.js';
import { familyOf } from '../src/tools/families.js';

const TRAINING = fileURLToPath(new URL('../../../training', import.meta.url));
const JSON_PATH = `${TRAINING}/voxkey_train/families.json`;
const attacksOf = (families: Record<string, { attacks: string[] }>) =>
  Object.fromEntries(Object.entries(families).map(([name, family]) => [name, family.attacks]));
const hasPython = spawnSync('python3', ['--version']).status === 0;

describe('spoof attack families: one list for training and eval', () => {
  const fromJson = attacksOf(JSON.parse(readFileSync(JSON_PATH, 'utf8')).families);

  it('the engine has the families of training/voxkey_train/families.json, in its order', () => {
    expect(Object.keys(FAMILIES)).toEqual(Object.keys(fromJson));
    expect(FAMILIES).toEqual(fromJson);
  });

  it('src/tools/families-data.ts is what the generator writes from the JSON', () => {
    expect(() =>
      execFileSync(
        process.execPath,
        [fileURLToPath(new URL('../scripts/generate-families.mjs', import.meta.url)), '--check'],
        { stdio: 'pipe' },
      ),
    ).not.toThrow();
  });

  it.skipIf(!hasPython)('training/voxkey_train/families.py reads the same families', () => {
    const printed = execFileSync(
      'python3',
      [
        '-c',
        'import json; from voxkey_train.families import FAMILIES; print(json.dumps(FAMILIES))',
      ],
      { cwd: TRAINING, encoding: 'utf8' },
    );
    expect(JSON.parse(printed)).toEqual(fromJson);
  });

  it("familyOf names an attack's family, `other` for an unknown one", () => {
    expect(familyOf('lpcnet')).toBe('gen:lpcnet');
    expect(familyOf('festival')).toBe('heldout:festival');
    expect(familyOf('no-such-attack')).toBe('other');
  });
});
