import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // the suite must pass while another runs beside it on two cores: a parse of 2,445 items took 5 s at load 17
          testTimeout: 20_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/backends/global-setup.ts'],
          // one file at a time: the fault tests measure heal times on a 2-core machine, and the
          // servers they share would otherwise be loaded by the other files (no slower overall)
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
