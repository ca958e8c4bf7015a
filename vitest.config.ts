import { configDefaults, defineConfig } from 'vitest/config';

// Integration files whose assertions read no measured rate, latency or timing bound and no state
// another file changes (no global cleanup, no container counts, no flags on the shared local
// broker): they run two at a time. Their brokers' host ports are claimed across processes
// (src/broker/ports.ts), so two boots at once cannot collide. Every other integration file
// reads a rate, a verdict or a timing, and runs alone on a machine the suite leaves quiet.
const PAIRED = [
  'baseline-trust',
  'bisect-cli-input',
  'cli',
  'cli-package',
  'faults-action',
  'generator-wire',
  'github-refresh',
  'github-shard',
  'github-workflows',
  'github-workflows-lint',
  'image-env',
  'node-start',
  'release',
  'targets-action',
  'vhost-config',
].map((f) => `test/integration/${f}.test.ts`);

export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 300_000,
    reporters: ['default'],
    projects: [
      // Unit tests touch no broker and no container: their files run side by side, first.
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], maxWorkers: 2, sequence: { groupOrder: 0 } } },
      // Then the integration files that tolerate a neighbour, two at a time (a boot shares the
      // cores with another file's, so they get twice the time before a timeout says it hung).
      {
        extends: true,
        test: { name: 'integration-paired', include: PAIRED, maxWorkers: 2, testTimeout: 240_000, sequence: { groupOrder: 1 } },
      },
      // Last, one at a time, the files that measure: nothing else in the suite runs beside them.
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...PAIRED],
          fileParallelism: false,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
