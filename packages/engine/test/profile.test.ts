import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageOf, summariseProfiles } from '../src/tools/profile.js';

describe('CPU profile summary (bench --profile)', () => {
  it('splits sampled time into engine stages and top self-time functions', () => {
    const dir = mkdtempSync(join(tmpdir(), 'voxkey-profile-'));
    const frame = (functionName: string, url = 'file:///x/chunk.js') => ({
      functionName,
      url,
      lineNumber: 0,
      columnNumber: 0,
      scriptId: '1',
    });
    const profile = {
      nodes: [
        { id: 1, callFrame: frame('(root)', ''), children: [2, 5, 6] },
        { id: 2, callFrame: frame('analyse'), children: [3] },
        { id: 3, callFrame: frame('fbank'), children: [4] },
        { id: 4, callFrame: frame('powerSpectrum') },
        { id: 5, callFrame: frame('', 'file:///n/node_modules/onnxruntime-node/dist/backend.js') },
        { id: 6, callFrame: frame('(idle)', '') },
      ],
      samples: [4, 4, 3, 5, 5, 5, 6],
      timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000, 4000],
      startTime: 0,
      endTime: 10_000,
    };
    writeFileSync(join(dir, 'CPU.20261125.060728.123.0.001.cpuprofile'), JSON.stringify(profile));
    const [s] = summariseProfiles(dir);
    expect(s).toMatchObject({ thread: 'main', wallMs: 10, sampledMs: 10, idleMs: 4 });
    expect(s!.stagesMs).toEqual({ fbank: 3, 'onnxruntime inference (native, all models)': 3 });
    expect(s!.topSelf[0]).toMatchObject({ ms: 3, share: 0.5 });
    expect(s!.byPackage).toEqual(
      expect.arrayContaining([
        { pkg: 'onnxruntime-node', ms: 3, share: 0.5 },
        { pkg: 'file:///x/chunk.js', ms: 3, share: 0.5 },
      ]),
    );
    expect(s!.byPackage).toHaveLength(2);
    expect(s!.topSelf.map((t) => t.fn.split(' ')[0])).toEqual([
      '(anonymous)',
      'powerSpectrum',
      'fbank',
    ]);
  });

  it('groups self time by package', () => {
    expect(packageOf('file:///r/node_modules/@hono/node-server/dist/index.mjs')).toBe(
      '@hono/node-server',
    );
    expect(packageOf('file:///r/node_modules/.pnpm/x/node_modules/kysely/dist/esm/kysely.js')).toBe(
      'kysely',
    );
    expect(packageOf('file:///r/apps/server/dist/main.js')).toBe('voxkey server');
    expect(packageOf('node:internal/streams/writable')).toBe('node internals');
    expect(packageOf('')).toBe('(native)');
  });
});
