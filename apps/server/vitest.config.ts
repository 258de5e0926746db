import { defineConfig } from 'vitest/config';

// The hostile run loads the whole machine for ~30 s; it runs after every other file (its own group)
// so that timing comparisons elsewhere (fairness: busy vs idle p95) never share the CPU with it.
const HOSTILE_RUN = 'test/e2e/hostile-run.test.ts';

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'server',
          include: ['test/**/*.test.ts'],
          exclude: [HOSTILE_RUN],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'hostile-run', include: [HOSTILE_RUN], sequence: { groupOrder: 1 } },
      },
    ],
  },
});
