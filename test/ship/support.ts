import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { connectPostgres } from '../../src/ledger/postgres/open.js';
import { verifyPostgres, type PostgresVerifyReport } from '../../src/ledger/postgres/verify.js';
import { tsxLoader } from '../cli-helpers.js';

const writerScript = join(import.meta.dirname, '../fixtures/scripts/ship-writer.ts');

/** Runs the real writer fixture: `count` invocations recorded into the SQLite ledger at `path`. */
export function startWriter(path: string, count: number, tag: string) {
  const child = spawn(process.execPath, ['--import', tsxLoader, writerScript, path, String(count), tag], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    done: exited.then((code) => {
      if (code !== 0) throw new Error(`writer exited ${code}: ${stderr}`);
    }),
  };
}

export const writeLedger = (path: string, count: number, tag: string) => startWriter(path, count, tag).done;

/** The central ledger's verify (the library function `verify --db postgres://…` runs). */
export async function verifyCentre(url: string): Promise<PostgresVerifyReport> {
  const connection = await connectPostgres({ url, readonly: true, poolSize: 2 });
  try {
    return await verifyPostgres(connection.pool, connection.displayUrl);
  } finally {
    await connection.close();
  }
}
