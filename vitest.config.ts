import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 300_000,
    reporters: ['default'],
    projects: [
      // Unit tests touch no broker and no container: their files run side by side, first.
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], sequence: { groupOrder: 0 } } },
      // Integration tests share one broker and a 2-core machine: their files run one at a time,
      // after the unit tests, so measurements do not disturb each other.
      { extends: true, test: { name: 'integration', include: ['test/integration/**/*.test.ts'], fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
