import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Spawned CLIs and sandboxes per file: two cores, keep parallelism modest.
    maxWorkers: 2,
  },
});
