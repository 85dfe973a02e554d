import type { TestProject } from 'vitest/node';
import { PostgresServer } from '../../scripts/postgres-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the PostgreSQL server the tests share (its `postgres` database). */
    postgresAdminUrl: string;
    /** That server's data directory. */
    postgresDataDir: string;
  }
}

/**
 * Starts one real PostgreSQL server for the whole run (test/postgres/support.ts gives each test
 * its own database on it) and stops it afterwards. With no server binaries this fails the run
 * with one line saying how to get them: PostgreSQL tests are never skipped.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let server: PostgresServer;
  try {
    server = await PostgresServer.start();
  } catch (error) {
    // One line, not a stack: the message says what to install.
    const failure = new Error(error instanceof Error ? error.message : String(error));
    failure.stack = failure.message;
    throw failure;
  }
  project.provide('postgresAdminUrl', server.url());
  project.provide('postgresDataDir', server.dataDir);
  return () => server.stop();
}
