import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    // Integration tests share one broker and a 2-core machine: run files one at a time so
    // measurements do not disturb each other.
    fileParallelism: false,
    reporters: ['default'],
  },
});
