import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One real PostgreSQL server for the run (initdb in a temp dir, a free port, stopped afterwards).
    globalSetup: ['test/postgres/global-setup.ts'],
    testTimeout: 30_000,
    // The claude launcher asks a daemon by default; tests that start it say so (test/adapters/claude-daemon.test.ts), so no other leaves one running.
    env: { HOOKLEDGER_DAEMON: 'off' },
    hookTimeout: 30_000,
    // Tests spawn real processes and open real SQLite files; two workers suit the 2-core machines.
    pool: 'forks',
    maxWorkers: 2,
  },
});
